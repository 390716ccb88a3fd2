// The monitor source against a loopback monitor serving records payability's
// Go code signed (test/fixtures/go-vectors.json), with an injected clock.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createGuard, monitorSource, normalizeURL } from "../index.js";
import { vectors, record, at, ctxOf } from "./helpers.mjs";

let server, base;
const served = { record: null, status: 200, jwks: vectors.jwks, jwksStatus: 200 };
const seen = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.url);
    const out = req.url === "/mon/.well-known/jwks.json" ? [served.jwksStatus, served.jwks] : req.url === "/mon/api/v1/reliability/weather" ? [served.status, served.record] : [404, { error: "not found" }];
    res.writeHead(out[0], { "content-type": "application/json" });
    res.end(typeof out[1] === "string" ? out[1] : JSON.stringify(out[1]));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}/mon/`;
});
after(() => new Promise((r) => server.close(r)));

// ctx: the v2 Solana challenge of the fixtures, whose terms the records bind.
const ctx = ctxOf(vectors.terms[0]);

async function outcome(name, { now = at(60_000), mutate, status = 200, jwksStatus = 200, jwks = vectors.jwks, c = ctx, opts = {} } = {}) {
  served.record = name === null ? { error: "x" } : record(name);
  if (mutate) served.record = mutate(served.record);
  Object.assign(served, { status, jwksStatus, jwks });
  const g = createGuard({ source: "monitor", monitorUrl: base, serviceId: "weather", allowPrivate: true, now: () => now, ...opts });
  return g.check(c);
}

const CASES = [
  ["operational", {}, true, null],
  ["degraded", {}, false, "preflight_hold:monitor_degraded"],
  ["degraded", { opts: { allowReasons: ["monitor_degraded"] } }, true, null],
  ["critical", {}, false, "preflight_stop:monitor_critical"],
  ["unknown", {}, false, "record_unverified:status_unknown"],
  ["no terms", {}, false, "record_unverified:no_terms_hash"],
  ["other endpoint", {}, false, "record_unverified:endpoint_mismatch"],
  ["signed by a key not in the set", {}, false, "record_unverified:signature_invalid"],
  ["claims paid delivery", {}, false, "record_unverified:claims_paid_delivery"],
  ["operational", { mutate: (r) => ({ ...r, status: "degraded" }) }, false, "record_unverified:signature_invalid"],
  ["operational", { now: at(60 * 60_000 + 1) }, false, "record_unverified:stale"],
  ["operational", { now: at(60 * 60_000) }, true, null],
  ["operational", { now: at(-1) }, false, "record_unverified:in_future"],
  ["operational", { status: 404 }, false, "record_unverified:not_monitored"],
  ["operational", { status: 500 }, false, "preflight_unavailable"],
  ["operational", { jwksStatus: 503 }, false, "record_unverified:jwks_unavailable"],
  ["operational", { jwks: { keys: [] } }, false, "record_unverified:jwks_unavailable"],
  ["operational", { jwks: vectors.other_jwks }, false, "record_unverified:signature_invalid"],
  ["operational", { c: { ...ctx, selectedRequirements: { ...ctx.selectedRequirements, payTo: "someone-else" } } }, false, "terms_mismatch"],
];

for (const [name, o, proceed, reason] of CASES) {
  test(`monitor record ${name} ${JSON.stringify(Object.keys(o))}: ${reason ?? "proceeds"}`, async () => {
    const out = await outcome(name, o);
    assert.equal(out.reason, reason);
    assert.equal(out.proceed, proceed);
    assert.equal(out.source, "monitor");
  });
}

test("a GO from the monitor names its decision and record", async () => {
  const out = await outcome("operational");
  assert.equal(out.decision, "GO");
  assert.equal(out.record.service_id, "weather");
  assert.ok(seen.includes("/mon/api/v1/reliability/weather") && seen.includes("/mon/.well-known/jwks.json"));
});

test("validation refuses what the record must not claim or omit", async () => {
  const { validate } = await import("../lib/monitor.js");
  const r = record("claims paid delivery");
  assert.throws(() => validate(r, "weather", at(0)), (e) => e.reason === "record_unverified:claims_paid_delivery");
  const { not_measured, ...silent } = record("operational");
  assert.throws(() => validate(silent, "weather", at(0)), (e) => e.reason === "record_unverified:not_measured_missing");
  assert.throws(() => validate(record("operational"), "search", at(0)), (e) => e.reason === "record_unverified:service_id_mismatch");
});

test("the monitor URL must be https (http only with allowPrivate) and carry no query", () => {
  for (const monitorUrl of ["http://127.0.0.1:1/", "https://m.example/?x=1", "https://m.example/#f", "https://u:p@m.example/", "ftp://m.example/", "nope"]) {
    assert.throws(() => monitorSource({ monitorUrl, serviceId: "weather" }), TypeError, monitorUrl);
  }
  assert.throws(() => monitorSource({ monitorUrl: "https://m.example/" }), TypeError);
  assert.equal(monitorSource({ monitorUrl: "https://m.example/", serviceId: "w" }).name, "monitor");
});

test("normalizeURL is the skill's normalization", () => {
  assert.equal(normalizeURL("HTTPS://API.Example.com:443/weather/"), "https://api.example.com/weather");
  assert.equal(normalizeURL("https://api.example.com:8443/a?q=1"), "https://api.example.com:8443/a?q=1");
  assert.equal(normalizeURL("http://api.example.com/a"), null);
  assert.equal(normalizeURL("https://u@api.example.com/a"), null);
});
