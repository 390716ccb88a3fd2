// Type declarations of @payability/x402-guard (hand-written; the package is
// plain ESM JavaScript with no build step).
// Structural: any @x402/core x402Client (2.11 and later) fits, whichever
// copy of @x402/core it comes from.

/** A preflight decision. */
export type Decision = "GO" | "HOLD" | "STOP";

/**
 * The closed-form abort reasons: `preflight_stop:<reason>`,
 * `preflight_hold:<reason>`, `terms_mismatch`, `terms_incomplete`,
 * `preflight_unavailable`, `record_unverified:<code>`.
 */
export type AbortReason =
  | `preflight_stop:${string}`
  | `preflight_hold:${string}`
  | "terms_mismatch"
  | "terms_incomplete"
  | "preflight_unavailable"
  | `record_unverified:${string}`;

/** What a decision source is asked. */
export interface PreflightRequest {
  url: string;
  /** "GET", "POST", or "" (the preflight finds the gated method). */
  method: string;
  body?: string;
  /** CAIP-2. */
  network: string | null;
  scheme: string;
  asset: string;
  x402Version: number;
  /** terms_sha256 of the entry being signed. */
  termsSha256: string;
}

/** A decision source's answer. */
export interface SourceDecision {
  decision: Decision;
  reasons: string[];
  /** terms_sha256 of the entry the source checked; null when none. */
  termsSha256: string | null;
  revision?: string | null;
  record?: unknown;
}

/** A decision source: "local" and "monitor" are built in. */
export interface DecisionSource {
  name?: string;
  decide(req: PreflightRequest, signal: AbortSignal): Promise<SourceDecision>;
}

/** What the guard did for one payment, given to onDecision. */
export interface GuardOutcome {
  proceed: boolean;
  /** null when the payment proceeds on a decision. */
  reason: AbortReason | null;
  url: string;
  method: string | null;
  termsSha256: string | null;
  source: string;
  decision: Decision | null;
  reasons: string[];
  revision: string | null;
  /** The preflight record (local) or the signed reliability record (monitor). */
  record: unknown;
}

export interface GuardOptions {
  /** Where decisions come from (default "local"). */
  source?: "local" | "monitor" | DecisionSource;
  /** local: the payability binary (default "payability" on PATH). */
  binary?: string;
  /** local: --allow-private; monitor: allow an http monitorUrl. */
  allowPrivate?: boolean;
  /** monitor: the monitor's base URL. */
  monitorUrl?: string;
  /** monitor: the endpoint's id on the monitor. */
  serviceId?: string | ((url: string) => string);
  /** The gated method, GET or POST (default: the preflight finds it). */
  method?: string | ((url: string) => string | undefined);
  /** The JSON body the agent pays for (every POST of the preflight carries it). */
  body?: string | ((url: string) => string | undefined);
  /** The budget in atomic units of the asset (--max-amount). */
  maxAmount?: string;
  /** No decision within this many ms aborts (default 10000). */
  timeoutMs?: number;
  /** How long a decision is reused for (URL, method, terms_sha256) (default 300000). */
  cacheTtlMs?: number;
  /** Proceed on HOLD. */
  allowHold?: boolean;
  /** Proceed on a HOLD whose reasons are all listed. */
  allowReasons?: string[];
  /** Proceed when no decision could be obtained (preflight_unavailable). Not recommended. */
  failOpen?: boolean;
  /** Called once per payment with what the guard did. */
  onDecision?: (outcome: GuardOutcome) => void;
  /** monitor: the fetch to use (default globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  /** The clock, in ms (default Date.now). */
  now?: () => number;
}

export interface PaymentCreationContextLike {
  paymentRequired: { x402Version: number; resource?: { url?: string }; accepts: unknown[] };
  selectedRequirements: Record<string, unknown>;
}

export interface Guard {
  /** The onBeforePaymentCreation hook. */
  hook(ctx: PaymentCreationContextLike): Promise<void | { abort: true; reason: AbortReason }>;
  /** What the guard decides for a context, without aborting anything. */
  check(ctx: PaymentCreationContextLike): Promise<GuardOutcome>;
  /** Empties the decision cache. */
  clear(): void;
}

/** What guard() needs of a client: @x402/core's x402Client has it. */
export interface HookableClient {
  onBeforePaymentCreation(hook: (ctx: PaymentCreationContextLike) => Promise<void | { abort: true; reason: string }>): unknown;
}

/** Registers the guard on an x402Client and returns the client. */
export function guard<T extends HookableClient>(client: T, options?: GuardOptions): T;
export function createGuard(options?: GuardOptions): Guard;
/** The guard's reason in an error an x402 client threw; null when it is not the guard's. */
export function abortReason(err: unknown): AbortReason | null;
export const ABORT_REASONS: readonly string[];
export const DEFAULT_TIMEOUT_MS: number;
export const DEFAULT_CACHE_TTL_MS: number;

/** terms_sha256 of an entry of a challenge; null when its terms are incomplete. */
export function termsSha256(paymentRequired: { x402Version: number; resource?: { url?: string } }, entry: unknown): string | null;
export interface Terms {
  url: string;
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
  maxTimeoutSeconds: number;
}
export function termsOf(version: number, paymentRequired: unknown, entry: unknown): Terms | null;
export function hashTerms(terms: Terms): string;
export function networkCAIP2(version: number, network: unknown): string | null;
export const V1_NETWORKS: Readonly<Record<string, string>>;

/** RFC 8785 for values with safe-integer numbers only. */
export function canonicalize(value: unknown): string;
export class CanonicalError extends Error {
  code: "unsafe_number" | "invalid_string" | "not_json" | "too_deep";
}
/** A JWK Set of Ed25519 keys, read strictly: kid -> key. */
export function parseJWKS(doc: unknown): Map<string, import("node:crypto").KeyObject>;
/** Verifies a signed document; returns the kid that signed it. */
export function verifyDocument(doc: unknown, keys: Map<string, import("node:crypto").KeyObject>): string;
export function thumbprint(x: string): string;
export class VerifyError extends Error {
  code: "malformed" | "no_signature" | "bad_alg" | "unknown_kid" | "bad_signature" | "bad_jwks";
}
export class GuardError extends Error {
  reason: AbortReason;
  record?: unknown;
}
export function localSource(options?: { binary?: string; allowPrivate?: boolean; maxAmount?: string }): DecisionSource;
export function preflightArgs(req: Partial<PreflightRequest> & { url: string }, options: { allowPrivate?: boolean; maxAmount?: string }): string[];
export function monitorSource(options: {
  monitorUrl: string;
  serviceId: string | ((url: string) => string);
  allowPrivate?: boolean;
  fetch?: typeof globalThis.fetch;
  now?: () => number;
}): DecisionSource;
export function normalizeURL(url: string): string | null;
