package monitor

import (
	"context"
	"slices"

	"github.com/exchangerebel/payability/internal/ops"
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
	}
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
