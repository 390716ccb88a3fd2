// Real buyers pay payability: the official x402 v2 client (@x402/fetch with
// @x402/svm) and the v1 client (x402-fetch) read the 402 challenge of a
// real `payability serve`, build their Solana payment, and get a signed
// report they can verify. payability forwards each payment to a facilitator
// written for the test, which checks the transaction the client built.
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { wrapFetchWithPayment as wrapFetchV1, createSigner, decodeXPaymentResponse } from "x402-fetch";

import { SOLANA_MAINNET, USDC_DEVNET, USDC_MAINNET, associatedTokenAccount, close, keypair, listen, readTransaction, startRpc } from "../lib/solana.mjs";
import { check, startFacilitator } from "../lib/facilitator.mjs";
import { build, cli, cliJSON, serve } from "../lib/payability.mjs";

let bin, rpc, fac, svc, target, dataDir, workDir;
const buyer = keypair();
const payee = keypair();
const feePayer = keypair();
let tokenAccount;

before(async () => {
  bin = await build();
  rpc = await startRpc();
  fac = await startFacilitator({ feePayer: feePayer.address, rpc });
  // The seller a paid check grades: a loopback endpoint answering a v1 challenge.
  target = http.createServer((req, res) => {
    res.writeHead(402, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ x402Version: 1, accepts: [{ scheme: "exact", network: "solana", maxAmountRequired: "1000" }] }));
  });
  target.url = await listen(target);
  tokenAccount = await associatedTokenAccount(payee.address, USDC_MAINNET);
  dataDir = await mkdtemp(path.join(tmpdir(), "payability-interop-data-"));
  workDir = await mkdtemp(path.join(tmpdir(), "payability-interop-work-"));
  svc = await serve(bin.bin, [
    "--rates-url", "", // no CAD backfill: nothing may leave loopback
    "--data-dir", dataDir,
    "--allow-private-targets",
    "--pay-to", payee.address,
    "--token-account", tokenAccount,
    "--solana-rpc", rpc.url,
    "--facilitator", fac.url,
  ]);
});

after(async () => {
  await svc?.stop();
  await fac?.close();
  await rpc?.close();
  if (target) await close(target);
  await bin?.cleanup();
  for (const d of [dataDir, workDir]) if (d) await rm(d, { recursive: true, force: true });
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

const paidPost = (fetchImpl, route, url) =>
  fetchImpl(`${svc.url}${route}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url }),
  });

// verifyReport checks the report with `payability verify` against the served JWKS.
async function verifyReport(text, name) {
  const file = path.join(workDir, `${name}.json`);
  await writeFile(file, text);
  const r = await cli(bin.bin, "verify", file, "--jwks", `${svc.url}/.well-known/jwks.json`);
  assert.equal(r.code, 0, `payability verify: ${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /VERIFIED/);
}

// The requirements payability forwarded for the last settlement.
const lastSettle = () => fac.callsTo("/settle").at(-1).body;

// assertReplayRefused presents the last settled v2 payload to route again:
// refused as spent, and not settled again.
async function assertReplayRefused(route) {
  const header = Buffer.from(JSON.stringify(lastSettle().paymentPayload)).toString("base64");
  const settles = fac.callsTo("/settle").length;
  const res = await fetch(`${svc.url}${route}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "PAYMENT-SIGNATURE": header },
    body: JSON.stringify({ url: target.url }),
  });
  assert.equal(res.status, 402);
  assert.equal((await res.json()).error, "payment_already_used");
  assert.equal(fac.callsTo("/settle").length, settles);
}

test("the v2 client (@x402/fetch + @x402/svm) pays a check and gets a verifiable report", async () => {
  const client = new x402Client().register("solana:*", new ExactSvmScheme(await buyer.signer(), { rpcUrl: rpc.url }));
  const pay = wrapFetchWithPayment(fetch, client);
  const before = fac.callsTo("/settle").length;
  const res = await paidPost(pay, "/toll/payability/check", target.url);
  const text = await res.text();
  assert.equal(res.status, 200, text);

  const report = JSON.parse(text);
  assert.equal(report.payment.rail, "facilitator");
  assert.equal(report.state, "HEADER-MISSING");
  assert.equal(report.price.usdc_units, "10000");
  const receipt = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(receipt.transaction, report.payment.tx);
  assert.equal(receipt.network, SOLANA_MAINNET);
  await verifyReport(text, "v2-check");

  // One verify, one settle, with OUR requirements; the client's transaction
  // carries the challenge memo the requirements name.
  assert.equal(fac.callsTo("/settle").length, before + 1);
  const { x402Version, paymentPayload, paymentRequirements: req } = lastSettle();
  assert.equal(x402Version, 2);
  assert.deepEqual(
    { scheme: req.scheme, network: req.network, asset: req.asset, amount: req.amount, payTo: req.payTo, feePayer: req.extra.feePayer },
    { scheme: "exact", network: SOLANA_MAINNET, asset: USDC_MAINNET, amount: "10000", payTo: payee.address, feePayer: feePayer.address },
  );
  assert.match(req.extra.memo, /^pv-/);
  assert.equal(paymentPayload.accepted.extra.memo, req.extra.memo, "the client echoed the memo it was given");
  const memos = readTransaction(paymentPayload.payload.transaction).instructions.filter((ix) => ix.program.startsWith("Memo"));
  assert.equal(Buffer.from(memos[0].data).toString(), req.extra.memo);
  assert.ok(rpc.methods.includes("getLatestBlockhash") && rpc.methods.includes("getAccountInfo"), "the client's RPC calls went to the local node");
  assert.ok(rpc.lookups.includes(report.payment.tx), "with --solana-rpc, payability checked the settled transaction on chain (its credit and fee)");
});

test("the test facilitator really checks the transaction against the requirements", async () => {
  const { x402Version, paymentPayload, paymentRequirements } = lastSettle();
  const alter = (change) => check(x402Version, paymentPayload, { ...paymentRequirements, ...change }, feePayer.address);
  assert.ok((await alter({})).payer, "the settled payment verifies");
  assert.equal((await alter({ amount: "9999" })).reason, "invalid_exact_svm_payload_amount_mismatch");
  assert.equal((await alter({ payTo: buyer.address })).reason, "invalid_exact_svm_payload_recipient_mismatch");
  assert.equal((await alter({ asset: USDC_DEVNET })).reason, "invalid_exact_svm_payload_mint_mismatch");
  assert.equal((await alter({ extra: { ...paymentRequirements.extra, memo: "pv-other" } })).reason, "invalid_exact_svm_payload_memo_mismatch");
  assert.equal((await alter({ extra: { ...paymentRequirements.extra, feePayer: buyer.address } })).reason, "invalid_exact_svm_payload_missing_fee_payer");
});

test("the same v2 payment presented again is refused and not settled again", async () => {
  await assertReplayRefused("/toll/payability/check");
});

test("the v1 client (x402-fetch) pays a probe and gets a verifiable report", async () => {
  const signer = await createSigner("solana", buyer.secret);
  const pay = wrapFetchV1(fetch, signer, undefined, undefined, { svmConfig: { rpcUrl: rpc.url } });
  const res = await paidPost(pay, "/toll/rail-probe/probe", target.url);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const report = JSON.parse(text);
  assert.equal(report.payment.rail, "facilitator");
  assert.equal(report.price.usdc_units, "20000");
  const receipt = decodeXPaymentResponse(res.headers.get("X-PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(receipt.transaction, report.payment.tx);
  assert.equal(res.headers.get("PAYMENT-RESPONSE"), null);
  await verifyReport(text, "v1-probe");

  // v1: requirements without a memo (the v1 client builds none).
  const { x402Version, paymentRequirements: req } = lastSettle();
  assert.equal(x402Version, 1);
  assert.equal(req.network, "solana");
  assert.equal(req.maxAmountRequired, "20000");
  assert.equal(req.payTo, payee.address);
  assert.equal(req.extra.memo, undefined);
});

// x402-preflight (issue 25): the same real buyers buy the third service's
// answers, a signed preflight record and a signed lint report of a seller.
test("the v2 client (@x402/fetch + @x402/svm) buys a signed preflight record once, and payability verify accepts it", async () => {
  const client = new x402Client().register("solana:*", new ExactSvmScheme(await buyer.signer(), { rpcUrl: rpc.url }));
  const pay = wrapFetchWithPayment(fetch, client);
  const settles = fac.callsTo("/settle").length;
  const res = await pay(`${svc.url}/toll/x402/preflight`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url: target.url, method: "GET", max_amount: "5000" }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const record = JSON.parse(text);
  assert.equal(record.document, "x402-preflight/v1");
  assert.equal(record.op, "preflight");
  assert.equal(record.url, target.url);
  assert.ok(["GO", "HOLD", "STOP"].includes(record.decision), record.decision);
  assert.equal(record.payment.rail, "facilitator");
  assert.match(record.payment.network, /^solana:/);
  assert.equal(record.price.usdc_units, "20000");
  assert.equal(decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE")).transaction, record.payment.tx);
  await verifyReport(text, "v2-preflight");
  assert.equal(fac.callsTo("/settle").length, settles + 1, "paid once, settled once");
  assert.equal(lastSettle().paymentRequirements.amount, "20000");

  await assertReplayRefused("/toll/x402/preflight");
});

test("the v2 client buys a signed lint report once, and payability verify accepts it", async () => {
  const client = new x402Client().register("solana:*", new ExactSvmScheme(await buyer.signer(), { rpcUrl: rpc.url }));
  const settles = fac.callsTo("/settle").length;
  const res = await wrapFetchWithPayment(fetch, client)(`${svc.url}/toll/x402/lint`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url: target.url }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const rep = JSON.parse(text);
  assert.equal(rep.op, "lint");
  assert.equal(rep.rules.id, "x402-lint/v1");
  assert.equal(rep.status, 402);
  assert.equal(typeof rep.conforms, "boolean");
  assert.equal(rep.price.usdc_units, "10000");
  await verifyReport(text, "v2-lint");
  assert.equal(fac.callsTo("/settle").length, settles + 1);
  assert.equal(lastSettle().paymentRequirements.amount, "10000");
});

test("the v2 client against a facilitator that refuses gets a 402 with a reason, no report", async () => {
  fac.mode = "invalid";
  try {
    const client = new x402Client().register("solana:*", new ExactSvmScheme(await buyer.signer(), { rpcUrl: rpc.url }));
    const settles = fac.callsTo("/settle").length;
    const res = await paidPost(wrapFetchWithPayment(fetch, client), "/toll/payability/memo", target.url);
    assert.equal(res.status, 402);
    assert.equal((await res.json()).error, "payment_insufficient_funds");
    assert.equal(fac.callsTo("/settle").length, settles, "an invalid payment is never settled");
  } finally {
    fac.mode = "ok";
  }
});

test("a settlement that fails after a valid verify delivers nothing", async () => {
  fac.mode = "settle-fails";
  try {
    const signer = await createSigner("solana", buyer.secret);
    const res = await paidPost(wrapFetchV1(fetch, signer, undefined, undefined, { svmConfig: { rpcUrl: rpc.url } }), "/toll/payability/check", target.url);
    assert.equal(res.status, 402);
    assert.equal((await res.json()).error, "settlement_failed");
  } finally {
    fac.mode = "ok";
  }
});

test("our own check, memo and probe grade every route of our own service POPULATED, BOUND and PRESENT-FAIL-CLOSED", async () => {
  const calls = fac.callsTo("/verify").length + fac.callsTo("/settle").length;
  for (const route of ["/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe", "/toll/x402/preflight", "/toll/x402/lint"]) {
    const url = `${svc.url}${route}`;
    assert.equal((await cliJSON(bin.bin, "check", url)).state, "POPULATED", route);
    assert.equal((await cliJSON(bin.bin, "memo", url)).state, "BOUND", route);
    const probe = await cliJSON(bin.bin, "probe", url);
    assert.equal(probe.grades.direct.grade, "PRESENT-FAIL-CLOSED", route);
    assert.equal(probe.grades.facilitator.grade, "PRESENT-FAIL-CLOSED", route);
    assert.deepEqual(probe.exposures, [], route);
  }
  assert.equal(fac.callsTo("/verify").length + fac.callsTo("/settle").length, calls, "no probe reached the facilitator");
});

test("serve refuses to start when the facilitator does not settle exact on our network", async () => {
  const baseOnly = await startFacilitator({ feePayer: feePayer.address, networks: ["eip155:8453", "base"] });
  const dir = await mkdtemp(path.join(tmpdir(), "payability-interop-refuse-"));
  try {
    await assert.rejects(
      serve(bin.bin, ["--rates-url", "", "--data-dir", dir, "--pay-to", payee.address, "--token-account", tokenAccount, "--facilitator", baseOnly.url]),
      (err) => err.exitCode !== 0 && /--facilitator/.test(err.stderr),
    );
  } finally {
    await baseOnly.close();
    await rm(dir, { recursive: true, force: true });
  }
});
