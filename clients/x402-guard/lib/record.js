// What the guard reads of a preflight record (docs/report-format.md,
// "preflight"): the document, its revision, the decision, the reasons and
// the terms_sha256 of the entry the preflight checked. Nothing else: the
// probes' details belong to the preflight and may change between revisions.
export class GuardError extends Error {
  // reason is the closed-form abort reason (README, "Abort reasons").
  constructor(reason, record) {
    super(`x402-guard: ${reason}`);
    this.reason = reason;
    if (record !== undefined) this.record = record;
  }
}

export const DECISIONS = ["GO", "HOLD", "STOP"];
const REASON = /^[a-z0-9_]{1,64}$/;
const HEX64 = /^[0-9a-f]{64}$/;

export const isReason = (s) => typeof s === "string" && REASON.test(s);
export const isTermsHash = (s) => typeof s === "string" && HEX64.test(s);

// readPreflight checks a parsed `payability preflight --json` record and
// returns {decision, reasons, termsSha256, revision, record}; a record of
// the wrong shape is no decision (preflight_unavailable).
export function readPreflight(rec) {
  const ok =
    rec !== null &&
    typeof rec === "object" &&
    typeof rec.document === "string" &&
    rec.document.startsWith("x402-preflight/") &&
    typeof rec.revision === "string" &&
    DECISIONS.includes(rec.decision) &&
    Array.isArray(rec.reasons) &&
    rec.reasons.every(isReason) &&
    (rec.terms_sha256 === null || isTermsHash(rec.terms_sha256)) &&
    (rec.decision === "GO") === (rec.reasons.length === 0);
  if (!ok) throw new GuardError("preflight_unavailable");
  return { decision: rec.decision, reasons: [...rec.reasons], termsSha256: rec.terms_sha256, revision: rec.revision, record: rec };
}
