// terms_sha256 and RFC 8785 against what payability's Go code computes
// (test/fixtures/go-vectors.json, written by `go test ./x402check`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalize, CanonicalError, termsSha256, networkCAIP2 } from "../index.js";
import { vectors, challengeOf } from "./helpers.mjs";

for (const v of vectors.terms) {
  test(`terms_sha256: ${v.name}`, () => {
    const pr = challengeOf(v);
    assert.equal(v.entries.length, pr.accepts.length);
    for (const e of v.entries) {
      assert.equal(termsSha256(pr, pr.accepts[e.index]), e.terms_sha256 === "" ? null : e.terms_sha256, `accepts[${e.index}]`);
    }
  });
}

test("the vectors cover hashed and unhashable entries", () => {
  const all = vectors.terms.flatMap((v) => v.entries);
  assert.ok(all.some((e) => e.terms_sha256 !== ""));
  assert.ok(all.filter((e) => e.terms_sha256 === "").length >= 5);
});

test("a changed term changes the hash; members outside the terms do not", () => {
  const pr = challengeOf(vectors.terms[0]);
  const base = termsSha256(pr, pr.accepts[0]);
  for (const [k, val] of [["payTo", "other"], ["amount", "10001"], ["asset", "x"], ["scheme", "upto"], ["network", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"], ["maxTimeoutSeconds", 61]]) {
    assert.notEqual(termsSha256(pr, { ...pr.accepts[0], [k]: val }), base, k);
  }
  assert.notEqual(termsSha256({ ...pr, resource: { url: "https://api.example.com/other" } }, pr.accepts[0]), base);
  assert.equal(termsSha256(pr, { ...pr.accepts[0], extra: { memo: "x" }, description: "d" }), base);
  assert.equal(termsSha256({ ...pr, x402Version: 3 }, pr.accepts[0]), null);
});

for (const c of vectors.canonical) {
  test(`RFC 8785: ${c.json}`, () => {
    assert.equal(canonicalize(JSON.parse(c.json)), c.canonical);
  });
}

test("canonicalize refuses what payability refuses", () => {
  for (const [v, code] of [[1.5, "unsafe_number"], [2 ** 53, "unsafe_number"], [NaN, "unsafe_number"], ["\ud800", "invalid_string"], [{ "\udc00": 1 }, "invalid_string"], [new Date(0), "not_json"], [undefined, "not_json"]]) {
    assert.throws(() => canonicalize(v), (e) => e instanceof CanonicalError && e.code === code);
  }
  let deep = [];
  for (let i = 0; i < 100; i++) deep = [deep];
  assert.throws(() => canonicalize(deep), (e) => e.code === "too_deep");
});

test("networkCAIP2: v1 names map, v2 must be CAIP-2", () => {
  assert.equal(networkCAIP2(1, "base"), "eip155:8453");
  assert.equal(networkCAIP2(1, "eip155:8453"), "eip155:8453");
  assert.equal(networkCAIP2(2, "base"), null);
  assert.equal(networkCAIP2(1, "toString"), null);
  assert.equal(networkCAIP2(1, "mainnet"), null);
});
