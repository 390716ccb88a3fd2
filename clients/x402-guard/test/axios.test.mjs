// The guard in @x402/axios (2.11.0, with its own @x402/core 2.11.0): the
// real axios interceptor against a loopback seller. The scheme client is a
// stand-in that makes a payload; what matters is whether the interceptor
// ever sends one.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import axios from "axios";
import { x402Client, wrapAxiosWithPayment } from "@x402/axios";
import { guard, abortReason } from "../index.js";
import { vectors, source } from "./helpers.mjs";

const v2 = vectors.terms[0];
const terms = v2.entries[0].terms_sha256;
let server, url;
const payments = [];

before(async () => {
  server = http.createServer((req, res) => {
    const sig = req.headers["payment-signature"];
    if (sig) {
      payments.push(sig);
      res.writeHead(200, { "content-type": "application/json" });
      return res.end('{"forecast":"sunny"}');
    }
    res.writeHead(402, { "content-type": "application/json", "PAYMENT-REQUIRED": v2.header });
    res.end("{}");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${server.address().port}/weather`;
});
after(() => new Promise((r) => server.close(r)));

function api(answer) {
  const scheme = { scheme: "exact", createPaymentPayload: async (version) => ({ x402Version: version, payload: { transaction: "signed" } }) };
  const client = new x402Client().register("solana:*", scheme);
  client.setSpendControls?.(false);
  const s = source(answer);
  guard(client, { source: s });
  return { http: wrapAxiosWithPayment(axios.create(), client), s };
}

test("@x402/axios: GO on the checked terms pays", async () => {
  const before = payments.length;
  const { http: a, s } = api(async () => ({ decision: "GO", reasons: [], termsSha256: terms }));
  const res = await a.get(url);
  assert.equal(res.status, 200);
  assert.deepEqual(res.data, { forecast: "sunny" });
  assert.equal(payments.length, before + 1);
  assert.equal(s.calls[0].url, "https://api.example.com/weather");
});

for (const [name, answer, reason] of [
  ["STOP", { decision: "STOP", reasons: ["fail_open"], termsSha256: terms }, "preflight_stop:fail_open"],
  ["HOLD", { decision: "HOLD", reasons: ["challenge_static"], termsSha256: terms }, "preflight_hold:challenge_static"],
  ["other terms", { decision: "GO", reasons: [], termsSha256: "0".repeat(64) }, "terms_mismatch"],
]) {
  test(`@x402/axios: ${name} aborts before a payment is sent`, async () => {
    const before = payments.length;
    const { http: a } = api(async () => answer);
    await assert.rejects(a.get(url), (e) => abortReason(e) === reason);
    assert.equal(payments.length, before);
  });
}
