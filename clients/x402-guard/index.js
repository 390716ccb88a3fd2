// @payability/x402-guard: payability's preflight in the payment path of an
// @x402/core x402Client (and so of @x402/fetch and @x402/axios). Before the
// client creates a payment it obtains a preflight decision for the resource,
// binds it to the exact entry being signed by terms_sha256, and aborts on
// STOP, on HOLD (unless allowed), on a mismatch, and on no decision in time.
import { DECISIONS, GuardError, isReason } from "./lib/record.js";
import { localSource } from "./lib/local.js";
import { monitorSource } from "./lib/monitor.js";
import { networkCAIP2, resourceURL, termsSha256 } from "./lib/terms.js";

export { termsSha256, termsOf, hashTerms, networkCAIP2, V1_NETWORKS } from "./lib/terms.js";
export { canonicalize, CanonicalError } from "./lib/canonical.js";
export { parseJWKS, verifyDocument, thumbprint, VerifyError } from "./lib/verify.js";
export { GuardError } from "./lib/record.js";
export { localSource, preflightArgs } from "./lib/local.js";
export { monitorSource, normalizeURL } from "./lib/monitor.js";

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;
const MAX_CACHE_ENTRIES = 1024;
const ABORT_PREFIX = "Payment creation aborted: ";

// Every abort reason the guard gives, as patterns (README, "Abort reasons").
export const ABORT_REASONS = Object.freeze([
  "preflight_stop:<reason>",
  "preflight_hold:<reason>",
  "terms_mismatch",
  "terms_incomplete",
  "preflight_unavailable",
  "record_unverified:<code>",
]);

// abortReason reads the guard's reason out of the error an x402 client threw
// ("Payment creation aborted: <reason>", possibly wrapped by @x402/fetch's
// "Failed to create payment payload: …"); null when it is not the guard's.
export function abortReason(err) {
  const msg = err instanceof Error ? err.message : String(err ?? "");
  const i = msg.lastIndexOf(ABORT_PREFIX);
  if (i < 0) return null;
  const reason = msg.slice(i + ABORT_PREFIX.length);
  return /^(terms_mismatch|terms_incomplete|preflight_unavailable|(preflight_stop|preflight_hold|record_unverified):[a-z0-9_]{1,64})$/.test(reason) ? reason : null;
}

const METHODS = ["GET", "POST"];

function pick(v, url) {
  return typeof v === "function" ? v(url) : v;
}

function checkOptions(o) {
  const sourceName = o.source ?? "local";
  if (typeof sourceName !== "string" && (typeof sourceName !== "object" || typeof sourceName.decide !== "function")) {
    throw new TypeError("x402-guard: source must be \"local\" or \"monitor\"");
  }
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0)) throw new TypeError("x402-guard: timeoutMs must be a positive number");
  if (o.cacheTtlMs !== undefined && !(Number.isFinite(o.cacheTtlMs) && o.cacheTtlMs >= 0)) throw new TypeError("x402-guard: cacheTtlMs must be a number >= 0");
  if (o.maxAmount !== undefined && !/^[0-9]{1,78}$/.test(o.maxAmount)) throw new TypeError("x402-guard: maxAmount must be a decimal integer of atomic units");
  if (o.allowReasons !== undefined && !(Array.isArray(o.allowReasons) && o.allowReasons.every(isReason))) throw new TypeError("x402-guard: allowReasons must be reason codes");
  if (typeof o.method === "string" && !METHODS.includes(o.method.toUpperCase())) throw new TypeError("x402-guard: method must be GET or POST");
}

function makeSource(o) {
  if (typeof o.source === "object") return o.source;
  switch (o.source ?? "local") {
    case "local":
      return localSource({ binary: o.binary, allowPrivate: o.allowPrivate, maxAmount: o.maxAmount });
    case "monitor":
      return monitorSource({ monitorUrl: o.monitorUrl, serviceId: o.serviceId, allowPrivate: o.allowPrivate, fetch: o.fetch, now: o.now });
    case "service":
      // Not built: paying for the record from inside the payment hook (README, "Decision sources").
      throw new TypeError("x402-guard: the service source is not available yet; use \"local\" or \"monitor\"");
  }
  throw new TypeError("x402-guard: source must be \"local\" or \"monitor\"");
}

// createGuard returns {hook, check, clear}: hook is the
// onBeforePaymentCreation hook; check(ctx) resolves to the outcome
// {proceed, reason, decision}; clear() empties the cache.
export function createGuard(options = {}) {
  checkOptions(options);
  const source = makeSource(options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  const allowReasons = new Set(options.allowReasons ?? []);
  // key -> {at, promise}: a decision in flight is shared; a settled one is
  // kept ttl ms; a failure is not kept.
  const cache = new Map();

  function obtain(key, req) {
    const hit = cache.get(key);
    if (hit && (hit.at === null || now() - hit.at < ttl)) return hit.promise;
    cache.delete(key);
    const ac = new AbortController();
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        ac.abort();
        reject(new GuardError("preflight_unavailable"));
      }, timeoutMs);
      timer.unref?.();
    });
    const entry = { at: null, promise: null };
    entry.promise = Promise.race([Promise.resolve().then(() => source.decide(req, ac.signal)), timeout]).then(
      (d) => {
        clearTimeout(timer);
        entry.at = now();
        if (ttl === 0) cache.delete(key);
        return d;
      },
      (e) => {
        clearTimeout(timer);
        ac.abort();
        if (cache.get(key) === entry) cache.delete(key);
        throw e instanceof GuardError ? e : new GuardError("preflight_unavailable");
      },
    );
    if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value);
    cache.set(key, entry);
    return entry.promise;
  }

  async function check(ctx) {
    const pr = ctx?.paymentRequired;
    const entry = ctx?.selectedRequirements;
    const version = pr?.x402Version;
    const url = resourceURL(version, pr, entry);
    const event = { url, method: null, termsSha256: null, source: source.name ?? "custom", decision: null, reasons: [], revision: null, record: null };
    const done = (proceed, reason) => {
      const out = { proceed, reason, ...event };
      try {
        options.onDecision?.(out);
      } catch {
        // a callback's failure changes nothing
      }
      return out;
    };
    const terms = termsSha256(pr, entry);
    if (!url || terms === null) return done(false, "terms_incomplete");
    event.termsSha256 = terms;
    let method, body;
    try {
      method = pick(options.method, url);
      method = method === undefined || method === null ? "" : String(method).toUpperCase();
      body = pick(options.body, url);
      if (method !== "" && !METHODS.includes(method)) throw new GuardError("preflight_unavailable");
      // The body is JSON the agent pays for: it can never be read as the
      // binary's @FILE form.
      if (body !== undefined && body !== null && (typeof body !== "string" || (JSON.parse(body), false))) throw new GuardError("preflight_unavailable");
    } catch {
      return done(options.failOpen === true, "preflight_unavailable");
    }
    event.method = method || null;
    // --network takes CAIP-2: a v1 entry's legacy name is mapped (the terms
    // hash already proved it maps).
    const req = { url, method, body, network: networkCAIP2(version, entry.network), x402Version: version, scheme: entry.scheme, asset: entry.asset, termsSha256: terms };
    let d;
    try {
      d = await obtain(`${url}\n${method}\n${terms}`, req);
    } catch (e) {
      const reason = e instanceof GuardError ? e.reason : "preflight_unavailable";
      if (e?.record !== undefined) event.record = e.record;
      return done(reason === "preflight_unavailable" && options.failOpen === true, reason);
    }
    // A custom source's answer of the wrong shape is no decision.
    if (!d || typeof d !== "object" || !DECISIONS.includes(d.decision) || !Array.isArray(d.reasons) || !d.reasons.every(isReason)) {
      return done(options.failOpen === true, "preflight_unavailable");
    }
    Object.assign(event, { decision: d.decision, reasons: d.reasons, revision: d.revision ?? null, record: d.record ?? null });
    if (d.decision === "STOP") return done(false, `preflight_stop:${d.reasons[0] ?? "unknown"}`);
    // The entry being signed must be the entry that was checked.
    if (d.termsSha256 !== terms) return done(false, "terms_mismatch");
    if (d.decision === "HOLD") {
      const allowed = options.allowHold === true || (d.reasons.length > 0 && d.reasons.every((r) => allowReasons.has(r)));
      return done(allowed, allowed ? null : `preflight_hold:${d.reasons[0] ?? "unknown"}`);
    }
    return done(true, null); // GO
  }

  async function hook(ctx) {
    let out;
    try {
      out = await check(ctx);
    } catch {
      out = { proceed: false, reason: "preflight_unavailable" };
    }
    return out.proceed ? undefined : { abort: true, reason: out.reason };
  }

  return { hook, check, clear: () => cache.clear() };
}

// guard registers the guard's hook on an x402Client (before any other
// onBeforePaymentCreation hook registered later) and returns the client.
export function guard(client, options = {}) {
  if (!client || typeof client.onBeforePaymentCreation !== "function") {
    throw new TypeError("x402-guard: guard(client, options) needs an @x402/core x402Client");
  }
  const g = createGuard(options);
  client.onBeforePaymentCreation(g.hook);
  return client;
}
