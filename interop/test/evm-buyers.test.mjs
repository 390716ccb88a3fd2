// Real buyers pay payability on Base: the official x402 v2 client
// (@x402/fetch with the @x402/evm exact client) and the v1 client
// (x402-fetch on base-sepolia) read the 402 challenge of a real
// `payability serve --evm-pay-to`, sign an EIP-3009 authorization with a
// throwaway local key, and get a signed report they can verify.
// payability forwards each payment to the test facilitator (which recovers
// the signature under USDC's EIP-712 domain) and, with --evm-rpc, releases
// the report only once the fake node shows the USDC transfer to us.
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment as wrapFetchV1, createSigner, decodeXPaymentResponse } from "x402-fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

import { USDC_MAINNET, associatedTokenAccount, close, keypair, listen, startRpc } from "../lib/solana.mjs";
import { BASE, USDC_BASE, USDC_BASE_SEPOLIA, startEvmRpc } from "../lib/evm.mjs";
import { startFacilitator } from "../lib/facilitator.mjs";
import { build, cli, serve } from "../lib/payability.mjs";

let bin, rpc, evmRpc, fac, target, workDir;
const services = [];
const payee = keypair();
const feePayer = keypair();
const buyerKey = generatePrivateKey(); // throwaway: nothing leaves loopback
const buyer = privateKeyToAccount(buyerKey);
const evmPayee = privateKeyToAccount(generatePrivateKey()).address;

// startServe runs serve with the Solana facilitator rail and the EVM entry
// on network; resolves to {url, dataDir}.
async function startServe(network) {
  const dataDir = await mkdtemp(path.join(tmpdir(), "payability-interop-evm-data-"));
  const svc = await serve(bin.bin, [
    "--rates-url", "",
    "--data-dir", dataDir,
    "--allow-private-targets",
    "--pay-to", payee.address,
    "--token-account", await associatedTokenAccount(payee.address, USDC_MAINNET),
    "--facilitator", fac.url,
    "--evm-pay-to", evmPayee,
    "--evm-network", network,
    "--evm-rpc", evmRpc.url,
  ]);
  services.push({ svc, dataDir });
  return { url: svc.url, dataDir };
}

let base, sepolia;

before(async () => {
  bin = await build();
  rpc = await startRpc();
  evmRpc = await startEvmRpc();
  fac = await startFacilitator({ feePayer: feePayer.address, rpc, evmRpc });
  target = http.createServer((req, res) => {
    res.writeHead(402, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ x402Version: 1, accepts: [{ scheme: "exact", network: "base", maxAmountRequired: "1000" }] }));
  });
  target.url = await listen(target);
  workDir = await mkdtemp(path.join(tmpdir(), "payability-interop-evm-work-"));
  base = await startServe("eip155:8453");
  sepolia = await startServe("eip155:84532");
});

after(async () => {
  for (const { svc, dataDir } of services) {
    await svc.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  await fac?.close();
  await evmRpc?.close();
  await rpc?.close();
  if (target) await close(target);
  await bin?.cleanup();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

const paidPost = (fetchImpl, url, route) =>
  fetchImpl(`${url}${route}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url: target.url }),
  });

async function verifyReport(svcURL, text, name) {
  const file = path.join(workDir, `${name}.json`);
  await writeFile(file, text);
  const r = await cli(bin.bin, "verify", file, "--jwks", `${svcURL}/.well-known/jwks.json`);
  assert.equal(r.code, 0, `payability verify: ${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /VERIFIED/);
}

const lastSettle = () => fac.callsTo("/settle").at(-1).body;

test("the v2 client (@x402/fetch + @x402/evm) holding only Base USDC pays a check once, and the report verifies", async () => {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer));
  const pay = wrapFetchWithPayment(fetch, client);
  const settles = fac.callsTo("/settle").length;
  const res = await paidPost(pay, base.url, "/toll/payability/check");
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const report = JSON.parse(text);
  assert.equal(report.payment.rail, "facilitator");
  assert.equal(report.payment.network, BASE, "the report names the chain its transaction is on");
  assert.match(report.payment.tx, /^0x[0-9a-f]{64}$/);
  const receipt = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(receipt.transaction, report.payment.tx);
  assert.equal(receipt.network, BASE);
  await verifyReport(base.url, text, "evm-v2-check");

  // One settle, with OUR requirements: Base USDC, its EIP-712 domain, the
  // price, our payee; the buyer signed an authorization to exactly that.
  assert.equal(fac.callsTo("/settle").length, settles + 1);
  const { x402Version, paymentPayload, paymentRequirements: req } = lastSettle();
  assert.equal(x402Version, 2);
  assert.deepEqual(
    { network: req.network, asset: req.asset, amount: req.amount, payTo: req.payTo, name: req.extra.name, version: req.extra.version },
    { network: BASE, asset: USDC_BASE, amount: "10000", payTo: evmPayee, name: "USD Coin", version: "2" },
  );
  assert.equal(paymentPayload.payload.authorization.from, buyer.address);
  assert.equal(paymentPayload.payload.authorization.value, "10000");
  assert.ok(evmRpc.lookups.includes(report.payment.tx), "with --evm-rpc, payability read the settled transaction's receipt");

  // The ledger records the payment on Base with its transaction hash.
  const day = new Date().toISOString().slice(0, 10);
  const exp = await cli(bin.bin, "ledger", "export", "--data-dir", base.dataDir, "--from", day, "--to", day, "--format", "json");
  assert.equal(exp.code, 0, exp.stderr);
  const rows = JSON.parse(exp.stdout);
  const row = (Array.isArray(rows) ? rows : rows.rows).find((r) => r.payment_tx === report.payment.tx);
  assert.equal(row?.payment_network, BASE);
  assert.equal(row?.payer_wallet, buyer.address);
});

test("the same EVM payment presented again is refused and not settled again", async () => {
  const { paymentPayload } = lastSettle();
  const header = Buffer.from(JSON.stringify(paymentPayload)).toString("base64");
  const settles = fac.callsTo("/settle").length;
  const res = await fetch(`${base.url}/toll/payability/check`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "PAYMENT-SIGNATURE": header },
    body: JSON.stringify({ url: target.url }),
  });
  assert.equal(res.status, 402);
  assert.equal((await res.json()).error, "payment_already_used");
  assert.equal(fac.callsTo("/settle").length, settles);
});

test("the v1 client (x402-fetch) pays a probe on base-sepolia, and the report verifies", async () => {
  const signer = await createSigner("base-sepolia", buyerKey);
  const res = await paidPost(wrapFetchV1(fetch, signer), sepolia.url, "/toll/rail-probe/probe");
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const report = JSON.parse(text);
  assert.equal(report.price.usdc_units, "20000");
  const receipt = decodeXPaymentResponse(res.headers.get("X-PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(receipt.transaction, report.payment.tx);
  assert.equal(receipt.network, "base-sepolia");
  assert.equal(report.payment.network, "eip155:84532", "the report names the chain by CAIP-2 whatever the buyer's dialect");
  await verifyReport(sepolia.url, text, "evm-v1-probe");
  const { x402Version, paymentRequirements: req } = lastSettle();
  assert.equal(x402Version, 1);
  assert.deepEqual(
    { network: req.network, asset: req.asset, max: req.maxAmountRequired, payTo: req.payTo, name: req.extra.name },
    { network: "base-sepolia", asset: USDC_BASE_SEPOLIA, max: "20000", payTo: evmPayee, name: "USDC" },
  );
});

test("the test facilitator really checks the EVM signature against the requirements", async () => {
  const { checkEvm } = await import("../lib/evm.mjs");
  const { x402Version, paymentPayload, paymentRequirements } = lastSettle();
  const alter = (change) => checkEvm(x402Version, paymentPayload, { ...paymentRequirements, ...change });
  assert.ok((await alter({})).payer, "the settled payment verifies");
  assert.equal((await alter({ maxAmountRequired: "19999" })).reason, "invalid_exact_evm_payload_authorization_value");
  assert.equal((await alter({ payTo: buyer.address })).reason, "invalid_exact_evm_payload_recipient_mismatch");
  assert.equal((await alter({ asset: USDC_BASE })).reason, "invalid_exact_evm_payload_signature", "another token contract is another EIP-712 domain");
  assert.equal((await alter({ extra: { ...paymentRequirements.extra, name: "USD Coin" } })).reason, "invalid_exact_evm_payload_signature");
});

// x402-preflight on Base: the buyer that holds only Base USDC buys the
// third service's answers (issue 25's done-when), each paid and settled once.
for (const [route, name, price, check] of [
  ["/toll/x402/preflight", "preflight", "20000", (r) => {
    assert.equal(r.document, "x402-preflight/v1");
    assert.ok(["GO", "HOLD", "STOP"].includes(r.decision), r.decision);
  }],
  ["/toll/x402/lint", "lint", "10000", (r) => {
    assert.equal(r.rules.id, "x402-lint/v1");
    assert.equal(typeof r.conforms, "boolean");
  }],
]) {
  test(`the v2 client holding only Base USDC buys a signed ${name} once, and payability verify accepts it`, async () => {
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer));
    const settles = fac.callsTo("/settle").length;
    const res = await paidPost(wrapFetchWithPayment(fetch, client), base.url, route);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const rep = JSON.parse(text);
    assert.equal(rep.op, name);
    check(rep);
    assert.equal(rep.price.usdc_units, price);
    assert.match(rep.payment.tx, /^0x[0-9a-f]{64}$/);
    assert.equal(rep.payment.network, BASE);
    const receipt = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE"));
    assert.equal(receipt.network, BASE);
    assert.equal(receipt.transaction, rep.payment.tx);
    await verifyReport(base.url, text, `evm-v2-${name}`);
    assert.equal(fac.callsTo("/settle").length, settles + 1, "paid once, settled once");
    const { paymentRequirements: req } = lastSettle();
    assert.deepEqual({ network: req.network, amount: req.amount, payTo: req.payTo }, { network: BASE, amount: price, payTo: evmPayee });

    // The same payload again: refused, not settled again.
    const header = Buffer.from(JSON.stringify(lastSettle().paymentPayload)).toString("base64");
    const again = await fetch(`${base.url}${route}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "PAYMENT-SIGNATURE": header },
      body: JSON.stringify({ url: target.url }),
    });
    assert.equal(again.status, 402);
    assert.equal((await again.json()).error, "payment_already_used");
    assert.equal(fac.callsTo("/settle").length, settles + 1);
  });
}

test("our own check, memo and probe still grade our service POPULATED, BOUND and PRESENT-FAIL-CLOSED with the EVM entry", async () => {
  for (const route of ["/toll/payability/check", "/toll/rail-probe/probe"]) {
    const url = `${base.url}${route}`;
    for (const [op, field, want] of [["check", "state", "POPULATED"], ["memo", "state", "BOUND"]]) {
      const r = await cli(bin.bin, op, "--json", "--allow-private", url);
      assert.equal(JSON.parse(r.stdout)[field], want, `${op} ${route}`);
    }
    const probe = JSON.parse((await cli(bin.bin, "probe", "--json", "--allow-private", url)).stdout);
    assert.equal(probe.grades.direct.grade, "PRESENT-FAIL-CLOSED", route);
    assert.equal(probe.grades.facilitator.grade, "PRESENT-FAIL-CLOSED", route);
    assert.deepEqual(probe.exposures, [], route);
  }
});
