package x402check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/target"
)

// Decision is a preflight's answer.
type Decision string

// The decisions: GO pay, HOLD ask a human, STOP do not pay.
const (
	Go   Decision = "GO"
	Hold Decision = "HOLD"
	Stop Decision = "STOP"
)

// Options are a check's request and the agent's constraints. The zero value
// is a preflight of the gated method (GET, then POST) with no constraint.
type Options struct {
	// Method is the gated method, GET or POST; "" finds it (GET, then POST
	// when GET is not a 402). Lint sends GET when it is "".
	Method string
	// Body is the JSON every POST carries (nil: {}), at most 262,144 bytes.
	Body []byte
	// Network, Scheme and Asset restrict the entry the preflight selects
	// (Network a CAIP-2 id such as eip155:8453).
	Network, Scheme, Asset string
	// MaxAmount is the budget: the most atomic units of the asset the agent
	// pays (a decimal integer); "" no budget.
	MaxAmount string
	// AllowPrivate allows loopback and private target addresses (a seller's
	// staging, tests). Without it the address guard refuses them.
	AllowPrivate bool
}

// InputError says which argument was refused, in closed form: Arg is the
// argument (url, method, body, network, max-amount) and Rule a fixed code or
// sentence, never a byte of the input.
type InputError struct {
	Arg  string
	Rule string
}

func (e *InputError) Error() string { return "x402check: " + e.Arg + " " + e.Rule }

func runner(allowPrivate bool) ops.Runner {
	return ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: buildinfo.UserAgent}), Now: time.Now}
}

// inputError maps the ops layer's refusals to an *InputError.
func inputError(err error) error {
	var pe *target.PolicyError
	var ae *ops.ArgError
	switch {
	case errors.As(err, &pe):
		return &InputError{Arg: "url", Rule: pe.Rule}
	case errors.As(err, &ae):
		return &InputError{Arg: ae.Arg, Rule: ae.Problem}
	case errors.Is(err, ops.ErrLintMethod):
		return &InputError{Arg: "method", Rule: "must be GET or POST"}
	}
	return err
}

// marshal writes v as the CLI's --json does (no HTML escaping), compact.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// SelectedEntry names the entry a preflight selected, by protocol
// identifiers only.
type SelectedEntry struct {
	Leg         string `json:"leg"` // "header" (v2) or "body" (v1)
	Index       int    `json:"index"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"` // CAIP-2
}

// PreflightRecord is a preflight's record: the members an agent decides on,
// read from the record `payability preflight --json` prints, which JSON
// returns (and MarshalJSON writes) whole.
type PreflightRecord struct {
	Document  string   `json:"document"` // x402-preflight/v1
	Revision  string   `json:"revision"`
	URL       string   `json:"url"`
	Method    string   `json:"method"`
	CheckedAt string   `json:"checked_at"`
	Decision  Decision `json:"decision"`
	// Reasons are closed-form codes, STOP reasons first (docs/preflight.md).
	Reasons []string `json:"reasons"`
	// FetchError is the closed-form fetch error (dns_failed, timeout,
	// address_refused, …) when the decision is STOP unreachable; "" otherwise.
	FetchError string `json:"fetch_error,omitempty"`
	// Dialects are the x402 versions the payment probes went out in, the
	// selected entry's first (revision 2 probes every advertised dialect).
	Dialects []int `json:"dialects"`
	// Selected is nil when no entry was selected.
	Selected *SelectedEntry `json:"selected_entry"`
	// TermsSHA256 is the terms hash of the selected entry; "" when none.
	TermsSHA256 string `json:"-"`
	Summary     string `json:"summary"`
	raw         []byte
}

// JSON is the whole record, as `payability preflight --json` prints it
// (compact).
func (r *PreflightRecord) JSON() []byte { return append([]byte(nil), r.raw...) }

// MarshalJSON writes the whole record.
func (r *PreflightRecord) MarshalJSON() ([]byte, error) {
	if r.raw == nil {
		return nil, errors.New("x402check: a record is made by Preflight or ParsePreflightRecord")
	}
	return r.JSON(), nil
}

// ParsePreflightRecord reads a record as `payability preflight --json`
// prints it (signed or not), keeping it whole.
func ParsePreflightRecord(b []byte) (*PreflightRecord, error) {
	var r PreflightRecord
	var terms struct {
		TermsSHA256 *string `json:"terms_sha256"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, errors.New("x402check: not a preflight record")
	}
	if err := json.Unmarshal(b, &terms); err != nil {
		return nil, errors.New("x402check: not a preflight record")
	}
	if r.Decision != Go && r.Decision != Hold && r.Decision != Stop {
		return nil, errors.New("x402check: not a preflight record")
	}
	if terms.TermsSHA256 != nil {
		r.TermsSHA256 = *terms.TermsSHA256
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, errors.New("x402check: not a preflight record")
	}
	r.raw = compact.Bytes()
	return &r, nil
}

// Preflight runs payability's preflight (x402-preflight) against url: the
// unpaid challenge, its lint, a second fetch, two payment probes that cannot
// pay, HEAD and the other method; then it decides. The only errors are an
// *InputError (a refused URL or option); a seller that is down, broken or
// fails open is a decision.
func Preflight(ctx context.Context, url string, o Options) (*PreflightRecord, error) {
	args := ops.PreflightArgs{URL: url, Method: o.Method, Body: o.Body, Network: o.Network, Scheme: o.Scheme, Asset: o.Asset, MaxAmount: o.MaxAmount}
	req, err := args.Request()
	if err != nil {
		return nil, inputError(err)
	}
	rep, err := runner(o.AllowPrivate).Preflight(ctx, req)
	if err != nil {
		return nil, inputError(err)
	}
	raw, err := marshal(rep)
	if err != nil {
		return nil, err
	}
	return ParsePreflightRecord(raw)
}

// Finding is one lint finding: a rule id, a severity and where.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"` // error, warn or info
	Leg      string `json:"leg"`
	Entry    *int   `json:"entry"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

// LintReport is an x402-lint report, as `payability lint --json` prints it.
type LintReport struct {
	URL       string    `json:"url"`
	Method    string    `json:"method"`
	Status    int       `json:"status"`
	Conforms  bool      `json:"conforms"`
	Findings  []Finding `json:"findings"`
	CheckedAt string    `json:"checked_at"`
	raw       []byte
}

// JSON is the whole report (compact).
func (r *LintReport) JSON() []byte { return append([]byte(nil), r.raw...) }

// MarshalJSON writes the whole report.
func (r *LintReport) MarshalJSON() ([]byte, error) {
	if r.raw == nil {
		return nil, errors.New("x402check: a report is made by Lint")
	}
	return r.JSON(), nil
}

// Lint checks url's unpaid answer against x402-lint (one request: GET, or
// POST of Options.Body). Only Method, Body and AllowPrivate are used.
func Lint(ctx context.Context, url string, o Options) (*LintReport, error) {
	if o.Body != nil && (len(o.Body) > ops.MaxPreflightBody || !json.Valid(o.Body)) {
		return nil, &InputError{Arg: "body", Rule: "must be JSON of at most 262144 bytes"}
	}
	rep, err := runner(o.AllowPrivate).Lint(ctx, url, o.Method, o.Body)
	if err != nil {
		return nil, inputError(err)
	}
	raw, err := marshal(rep)
	if err != nil {
		return nil, err
	}
	var out LintReport
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	out.raw = raw
	return &out, nil
}

// EntryHash is the terms hash of one entry of a challenge.
type EntryHash struct {
	Leg         string `json:"leg"` // "header" (v2) or "body" (v1)
	Index       int    `json:"index"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"` // as the entry states it (a v1 name stays a v1 name)
	// TermsSHA256 is "" when the entry's terms are incomplete.
	TermsSHA256 string `json:"terms_sha256"`
}

// ErrNotAChallenge: TermsHash's input is neither a PAYMENT-REQUIRED value
// nor a JSON challenge.
var ErrNotAChallenge = errors.New("x402check: neither a PAYMENT-REQUIRED value nor a JSON challenge")

// TermsHash returns terms_sha256 of every entry a standard client reads in
// one challenge: a PAYMENT-REQUIRED header value (base64 JSON, v2) or a JSON
// body (v1, or a decoded v2 document), as `payability terms-hash` does.
func TermsHash(challenge []byte) ([]EntryHash, error) {
	hs, ok := preflight.ParseChallenge(challenge)
	if !ok {
		return nil, ErrNotAChallenge
	}
	out := make([]EntryHash, 0, len(hs))
	for _, h := range hs {
		e := EntryHash{Leg: string(h.Leg), Index: h.Index, X402Version: h.X402Version, Scheme: h.Scheme, Network: h.Network}
		if h.TermsSHA256 != nil {
			e.TermsSHA256 = *h.TermsSHA256
		}
		out = append(out, e)
	}
	return out, nil
}

// ErrIncompleteTerms: the requirements lack a member terms_sha256 commits
// to, or state a network with no CAIP-2 id.
var ErrIncompleteTerms = errors.New("x402check: the requirements' terms are incomplete")

// RequirementsHash is terms_sha256 of the payment requirements a client is
// about to sign (one accepts entry as JSON): for x402 v2 the resource URL is
// the challenge's resource.url, given here; a v1 entry carries its own
// resource, and resourceURL is not used. Use it in the x402 client's
// before-payment hook and refuse unless it equals the preflight's
// TermsSHA256 (or Guard.Checked).
func RequirementsHash(x402Version int, resourceURL string, requirements []byte) (string, error) {
	var doc map[string]any
	switch x402Version {
	case 2:
		doc = map[string]any{"x402Version": 2, "resource": map[string]any{"url": resourceURL}, "accepts": []json.RawMessage{requirements}}
	case 1:
		doc = map[string]any{"x402Version": 1, "accepts": []json.RawMessage{requirements}}
	default:
		return "", &InputError{Arg: "x402Version", Rule: "must be 1 or 2"}
	}
	if !json.Valid(requirements) {
		return "", ErrIncompleteTerms
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return "", ErrIncompleteTerms
	}
	hs, err := TermsHash(raw)
	if err != nil || len(hs) != 1 || hs[0].TermsSHA256 == "" {
		return "", ErrIncompleteTerms
	}
	return hs[0].TermsSHA256, nil
}
