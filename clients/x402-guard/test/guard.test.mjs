// The guard's rules, through the real @x402/core x402Client: the hook aborts
// createPaymentPayload before the scheme is asked for a payment.
import { test } from "node:test";
import assert from "node:assert/strict";
import { x402Client } from "@x402/core/client";
import { guard, createGuard, abortReason, ABORT_REASONS } from "../index.js";
import { vectors, ctxOf, source } from "./helpers.mjs";

const v2 = vectors.terms[0]; // v2 Solana, one entry
const v1 = vectors.terms.find((t) => t.name === "v1 legacy names");
const hashOf = (t, i = 0) => t.entries[i].terms_sha256;
const rec = (decision, reasons, terms = hashOf(v2), revision = "1") => ({ decision, reasons, termsSha256: terms, revision, record: { decision, reasons } });

// A scheme client that records what it was asked to pay: the payment the
// guard must prevent.
function payingClient(options) {
  const created = [];
  const scheme = {
    scheme: "exact",
    async createPaymentPayload(version, requirements) {
      created.push(requirements);
      return { x402Version: version, payload: { signed: true } };
    },
  };
  const client = new x402Client().register("solana:*", scheme).register("eip155:*", scheme).registerV1("base", scheme).registerV1("solana-devnet", scheme).setSpendControls(false);
  guard(client, options);
  return { client, created };
}

async function pay(t, options, index = 0) {
  const { client, created } = payingClient(options);
  const pr = ctxOf(t, index).paymentRequired;
  try {
    const p = await client.createPaymentPayload(pr);
    return { paid: true, created, payload: p };
  } catch (e) {
    return { paid: false, created, reason: abortReason(e), message: e.message };
  }
}

const RULES = [
  ["GO on the checked terms pays", rec("GO", []), {}, true, null],
  ["STOP aborts with its first reason", rec("STOP", ["fail_open", "payment_not_verified"]), {}, false, "preflight_stop:fail_open"],
  ["STOP aborts even with allowHold", rec("STOP", ["over_budget"], null), { allowHold: true }, false, "preflight_stop:over_budget"],
  ["HOLD aborts", rec("HOLD", ["method_open", "lint_warnings"]), {}, false, "preflight_hold:method_open"],
  ["HOLD with allowHold pays", rec("HOLD", ["method_open"]), { allowHold: true }, true, null],
  ["HOLD whose reasons are all allowed pays", rec("HOLD", ["method_open", "lint_warnings"]), { allowReasons: ["method_open", "lint_warnings"] }, true, null],
  ["HOLD with a reason not allowed aborts", rec("HOLD", ["method_open", "lint_warnings"]), { allowReasons: ["method_open"] }, false, "preflight_hold:method_open"],
  ["GO on other terms aborts", rec("GO", [], "0".repeat(64)), {}, false, "terms_mismatch"],
  ["GO with no terms aborts", rec("GO", [], null), {}, false, "terms_mismatch"],
  ["HOLD on other terms aborts even if allowed", rec("HOLD", ["method_open"], "1".repeat(64)), { allowHold: true }, false, "terms_mismatch"],
  ["an unknown decision aborts", rec("MAYBE", []), {}, false, "preflight_unavailable"],
];

for (const [name, answer, opts, paid, reason] of RULES) {
  test(name, async () => {
    const s = source(async () => answer);
    const r = await pay(v2, { source: s, ...opts });
    assert.equal(r.paid, paid, r.message);
    assert.equal(r.created.length, paid ? 1 : 0, "the scheme is asked for a payment only when the guard proceeds");
    if (!paid) {
      assert.equal(r.reason, reason);
      assert.equal(r.message, `Payment creation aborted: ${reason}`);
    }
  });
}

test("the source gets the resource URL, method, body and the entry's network, scheme and asset", async () => {
  const s = source(async () => rec("GO", []));
  const r = await pay(v2, { source: s, method: "post", body: '{"city":"Lyon"}' });
  assert.ok(r.paid);
  const pr = ctxOf(v2).paymentRequired;
  assert.deepEqual(s.calls[0], {
    url: pr.resource.url, method: "POST", body: '{"city":"Lyon"}', network: pr.accepts[0].network, x402Version: 2,
    scheme: "exact", asset: pr.accepts[0].asset, termsSha256: hashOf(v2),
  });
});

test("a v1 entry: its own resource, its legacy network mapped to CAIP-2", async () => {
  const s = source(async () => rec("GO", [], hashOf(v1, 1)));
  const r = await pay(v1, { source: s, method: (url) => (url.endsWith("/weather") ? "GET" : "POST") }, 1);
  const { client } = payingClient({ source: s });
  const pr = ctxOf(v1).paymentRequired;
  // The default selector takes accepts[0] (base): a v1 challenge hashes per entry.
  await assert.rejects(client.createPaymentPayload(pr), (e) => abortReason(e) === "terms_mismatch");
  assert.equal(s.calls[0].network, "eip155:8453");
  assert.equal(s.calls[0].url, "https://api.example.com/weather");
  assert.equal(s.calls[0].method, "GET");
  void r;
});

test("incomplete terms abort before any source is asked", async () => {
  const s = source(async () => rec("GO", []));
  const g = createGuard({ source: s });
  for (const t of vectors.terms.filter((t) => t.entries[0].terms_sha256 === "")) {
    const out = await g.check(ctxOf(t));
    assert.equal(out.reason, "terms_incomplete", t.name);
  }
  assert.equal(s.calls.length, 0);
});

test("a source that fails, throws or answers garbage: preflight_unavailable; failOpen proceeds, loudly", async () => {
  const events = [];
  for (const answer of [async () => { throw new Error("boom"); }, () => { throw new Error("sync"); }, async () => null]) {
    const closed = createGuard({ source: source(answer) });
    assert.deepEqual((await closed.hook(ctxOf(v2))), { abort: true, reason: "preflight_unavailable" });
    const open = createGuard({ source: source(answer), failOpen: true, onDecision: (e) => events.push(e) });
    assert.equal(await open.hook(ctxOf(v2)), undefined);
  }
  assert.equal(events.length, 3);
  assert.ok(events.every((e) => e.proceed && e.reason === "preflight_unavailable"));
});

test("failOpen never passes a decision, a mismatch or an unverified record", async () => {
  for (const [answer, reason] of [[rec("STOP", ["fail_open"]), "preflight_stop:fail_open"], [rec("GO", [], "0".repeat(64)), "terms_mismatch"]]) {
    const g = createGuard({ source: source(async () => answer), failOpen: true });
    assert.deepEqual(await g.hook(ctxOf(v2)), { abort: true, reason });
  }
  const { GuardError } = await import("../index.js");
  const g = createGuard({ source: source(async () => { throw new GuardError("record_unverified:stale"); }), failOpen: true });
  assert.deepEqual(await g.hook(ctxOf(v2)), { abort: true, reason: "record_unverified:stale" });
});

test("no decision within timeoutMs aborts, and the source is told to stop", async () => {
  let signal;
  const s = source((_, sig) => {
    signal = sig;
    return new Promise(() => {}); // never answers
  });
  const g = createGuard({ source: s, timeoutMs: 1 });
  assert.deepEqual(await g.hook(ctxOf(v2)), { abort: true, reason: "preflight_unavailable" });
  assert.equal(signal.aborted, true);
});

test("concurrent payments for one resource share one preflight", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const s = source(async () => {
    await gate;
    return rec("GO", []);
  });
  const g = createGuard({ source: s });
  const all = Promise.all([g.hook(ctxOf(v2)), g.hook(ctxOf(v2)), g.hook(ctxOf(v2))]);
  await new Promise((r) => setImmediate(r));
  assert.equal(s.calls.length, 1);
  release();
  assert.deepEqual(await all, [undefined, undefined, undefined]);
  assert.equal(s.calls.length, 1);
});

test("the cache is per (URL, method, terms_sha256) and expires after the TTL", async () => {
  let now = 1_000;
  const s = source(async (req) => rec("GO", [], req.termsSha256));
  const g = createGuard({ source: s, now: () => now, cacheTtlMs: 5_000, method: (url) => (url.endsWith("?q=1") ? "POST" : undefined) });
  await g.hook(ctxOf(v2));
  await g.hook(ctxOf(v2));
  assert.equal(s.calls.length, 1);
  const two = vectors.terms.find((t) => t.name === "v2 two entries");
  await g.hook(ctxOf(two, 0));
  await g.hook(ctxOf(two, 1)); // same URL, other terms
  assert.equal(s.calls.length, 3);
  now += 4_999;
  await g.hook(ctxOf(v2));
  assert.equal(s.calls.length, 3);
  now += 1;
  await g.hook(ctxOf(v2));
  assert.equal(s.calls.length, 4);
  g.clear();
  await g.hook(ctxOf(v2));
  assert.equal(s.calls.length, 5);
});

test("a failure is not cached", async () => {
  let fail = true;
  const s = source(async () => {
    if (fail) throw new Error("down");
    return rec("GO", []);
  });
  const g = createGuard({ source: s });
  assert.equal((await g.hook(ctxOf(v2))).reason, "preflight_unavailable");
  fail = false;
  assert.equal(await g.hook(ctxOf(v2)), undefined);
  assert.equal(s.calls.length, 2);
});

test("onDecision sees the decision and the record; its failure changes nothing", async () => {
  const events = [];
  const g = createGuard({ source: source(async () => rec("HOLD", ["lint_warnings"])), onDecision: (e) => { events.push(e); throw new Error("x"); } });
  assert.deepEqual(await g.hook(ctxOf(v2)), { abort: true, reason: "preflight_hold:lint_warnings" });
  assert.equal(events[0].decision, "HOLD");
  assert.deepEqual(events[0].reasons, ["lint_warnings"]);
  assert.equal(events[0].termsSha256, hashOf(v2));
  assert.equal(events[0].revision, "1");
  assert.deepEqual(events[0].record, { decision: "HOLD", reasons: ["lint_warnings"] });
});

test("a bad method or a body that is not JSON aborts (a body is never the binary's @FILE)", async () => {
  for (const o of [{ method: () => "DELETE" }, { body: "@/etc/passwd" }, { body: () => "{" }, { body: () => 42 }]) {
    const s = source(async () => rec("GO", []));
    const g = createGuard({ source: s, ...o });
    assert.equal((await g.hook(ctxOf(v2))).reason, "preflight_unavailable", JSON.stringify(o));
    assert.equal(s.calls.length, 0);
  }
});

test("options are checked when the guard is made", () => {
  for (const o of [{ source: "cloud" }, { source: "service" }, { timeoutMs: 0 }, { cacheTtlMs: -1 }, { maxAmount: "1.5" }, { allowReasons: ["Bad Reason"] }, { method: "PUT" }, { source: "monitor" }]) {
    assert.throws(() => createGuard(o), TypeError, JSON.stringify(o));
  }
  assert.throws(() => guard({}, {}), TypeError);
});

test("abortReason reads only the guard's closed-form reasons", () => {
  assert.equal(abortReason(new Error("Failed to create payment payload: Payment creation aborted: preflight_stop:fail_open")), "preflight_stop:fail_open");
  assert.equal(abortReason(new Error("Payment creation aborted: terms_mismatch")), "terms_mismatch");
  assert.equal(abortReason(new Error("Payment creation aborted: something a seller wrote")), null);
  assert.equal(abortReason(new Error("other")), null);
  assert.equal(ABORT_REASONS.length, 6);
});
