// Package x402check is payability's public Go API: the preflight that tells
// an agent whether to pay an x402 endpoint (GO, HOLD or STOP), x402 protocol
// lint, terms_sha256, and an http.RoundTripper that runs the preflight on
// every 402 before the caller's x402 client can pay.
//
// It is a thin facade over the code the payability binary runs: Preflight's
// record is the record `payability preflight --json` prints, Lint's report
// the one `payability lint --json` prints, and TermsHash the hashes
// `payability terms-hash --json` prints (docs/preflight.md,
// docs/report-format.md). Every request goes through payability's target
// policy and address guard: loopback and private addresses are refused
// unless Options.AllowPrivate is set.
//
// GO means no red flag was observed at the check-end time; it is not a
// guarantee that a payment will settle or be honoured. No check can see a
// seller that verifies and settles a payment and then does not deliver.
//
// # Binding the decision to the payment
//
// A preflight decision protects a payment only if the entry the client signs
// is the entry the preflight checked. Compare TermsSHA256 of the record with
// the hash of the requirements the client is about to sign
// (RequirementsHash) in the client's before-payment hook. The Go x402 SDK's
// hook context carries the requirements but not the resource URL; the Guard
// transport knows it: Guard.Checked(url) returns the terms_sha256 of the
// last GO for that resource.
//
// # Compatibility
//
// The package follows semantic versioning with the module (docs/api-go.md):
// exported names keep their meaning; record types may gain fields; the JSON
// of a record is payability's and follows the record's document revision.
package x402check
