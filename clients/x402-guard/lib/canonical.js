// RFC 8785 (JSON Canonicalization Scheme) for the values payability signs and
// hashes: objects with members sorted by UTF-16 code units, strings as
// ECMAScript's JSON.stringify writes them, and numbers that are safe
// integers only (payability's signed documents and terms carry no other
// numbers: amounts travel as strings). Anything else throws a
// CanonicalError, whose message never quotes the input.

export class CanonicalError extends Error {
  constructor(code) {
    super(`canonical: ${code}`);
    this.code = code;
  }
}

const MAX_DEPTH = 64;

// A lone surrogate is no Unicode scalar value: RFC 8785 (and payability's
// Go canonicalizer) refuse it.
function wellFormed(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

function write(v, depth, out) {
  if (depth > MAX_DEPTH) throw new CanonicalError("too_deep");
  if (v === null || v === true || v === false) {
    out.push(String(v));
  } else if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new CanonicalError("unsafe_number");
    out.push(Object.is(v, -0) ? "0" : String(v));
  } else if (typeof v === "string") {
    if (!wellFormed(v)) throw new CanonicalError("invalid_string");
    out.push(JSON.stringify(v));
  } else if (Array.isArray(v)) {
    out.push("[");
    v.forEach((item, i) => {
      if (i > 0) out.push(",");
      write(item, depth + 1, out);
    });
    out.push("]");
  } else if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype || (typeof v === "object" && Object.getPrototypeOf(v) === null)) {
    // Array.prototype.sort compares UTF-16 code units: RFC 8785's order.
    const names = Object.keys(v).sort();
    out.push("{");
    names.forEach((name, i) => {
      if (i > 0) out.push(",");
      if (!wellFormed(name)) throw new CanonicalError("invalid_string");
      out.push(JSON.stringify(name), ":");
      write(v[name], depth + 1, out);
    });
    out.push("}");
  } else {
    throw new CanonicalError("not_json");
  }
}

// canonicalize returns the RFC 8785 form of a JSON value (as JSON.parse
// makes it) as a string.
export function canonicalize(value) {
  const out = [];
  write(value, 0, out);
  return out.join("");
}
