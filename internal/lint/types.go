// Package lint grades one 402 response against the published x402-lint/v1
// rules: x402 protocol conformance for any seller (v2 header, v1 body, EVM and
// Solana), not only the fleet's challenge shape the criteria ops grade. It is
// pure: a capture and the called URL in, findings out.
//
// Custody: a Result carries rule ids, field paths and protocol identifiers
// (x402Version, scheme, network), never addresses, amounts, memos or other
// fetched values; every message is static text.
package lint

import (
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// Severity is how much a finding matters.
type Severity string

const (
	// Error: a standard client cannot pay, or would pay wrong terms.
	Error Severity = "error"
	// Warn: payment works but is fragile, or a SHOULD of the specs is not met.
	Warn Severity = "warn"
	// Info: worth knowing; never a fault of the seller.
	Info Severity = "info"
)

// Leg names where a finding was read.
type Leg string

const (
	LegHeader Leg = "header" // the v2 PAYMENT-REQUIRED header, base64 JSON
	LegBody   Leg = "body"   // the JSON body (v1, or a v2 document found only in the body)
	LegHTTP   Leg = "http"   // the HTTP response itself (status, headers)
)

// Finding is one rule that did not hold. Field is a JSON path into the leg
// (accepts[1].extra.feePayer, resource.url, x402Version) or, for LegHTTP, a
// header name or "status". Entry is the accepts index the finding is about,
// nil when it is about the leg or the response as a whole.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Leg      Leg      `json:"leg"`
	Entry    *int     `json:"entry"`
	Field    string   `json:"field"`
	Message  string   `json:"message"`
}

// EntrySummary names one accepts entry by its protocol identifiers and counts
// its findings.
type EntrySummary struct {
	Index       int    `json:"index"`
	Leg         Leg    `json:"leg"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
	Errors      int    `json:"errors"`
	Warnings    int    `json:"warnings"`
}

// Dialect says which legs the response carried.
type Dialect struct {
	V1Body   bool `json:"v1_body"`
	V2Header bool `json:"v2_header"`
}

// Result is what lint decided about one response.
type Result struct {
	Status   int            `json:"status"`
	Dialect  Dialect        `json:"dialect"`
	Entries  []EntrySummary `json:"entries"`
	Findings []Finding      `json:"findings"`
	// Conforms is true when no finding is an Error.
	Conforms bool `json:"conforms"`
}

// Input is what lint grades: the one response fetched with Method from URL,
// and the check-end time (for sign-in-with-x times). Chain holds opt-in
// chain-readiness observations made by the caller (nil when none were
// asked for); the lint helper defines its fields.
type Input struct {
	URL     string
	Method  string
	Capture capture.Capture
	Now     time.Time
	Chain   *ChainFacts
}

// ChainFacts are chain-readiness observations (opt-in RPC look-ups), made
// outside this package (internal/chain, called by ops) and graded here. It
// holds fetched chain values (token names) in memory only: findings carry
// rule ids and field paths, never them.
type ChainFacts struct {
	Observations []ChainObservation
}

// ChainObservation is what the RPC node said about one accepts entry, named
// by its leg and index (ChainQueries lists them).
type ChainObservation struct {
	Leg    Leg
	Entry  int
	Family Family
	// Unavailable: the node did not answer (transport, RPC error, malformed
	// answer); nothing else is read. Graded as info chain_unavailable.
	Unavailable bool
	// OtherNetwork: the node serves another chain than the entry's network.
	OtherNetwork bool
	// Skipped: the look-up was not made, the caller's cap of distinct
	// look-ups per lint being reached. Graded as info chain_lookup_skipped.
	Skipped bool

	// Solana: whether the asset is a mint of the Token or Token-2022
	// program; whether the associated token account of (payTo, asset) under
	// that program exists; and whether it is a token account of the asset
	// owned by payTo.
	AssetIsMint       bool
	ATAExists         bool
	ATAIsTokenAccount bool

	// EVM: the asset contract's name() and version(), when it answered each
	// with an ABI string.
	Name, Version         string
	NameRead, VersionRead bool
}

// ChainQuery is one look-up ops may make for chain readiness: the entry's
// network (CAIP-2), payTo and asset, when all are valid for the family.
type ChainQuery struct {
	Leg     Leg
	Entry   int
	Family  Family
	Network string
	PayTo   string
	Asset   string
}
