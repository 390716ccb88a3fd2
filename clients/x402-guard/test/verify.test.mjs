// Record signatures against records payability's Go code signed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseJWKS, verifyDocument, thumbprint, VerifyError } from "../index.js";
import { vectors, record } from "./helpers.mjs";

const keys = parseJWKS(vectors.jwks);
const code = (c) => (e) => e instanceof VerifyError && e.code === c;

test("every record signed by a key of the set verifies, the current or a retired one", () => {
  assert.equal(keys.size, 2);
  for (const r of vectors.records.filter((r) => r.name !== "signed by a key not in the set")) {
    assert.equal(verifyDocument(r.record, keys), r.record.signature.kid, r.name);
  }
  assert.deepEqual([...keys.keys()], vectors.jwks.keys.map((k) => k.kid));
  for (const k of vectors.jwks.keys) assert.equal(thumbprint(k.x), k.kid);
});

test("member order and whitespace do not matter", () => {
  const r = record("operational");
  const reordered = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(r).reverse()), null, 2));
  assert.equal(verifyDocument(reordered, keys), r.signature.kid);
});

test("any changed value fails", () => {
  const r = record("operational");
  for (const [k, v] of [["status", "degraded"], ["terms_sha256", "0".repeat(64)], ["checks_30d", 4321], ["extra", 1]]) {
    assert.throws(() => verifyDocument({ ...r, [k]: v }, keys), code("bad_signature"), k);
  }
  const u = record("unicode");
  u["😀"][0] = "\u2029";
  assert.throws(() => verifyDocument(u, keys), code("bad_signature"));
  const { network, ...rest } = r;
  assert.throws(() => verifyDocument(rest, keys), code("bad_signature"));
});

test("failures are closed-form, in payability's order", () => {
  const r = record("operational");
  assert.throws(() => verifyDocument([], keys), code("malformed"));
  assert.throws(() => verifyDocument({ ...r, signature: undefined, x: 1 }, keys), code("malformed"));
  const { signature, ...unsigned } = r;
  assert.throws(() => verifyDocument(unsigned, keys), code("no_signature"));
  assert.throws(() => verifyDocument({ ...r, signature: { ...signature, alg: "RS256" } }, keys), code("bad_alg"));
  assert.throws(() => verifyDocument({ ...r, signature: { ...signature, kid: "nope" } }, keys), code("unknown_kid"));
  assert.throws(() => verifyDocument({ ...r, signature: { ...signature, value: signature.value + "A" } }, keys), code("malformed"));
  assert.throws(() => verifyDocument({ ...r, signature: { ...signature, extra: "x" } }, keys), code("malformed"));
  assert.throws(() => verifyDocument({ ...r, checks_30d: 1.5 }, keys), code("malformed"));
  assert.throws(() => verifyDocument(record("signed by a key not in the set"), keys), code("unknown_kid"));
  assert.equal(verifyDocument(record("signed by a key not in the set"), parseJWKS(vectors.other_jwks)).length, 43);
});

test("parseJWKS is strict", () => {
  const k = vectors.jwks.keys[0];
  for (const bad of [
    null, [], {}, { keys: [] }, { keys: [k], extra: 1 },
    { keys: [{ ...k, d: "x" }] }, { keys: [{ ...k, kty: "EC" }] }, { keys: [{ ...k, crv: "X25519" }] },
    { keys: [{ ...k, use: "enc" }] }, { keys: [{ ...k, alg: "ES256" }] }, { keys: [{ ...k, kid: "x" }] },
    { keys: [{ ...k, x: k.x + "=" }] }, { keys: [{ ...k, x: "AAAA" }] }, { keys: [k, k] }, { keys: [{ ...k, other: "x" }] }, { keys: [{ ...k, use: null }] },
  ]) {
    assert.throws(() => parseJWKS(bad), code("bad_jwks"), JSON.stringify(bad));
  }
});
