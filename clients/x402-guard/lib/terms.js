// terms_sha256 exactly as payability defines it (docs/preflight.md,
// "terms_sha256"): SHA-256, lower-case hex, of the RFC 8785 form of
// {url, scheme, network, asset, payTo, amount, maxTimeoutSeconds} of one
// accepts entry. url is the resource URL the challenge states (v2
// resource.url, v1 the entry's resource); network is CAIP-2 (a v1 legacy
// name mapped by the v1 clients' own table); amount is the entry's string
// (v2 amount, v1 maxAmountRequired); maxTimeoutSeconds a safe integer.
// Incomplete terms have no hash (null), never a made-up one.
import { createHash } from "node:crypto";
import { canonicalize } from "./canonical.js";

// The CAIP-2 chain id grammar (namespace 3-8 of [-a-z0-9], reference 1-32
// of [-_a-zA-Z0-9]).
const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;

// The v1 legacy network names v1 clients know, and their CAIP-2 ids (the
// table payability's lint uses, docs/lint.md).
export const V1_NETWORKS = Object.freeze({
  abstract: "eip155:2741",
  "abstract-testnet": "eip155:11124",
  story: "eip155:1514",
  educhain: "eip155:41923",
  "skale-base-sepolia": "eip155:324705682",
  base: "eip155:8453",
  "base-sepolia": "eip155:84532",
  avalanche: "eip155:43114",
  "avalanche-fuji": "eip155:43113",
  iotex: "eip155:4689",
  sei: "eip155:1329",
  "sei-testnet": "eip155:1328",
  polygon: "eip155:137",
  "polygon-amoy": "eip155:80002",
  peaq: "eip155:3338",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
});

export const isCAIP2 = (s) => typeof s === "string" && CAIP2.test(s);

// networkCAIP2 is an entry's CAIP-2 network, or null: a v2 entry states a
// CAIP-2 id; a v1 entry a legacy name (mapped) or a CAIP-2 id already.
export function networkCAIP2(version, network) {
  if (isCAIP2(network)) return network;
  if (version === 1 && typeof network === "string" && Object.hasOwn(V1_NETWORKS, network)) return V1_NETWORKS[network];
  return null;
}

const str = (o, k) => (o && typeof o === "object" && typeof o[k] === "string" ? o[k] : "");

// resourceURL is the resource URL the challenge states for an entry: v2
// paymentRequired.resource.url, v1 the entry's resource. "" when absent.
export function resourceURL(version, paymentRequired, entry) {
  if (version === 1) return str(entry, "resource");
  return str(paymentRequired?.resource, "url");
}

// termsOf reads the terms of one entry, or null when a member is missing or
// of the wrong type, or the network has no CAIP-2 id.
export function termsOf(version, paymentRequired, entry) {
  if (!entry || typeof entry !== "object") return null;
  const t = {
    url: resourceURL(version, paymentRequired, entry),
    scheme: str(entry, "scheme"),
    network: networkCAIP2(version, entry.network) ?? "",
    asset: str(entry, "asset"),
    payTo: str(entry, "payTo"),
    amount: str(entry, version === 1 ? "maxAmountRequired" : "amount"),
    maxTimeoutSeconds: entry.maxTimeoutSeconds,
  };
  for (const k of ["url", "scheme", "network", "asset", "payTo", "amount"]) if (t[k] === "") return null;
  if (!Number.isSafeInteger(t.maxTimeoutSeconds)) return null;
  return t;
}

// hashTerms is terms_sha256 of terms (termsOf's result).
export function hashTerms(terms) {
  return createHash("sha256").update(canonicalize(terms), "utf8").digest("hex");
}

// termsSha256 is the terms hash of the entry a client is about to sign,
// given the challenge it came from; null when the terms are incomplete.
export function termsSha256(paymentRequired, entry) {
  const version = paymentRequired?.x402Version;
  if (version !== 1 && version !== 2) return null;
  const t = termsOf(version, paymentRequired, entry);
  return t ? hashTerms(t) : null;
}
