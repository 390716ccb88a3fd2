// Signature verification of payability's signed documents (the monitor's
// reliability records, signed reports): a top-level "signature" member
// {alg: "Ed25519", kid, value} over the RFC 8785 form of the document without
// it, the kid being the RFC 7638 thumbprint of an RFC 8037 OKP key in the
// signer's JWK Set. Failures are closed-form codes (VerifyError.code), the
// same codes as payability's Go verifier; no message quotes the input.
import { createHash, createPublicKey, verify as edVerify } from "node:crypto";
import { canonicalize } from "./canonical.js";

export class VerifyError extends Error {
  constructor(code) {
    super(`verify: ${code}`);
    this.code = code;
  }
}

const B64URL = /^[A-Za-z0-9_-]*$/;

// b64url decodes unpadded base64url strictly (no padding, no stray bits).
function b64url(s) {
  if (typeof s !== "string" || !B64URL.test(s) || s.length % 4 === 1) return null;
  const buf = Buffer.from(s, "base64url");
  return buf.toString("base64url") === s ? buf : null;
}

// thumbprint is the RFC 7638 thumbprint of an Ed25519 public key (x, base64url).
export function thumbprint(x) {
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// parseJWKS reads a JWK Set as strictly as payability does: only "keys", a
// non-empty array of OKP Ed25519 public keys with kty, crv, x, kid and
// optionally use "sig" and alg "EdDSA"; each kid the key's thumbprint, no
// kid twice, no private part. Returns a Map kid -> KeyObject.
export function parseJWKS(doc) {
  const bad = () => new VerifyError("bad_jwks");
  if (!isPlainObject(doc) || Object.keys(doc).length !== 1 || !Array.isArray(doc.keys) || doc.keys.length === 0) throw bad();
  const keys = new Map();
  for (const k of doc.keys) {
    if (!isPlainObject(k) || "d" in k) throw bad();
    for (const [name, v] of Object.entries(k)) {
      if (!["kty", "crv", "x", "kid", "use", "alg"].includes(name) || typeof v !== "string") throw bad();
    }
    if (k.kty !== "OKP" || k.crv !== "Ed25519") throw bad();
    if ("use" in k && k.use !== "sig") throw bad();
    if ("alg" in k && k.alg !== "EdDSA") throw bad();
    const x = b64url(k.x);
    if (!x || x.length !== 32 || k.kid !== thumbprint(k.x) || keys.has(k.kid)) throw bad();
    keys.set(k.kid, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: k.x }, format: "jwk" }));
  }
  return keys;
}

// verifyDocument checks a signed document (a parsed JSON object) against a
// key map from parseJWKS and returns the kid that signed it. Errors, in the
// order checked: malformed, no_signature, bad_alg, unknown_kid, bad_signature.
export function verifyDocument(doc, keys) {
  if (!isPlainObject(doc)) throw new VerifyError("malformed");
  if (!Object.hasOwn(doc, "signature")) throw new VerifyError("no_signature");
  const sig = doc.signature;
  if (!isPlainObject(sig) || Object.keys(sig).length !== 3) throw new VerifyError("malformed");
  for (const name of ["alg", "kid", "value"]) {
    if (typeof sig[name] !== "string" || sig[name] === "") throw new VerifyError("malformed");
  }
  if (sig.alg !== "Ed25519") throw new VerifyError("bad_alg");
  const key = keys.get(sig.kid);
  if (!key) throw new VerifyError("unknown_kid");
  const value = b64url(sig.value);
  if (!value || value.length !== 64) throw new VerifyError("malformed");
  const rest = { ...doc };
  delete rest.signature;
  let signed;
  try {
    signed = canonicalize(rest);
  } catch {
    throw new VerifyError("malformed");
  }
  if (!edVerify(null, Buffer.from(signed, "utf8"), key, value)) throw new VerifyError("bad_signature");
  return sig.kid;
}
