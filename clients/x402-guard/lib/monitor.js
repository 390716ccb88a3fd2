// The monitor decision source: a payability monitor's signed reliability
// record, GET {monitorUrl}/api/v1/reliability/{id}, verified against the
// monitor's key set, GET {monitorUrl}/.well-known/jwks.json, then validated
// and bound as `payability reliability --source payability` does
// (docs/monitor.md): the record's endpoint_url is the normalized resource
// URL, it is at most 60 minutes old, and its terms_sha256 is the hash of the
// entry being signed (the guard compares it). The monitor never pays, so its
// record carries no paid-delivery figure, and one that claims one is refused.
import { GuardError, isTermsHash } from "./record.js";
import { parseJWKS, verifyDocument, VerifyError } from "./verify.js";
import { isCAIP2 } from "./terms.js";

export const MAX_AGE_MS = 60 * 60 * 1000;
const MAX_BODY = 1 << 20;
const SERVICE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const unverified = (code) => new GuardError(`record_unverified:${code}`);

// normalizeURL is the skill's normalization of an intended URL: https only,
// lower-case host, port only when not 443, no trailing slash, the query
// kept; null when it cannot be normalized (http, credentials, not a URL).
export function normalizeURL(s) {
  let u;
  try {
    u = new URL(s);
  } catch {
    return null;
  }
  if (u.protocol !== "https:" || u.username || u.password || u.hash) return null;
  return `https://${u.host}${u.pathname.replace(/\/+$/, "")}${u.search}`;
}

// baseURL checks the monitor's base URL: https (http with allowHttp), no
// query, fragment or credentials; returns it without a trailing slash.
export function baseURL(s, allowHttp) {
  let u;
  try {
    u = new URL(s);
  } catch {
    return null;
  }
  if (!(u.protocol === "https:" || (allowHttp && u.protocol === "http:"))) return null;
  if (u.search || u.hash || s.includes("#") || s.includes("?") || u.username || u.password) return null;
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

// getJSON fetches one document, no redirects, at most MAX_BODY bytes.
async function getJSON(fetchImpl, url, signal) {
  const res = await fetchImpl(url, { redirect: "error", signal, headers: { accept: "application/json" } });
  const reader = res.body?.getReader();
  const chunks = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BODY) {
      await reader.cancel();
      return { status: res.status, json: undefined };
    }
    chunks.push(value);
  }
  let json;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

// validate checks a verified record's members (docs/monitor.md, "Consuming
// it", step 2) and returns the record, or throws record_unverified:<code>.
export function validate(rec, serviceId, nowMs) {
  if (rec.source !== "payability") throw unverified("invalid_record");
  if (rec.service_id !== serviceId) throw unverified("service_id_mismatch");
  if (!["operational", "degraded", "critical", "unknown"].includes(rec.status)) throw unverified("invalid_record");
  if (typeof rec.endpoint_url !== "string") throw unverified("invalid_record");
  if (rec.last_verified_at === null || rec.last_verified_at === undefined) throw unverified("not_measured");
  if (typeof rec.last_verified_at !== "string" || !RFC3339.test(rec.last_verified_at)) throw unverified("invalid_record");
  const verifiedAt = Date.parse(rec.last_verified_at);
  if (Number.isNaN(verifiedAt)) throw unverified("invalid_record");
  if (verifiedAt > nowMs) throw unverified("in_future");
  const inc = rec.active_incident;
  if (inc !== undefined && inc !== null && (typeof inc !== "object" || typeof inc.severity !== "string" || typeof inc.failure_stage !== "string" || typeof inc.opened_at !== "string")) {
    throw unverified("invalid_record");
  }
  if (rec.network !== undefined && rec.network !== null && !isCAIP2(rec.network)) throw unverified("invalid_record");
  if (rec.terms_sha256 !== undefined && rec.terms_sha256 !== null && !isTermsHash(rec.terms_sha256)) throw unverified("invalid_record");
  if (!Number.isSafeInteger(rec.checks_30d) || rec.checks_30d < 0) throw unverified("invalid_record");
  if (Object.hasOwn(rec, "paid_delivery_percent")) throw unverified("claims_paid_delivery");
  if (!Array.isArray(rec.not_measured) || !rec.not_measured.includes("paid_delivery")) throw unverified("not_measured_missing");
  return { verifiedAt };
}

// decideRecord binds a validated record to the resource URL and decides:
// critical or an incident STOP (monitor_critical), degraded HOLD
// (monitor_degraded), operational GO; unknown, stale, unbound: unverified.
export function decideRecord(rec, url, verifiedAt, nowMs) {
  const intended = normalizeURL(url);
  if (intended === null || rec.endpoint_url !== intended) throw unverified("endpoint_mismatch");
  if (!rec.terms_sha256) throw unverified("no_terms_hash");
  if (nowMs - verifiedAt > MAX_AGE_MS) throw unverified("stale");
  const base = { termsSha256: rec.terms_sha256, network: rec.network ?? null, revision: null, record: rec };
  if (rec.status === "critical" || (rec.active_incident !== undefined && rec.active_incident !== null)) return { ...base, decision: "STOP", reasons: ["monitor_critical"] };
  if (rec.status === "degraded") return { ...base, decision: "HOLD", reasons: ["monitor_degraded"] };
  if (rec.status === "operational") return { ...base, decision: "GO", reasons: [] };
  throw unverified("status_unknown");
}

// monitorSource reads records from the monitor at opts.monitorUrl for the
// service id opts.serviceId (a string, or a function of the resource URL).
export function monitorSource(opts = {}) {
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const now = opts.now ?? Date.now;
  const base = baseURL(String(opts.monitorUrl ?? ""), Boolean(opts.allowPrivate));
  if (base === null) throw new TypeError("x402-guard: monitorUrl must be an https URL without query or fragment (http only with allowPrivate)");
  if (typeof opts.serviceId !== "string" && typeof opts.serviceId !== "function") throw new TypeError("x402-guard: the monitor source needs serviceId");
  return {
    name: "monitor",
    async decide(req, signal) {
      const id = typeof opts.serviceId === "function" ? opts.serviceId(req.url) : opts.serviceId;
      if (typeof id !== "string" || !SERVICE_ID.test(id)) throw new GuardError("preflight_unavailable");
      let rec, jwks;
      try {
        rec = await getJSON(fetchImpl, `${base}/api/v1/reliability/${encodeURIComponent(id)}`, signal);
        if (rec.status === 404) throw unverified("not_monitored");
        if (rec.status !== 200 || rec.json === undefined) throw new GuardError("preflight_unavailable");
        jwks = await getJSON(fetchImpl, `${base}/.well-known/jwks.json`, signal);
      } catch (e) {
        if (e instanceof GuardError) throw e;
        throw new GuardError("preflight_unavailable");
      }
      if (jwks.status !== 200 || jwks.json === undefined) throw unverified("jwks_unavailable");
      let keys;
      try {
        keys = parseJWKS(jwks.json);
      } catch {
        throw unverified("jwks_unavailable");
      }
      let kid;
      try {
        kid = verifyDocument(rec.json, keys);
      } catch (e) {
        if (e instanceof VerifyError) throw unverified("signature_invalid");
        throw e;
      }
      const t = now();
      const { verifiedAt } = validate(rec.json, id, t);
      return { ...decideRecord(rec.json, req.url, verifiedAt, t), kid };
    },
  };
}
