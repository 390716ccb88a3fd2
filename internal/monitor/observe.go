package monitor

import (
	"context"
	"slices"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/verdict"
)

// Observation is what one op saw of one endpoint, closed-form only.
type Observation struct {
	// Passing: preflight GO, lint conforms, check POPULATED, memo BOUND,
	// probe with no exposure and both rails PRESENT-FAIL-CLOSED.
	Passing bool
	// State is the op's word (decision, state, outcome or lint's
	// conforms/warnings/errors).
	State string
	// Reasons are closed-form codes: reason codes, rule ids, exposures.
	Reasons []string
	// TermsSHA256 is preflight's hash of the live terms.
	TermsSHA256 string
	// Network is the CAIP-2 network of the entry preflight selected (the
	// entry TermsSHA256 hashes); empty when none was selected.
	Network string
	// Scheme (exact, upto or other) and X402Version (1, 2) of the entry
	// the op graded: preflight's selected entry, lint's first entry of its
	// primary leg (see EntryFacts); empty and 0 when none.
	Scheme      string
	X402Version int
}

// Observer runs one op on one endpoint. A broken target is an observation;
// the error is ours (a refused URL, a failure inside payability) and makes
// the scheduled check retry.
type Observer interface {
	Observe(ctx context.Context, e Endpoint) (Observation, error)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, e Endpoint) (Observation, error)

// Observe implements Observer.
func (f ObserverFunc) Observe(ctx context.Context, e Endpoint) (Observation, error) { return f(ctx, e) }

// OpsObservers are the observers of the ops in internal/ops, run by r.
func OpsObservers(r ops.Runner) map[string]Observer {
	return map[string]Observer{
		ops.OpCheck: ObserverFunc(func(ctx context.Context, e Endpoint) (Observation, error) {
			rep, err := r.Check(ctx, e.URL)
			if err != nil {
				return Observation{}, err
			}
			return CheckObservation(rep.CheckResult), nil
		}),
		ops.OpMemo: ObserverFunc(func(ctx context.Context, e Endpoint) (Observation, error) {
			rep, err := r.Memo(ctx, e.URL)
			if err != nil {
				return Observation{}, err
			}
			return MemoObservation(rep.MemoResult), nil
		}),
		ops.OpProbe: ObserverFunc(func(ctx context.Context, e Endpoint) (Observation, error) {
			rep, err := r.Probe(ctx, e.URL)
			if err != nil {
				return Observation{}, err
			}
			return ProbeObservation(rep), nil
		}),
		"lint": ObserverFunc(func(ctx context.Context, e Endpoint) (Observation, error) {
			rep, err := r.Lint(ctx, e.URL, e.Method, bodyOf(e))
			if err != nil {
				return Observation{}, err
			}
			o := LintObservation(rep.Conforms, rep.Findings)
			o.Scheme, o.X402Version, o.Network = LintEntryFacts(rep.Entries)
			return o, nil
		}),
		"preflight": ObserverFunc(func(ctx context.Context, e Endpoint) (Observation, error) {
			rep, err := r.Preflight(ctx, ops.PreflightRequest{URL: e.URL, Method: e.Method, Body: bodyOf(e),
				Options: preflight.Options{Network: e.Network, MaxAmount: e.MaxAmount}})
			if err != nil {
				return Observation{}, err
			}
			return PreflightObservation(rep.Result), nil
		}),
	}
}

// bodyOf is the request body the endpoint's POST sends; nil for GET (and
// for a POST with no body configured: the op's default).
func bodyOf(e Endpoint) []byte {
	if e.Method != "POST" || e.Body == "" {
		return nil
	}
	return []byte(e.Body)
}

// LintObservation: passing when lint conforms; the state is conforms (no
// error, no warning), warnings or errors; the reasons are the rule ids of
// the errors, then of the warnings, each once, at most store.MaxReasons.
func LintObservation(conforms bool, findings []lint.Finding) Observation {
	o := Observation{Passing: conforms, State: LintConforms}
	var errs, warns []string
	for _, f := range findings {
		switch f.Severity {
		case lint.Error:
			errs = appendOnce(errs, f.Rule)
		case lint.Warn:
			warns = appendOnce(warns, f.Rule)
		}
	}
	switch {
	case !conforms || len(errs) > 0:
		o.State, o.Passing = LintErrors, false
	case len(warns) > 0:
		o.State = LintWarnings
	}
	o.Reasons = capReasons(append(errs, warns...))
	return o
}

// PreflightObservation: passing when GO; the state is the decision, the
// reasons its reason codes; the terms hash and the selected entry's network
// are kept.
func PreflightObservation(r preflight.Result) Observation {
	o := Observation{Passing: r.Decision == preflight.Go, State: string(r.Decision)}
	for _, reason := range r.Reasons {
		o.Reasons = appendOnce(o.Reasons, string(reason))
	}
	o.Reasons = capReasons(o.Reasons)
	if r.TermsSHA256 != nil {
		o.TermsSHA256 = *r.TermsSHA256
	}
	if r.SelectedEntry != nil {
		if lint.IsCAIP2(r.SelectedEntry.Network) {
			o.Network = r.SelectedEntry.Network
		}
		o.Scheme, o.X402Version = SchemeWord(r.SelectedEntry.Scheme), versionOf(r.SelectedEntry.X402Version)
	}
	return o
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func capReasons(s []string) []string {
	if len(s) > store.MaxReasons {
		return s[:store.MaxReasons]
	}
	return s
}

// CheckObservation: passing when POPULATED; the reason is NOT-A-402's.
func CheckObservation(r verdict.CheckResult) Observation {
	o := Observation{Passing: r.State == verdict.Populated, State: string(r.State)}
	if r.Factors.Reason != nil {
		o.Reasons = []string{*r.Factors.Reason}
	}
	return o
}

// MemoObservation: passing when BOUND.
func MemoObservation(r verdict.MemoResult) Observation {
	o := Observation{Passing: r.State == verdict.Bound, State: string(r.State)}
	if r.Reason != nil {
		o.Reasons = []string{*r.Reason}
	}
	return o
}

// ProbeObservation: passing when both rails are PRESENT-FAIL-CLOSED with no
// exposure; the reasons are the rails' grades that are not, then the
// exposures.
func ProbeObservation(r ops.ProbeReport) Observation {
	o := Observation{Passing: r.Closed(), State: r.ProbeResult.Outcome}
	if g := r.Grades.Direct.Grade; g != verdict.PresentFailClosed {
		o.Reasons = append(o.Reasons, "direct:"+string(g))
	}
	if g := r.Grades.Facilitator.Grade; g != verdict.PresentFailClosed {
		o.Reasons = append(o.Reasons, "facilitator:"+string(g))
	}
	o.Reasons = append(o.Reasons, slices.Clone(r.Exposures)...)
	return o
}

// SchemeWord is a scheme in closed form: exact and upto as they are, any
// other non-empty value "other" (a seller's text never reaches the store).
func SchemeWord(s string) string {
	switch {
	case s == "":
		return ""
	case lint.KnownScheme(s):
		return s
	}
	return SchemeOther
}

// SchemeOther stands for a scheme this rule set does not grade.
const SchemeOther = "other"

// versionOf keeps the x402 versions that exist (1, 2); any other is 0.
func versionOf(v int) int {
	if v == 1 || v == 2 {
		return v
	}
	return 0
}

// LintEntryFacts are the scheme, x402 version and CAIP-2 network of the
// entry lint's observation stands for: the first accepts entry of the v2
// header when the response has one, else of the body. A v1 network name is
// mapped to its CAIP-2 id; a network that is neither is left empty.
func LintEntryFacts(entries []lint.EntrySummary) (scheme string, version int, network string) {
	var first *lint.EntrySummary
	for i := range entries {
		e := &entries[i]
		if e.Leg == lint.LegHeader {
			first = e
			break
		}
		if first == nil && e.Leg == lint.LegBody {
			first = e
		}
	}
	if first == nil {
		return "", 0, ""
	}
	network = first.Network
	if id, ok := lint.NetworkCAIP2(network); ok {
		network = id
	}
	if !lint.IsCAIP2(network) {
		network = ""
	}
	return SchemeWord(first.Scheme), versionOf(first.X402Version), network
}
