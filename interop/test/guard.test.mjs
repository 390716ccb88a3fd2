// @payability/x402-guard (clients/x402-guard) in the real x402 v2 client:
// @x402/fetch + @x402/svm, with the guard's hook on its x402Client and the
// real payability binary as the decision source, against the real
// @x402/express seller and sellers written for the test, all on loopback.
import { blocked } from "../lib/guard.mjs"; // first: loopback only
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import express from "express";

import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import { guard, abortReason, termsSha256 } from "../../clients/x402-guard/index.js";

import { SOLANA_MAINNET, USDC_MAINNET, close, keypair, listen, startRpc } from "../lib/solana.mjs";
import { startFacilitator } from "../lib/facilitator.mjs";
import { build, cli } from "../lib/payability.mjs";

let bin, rpc, fac, workDir;
const buyer = keypair();
const feePayer = keypair();
const payees = [keypair().address, keypair().address];

before(async () => {
  bin = await build();
  rpc = await startRpc();
  fac = await startFacilitator({ feePayer: feePayer.address, rpc });
  workDir = await mkdtemp(path.join(tmpdir(), "payability-interop-guard-"));
});

after(async () => {
  await fac?.close();
  await rpc?.close();
  await bin?.cleanup();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  assert.deepEqual(blocked, [], "nothing may leave loopback");
});

// Every request a seller received: who sent it and whether it carried a
// payment. The preflight's own probes come from the binary (payability/…).
function recorder(seen) {
  return (req, _res, next) => {
    seen.push({ method: req.method, fromPayability: /^payability\//.test(req.get("user-agent") ?? ""), payment: req.get("payment-signature") ?? null });
    next();
  };
}

// The real @x402/express seller gating every method of /api/paid on Solana;
// payTo is a function of the request count when given one.
async function expressSeller(payTo) {
  const { paymentMiddleware, x402ResourceServer } = await import("@x402/express");
  const { HTTPFacilitatorClient } = await import("@x402/core/server");
  const { ExactSvmScheme: ServerSvm } = await import("@x402/svm/exact/server");
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: fac.url })).register("solana:*", new ServerSvm());
  const seen = [];
  const app = express();
  app.use(recorder(seen));
  app.use(
    paymentMiddleware(
      { "/api/paid": { accepts: { scheme: "exact", network: SOLANA_MAINNET, price: "$0.01", payTo: typeof payTo === "function" ? () => payTo(seen.length) : payTo }, description: "A forecast for one city.", mimeType: "application/json" } },
      server,
    ),
  );
  app.get("/api/paid", (_req, res) => res.json({ forecast: "sunny" }));
  app.post("/api/paid", (_req, res) => res.json({ forecast: "sunny" }));
  const srv = http.createServer(app);
  const base = await listen(srv);
  return { url: `${base}/api/paid`, seen, close: () => close(srv) };
}

// A seller that serves any request carrying a payment header: it never
// verifies. Its unpaid 402 is the reference middleware's shape.
async function failOpenSeller() {
  const seen = [];
  const app = express();
  app.use(recorder(seen));
  let url;
  app.all("/api/paid", (req, res) => {
    if (req.get("payment-signature")) return res.json({ forecast: "sunny" });
    const pr = {
      x402Version: 2,
      error: "Payment required",
      resource: { url, description: "A forecast for one city.", mimeType: "application/json" },
      accepts: [{ scheme: "exact", network: SOLANA_MAINNET, amount: "10000", asset: USDC_MAINNET, payTo: payees[0], maxTimeoutSeconds: 300, extra: { feePayer: feePayer.address } }],
    };
    res.status(402).set("PAYMENT-REQUIRED", encodePaymentRequiredHeader(pr)).json({});
  });
  const srv = http.createServer(app);
  url = `${await listen(srv)}/api/paid`;
  return { url, seen, close: () => close(srv) };
}

// A buyer: the real client with the guard; created counts the payment
// payloads the client made.
async function buyerWith(options) {
  const created = [];
  const client = new x402Client().register("solana:*", new ExactSvmScheme(await buyer.signer(), { rpcUrl: rpc.url }));
  guard(client, { binary: bin.bin, allowPrivate: true, ...options });
  client.onAfterPaymentCreation(async (ctx) => void created.push(ctx.paymentPayload));
  return { pay: wrapFetchWithPayment(fetch, client), created };
}

const clientPayments = (seen) => seen.filter((r) => r.payment !== null && !r.fromPayability);

test("an honest @x402/express seller: GO, the client pays once and the facilitator settles once", async () => {
  const seller = await expressSeller(payees[0]);
  const settles = fac.callsTo("/settle").length;
  const decisions = [];
  try {
    const { pay, created } = await buyerWith({ onDecision: (d) => decisions.push(d) });
    const res = await pay(seller.url);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { forecast: "sunny" });
    assert.equal(created.length, 1);
    assert.equal(clientPayments(seller.seen).length, 1);
    assert.equal(fac.callsTo("/settle").length, settles + 1);
    assert.equal(decisions.length, 1);
    assert.equal(decisions[0].decision, "GO");
    assert.equal(decisions[0].proceed, true);
    assert.equal(decisions[0].url, seller.url);
    assert.equal(decisions[0].record.terms_sha256, decisions[0].termsSha256);

    // The guard's terms hash is the binary's, on the seller's own challenge.
    const unpaid = await fetch(seller.url);
    const header = unpaid.headers.get("payment-required");
    const file = path.join(workDir, "challenge.txt");
    await writeFile(file, header);
    const r = await cli(bin.bin, "terms-hash", "--json", file);
    assert.equal(r.code, 0, r.stderr);
    const pr = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    assert.equal(termsSha256(pr, pr.accepts[0]), JSON.parse(r.stdout).entries[0].terms_sha256);
  } finally {
    await seller.close();
  }
});

test("a fail-open seller: aborted preflight_stop:fail_open before any payment payload is created", async () => {
  const seller = await failOpenSeller();
  try {
    const { pay, created } = await buyerWith({});
    await assert.rejects(pay(seller.url), (e) => abortReason(e) === "preflight_stop:fail_open");
    assert.equal(created.length, 0, "no payment payload was created");
    assert.equal(clientPayments(seller.seen).length, 0, "the seller saw no PAYMENT-SIGNATURE from the client");
    assert.ok(seller.seen.some((r) => r.fromPayability && r.payment), "the preflight's probes did reach it");
  } finally {
    await seller.close();
  }
});

test("a seller that changes payTo between the client's 402 and the preflight: aborted terms_mismatch", async () => {
  // The client's unpaid request is the seller's first; the preflight's come after.
  const seller = await expressSeller((n) => (n <= 1 ? payees[0] : payees[1]));
  const settles = fac.callsTo("/settle").length;
  try {
    const { pay, created } = await buyerWith({});
    await assert.rejects(pay(seller.url), (e) => abortReason(e) === "terms_mismatch");
    assert.equal(created.length, 0);
    assert.equal(clientPayments(seller.seen).length, 0);
    assert.equal(fac.callsTo("/settle").length, settles);
  } finally {
    await seller.close();
  }
});

test("the decision source unreachable: aborted preflight_unavailable", async (t) => {
  const seller = await expressSeller(payees[0]);
  // A port nothing listens on: bind one, then close it.
  const dead = http.createServer();
  const deadUrl = await listen(dead);
  await close(dead);
  try {
    for (const [name, options] of [
      ["no payability binary", { binary: path.join(workDir, "no-such-binary") }],
      ["a monitor that does not answer", { source: "monitor", monitorUrl: deadUrl, serviceId: "weather" }],
    ]) {
      await t.test(name, async () => {
        const { pay, created } = await buyerWith(options);
        await assert.rejects(pay(seller.url), (e) => abortReason(e) === "preflight_unavailable");
        assert.equal(created.length, 0);
        assert.equal(clientPayments(seller.seen).length, 0);
      });
    }
  } finally {
    await seller.close();
  }
});
