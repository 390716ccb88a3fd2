// Package ops composes fetching and grading: check, memo and probe are each
// "validate the URL, fetch, grade, stamp the check-end time". It is the one
// place that does so, used by the CLI, the server and the scanner.
package ops

import (
	"context"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/verdict"
)

// The ops, as the criteria name them.
const (
	OpCheck = "check"
	OpMemo  = "memo"
	OpProbe = "probe"
)

// ServiceOf returns the service that sells an op.
func ServiceOf(op string) string {
	if op == OpProbe {
		return criteria.ServiceRailProbe
	}
	return criteria.ServicePayability
}

// Fetcher is what ops needs from target fetching; *target.Client implements it.
type Fetcher interface {
	Get(ctx context.Context, url string) capture.Capture
	RunProbes(ctx context.Context, url string) []capture.Capture
}

// Runner runs ops against live targets.
type Runner struct {
	Fetcher Fetcher
	Now     func() time.Time
	// Chain makes lint's opt-in chain-readiness look-ups; nil: none.
	Chain ChainReader
	// lint grades the preflight's unpaid challenge; nil means lint.Lint.
	// Tests set it to keep the preflight op's own tests off lint's rules.
	lint func(lint.Input) lint.Result
}

// Envelope holds the common fields of every report.
type Envelope struct {
	Service            string     `json:"service"`
	Version            string     `json:"version"`
	CriteriaID         string     `json:"criteria_id"`
	CriteriaRevision   string     `json:"criteria_revision"`
	Corpus             corpus.Ref `json:"corpus"`
	Op                 string     `json:"op"`
	URL                string     `json:"url"`
	CheckedAt          string     `json:"checked_at"`
	VerdictLine        string     `json:"verdict_line"`
	DisclosureSentence string     `json:"disclosure_sentence"`
	HonestyLine        string     `json:"honesty_line"`
	Retention          string     `json:"retention"`
}

// NewEnvelope fills the common fields for an op on url, checked at end.
func NewEnvelope(op, url string, end time.Time, line string) Envelope {
	svc := ServiceOf(op)
	doc, _ := criteria.ForService(svc)
	return Envelope{
		Service:            doc.Service,
		Version:            doc.Version,
		CriteriaID:         doc.CriteriaID,
		CriteriaRevision:   doc.CriteriaRevision,
		Corpus:             corpus.RefOf(svc),
		Op:                 op,
		URL:                url,
		CheckedAt:          criteria.Timestamp(end),
		VerdictLine:        line,
		DisclosureSentence: doc.DisclosureSentence,
		HonestyLine:        doc.HonestyLine,
		Retention:          doc.Retention,
	}
}

// CheckReport is the A1 report.
type CheckReport struct {
	Envelope
	verdict.CheckResult
}

// MemoReport is the A4 report.
type MemoReport struct {
	Envelope
	verdict.MemoResult
}

// ProbeReport is the A3 report.
type ProbeReport struct {
	Envelope
	verdict.ProbeResult
	NoFundsProperty string `json:"no_funds_property"`
}

// Report is any of the three reports.
type Report interface {
	Common() Envelope
	// Outcome is the state (check, memo) or the probe outcome.
	Outcome() string
}

func (r CheckReport) Common() Envelope { return r.Envelope }
func (r MemoReport) Common() Envelope  { return r.Envelope }
func (r ProbeReport) Common() Envelope { return r.Envelope }

func (r CheckReport) Outcome() string { return string(r.State) }
func (r MemoReport) Outcome() string  { return string(r.State) }
func (r ProbeReport) Outcome() string { return r.ProbeResult.Outcome }

// Closed reports whether a probe found both rails PRESENT-FAIL-CLOSED and no
// exposures.
func (r ProbeReport) Closed() bool {
	return r.Grades.Direct.Grade == verdict.PresentFailClosed &&
		r.Grades.Facilitator.Grade == verdict.PresentFailClosed &&
		len(r.Exposures) == 0
}

func (r Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Check runs A1: one GET of url, graded. The only error is a URL-policy
// refusal (a *target.PolicyError); a broken target is a verdict.
func (r Runner) Check(ctx context.Context, url string) (CheckReport, error) {
	if err := target.CheckURL(url); err != nil {
		return CheckReport{}, err
	}
	res := verdict.Check(url, r.Fetcher.Get(ctx, url))
	end := r.now()
	return CheckReport{NewEnvelope(OpCheck, url, end, criteria.CheckLine(string(res.State), end)), res}, nil
}

// Memo runs A4: two back-to-back GETs of url, graded as a pair.
func (r Runner) Memo(ctx context.Context, url string) (MemoReport, error) {
	if err := target.CheckURL(url); err != nil {
		return MemoReport{}, err
	}
	first := r.Fetcher.Get(ctx, url)
	second := r.Fetcher.Get(ctx, url)
	res := verdict.Memo(first, second)
	end := r.now()
	return MemoReport{NewEnvelope(OpMemo, url, end, criteria.MemoLine(string(res.State), end)), res}, nil
}

// Probe runs A3: the seven published probes in order, graded.
func (r Runner) Probe(ctx context.Context, url string) (ProbeReport, error) {
	if err := target.CheckURL(url); err != nil {
		return ProbeReport{}, err
	}
	res := verdict.Probe(r.Fetcher.RunProbes(ctx, url))
	end := r.now()
	line := criteria.ProbeLine(string(res.Grades.Direct.Grade), string(res.Grades.Facilitator.Grade), end)
	return ProbeReport{NewEnvelope(OpProbe, url, end, line), res, criteria.RailProbe().NoFundsProperty}, nil
}

// Run runs the named op.
func (r Runner) Run(ctx context.Context, op, url string) (Report, error) {
	switch op {
	case OpCheck:
		return r.Check(ctx, url)
	case OpMemo:
		return r.Memo(ctx, url)
	case OpProbe:
		return r.Probe(ctx, url)
	case OpLint:
		return r.Lint(ctx, url, "GET", nil)
	}
	return nil, ErrUnknownOp
}

// ErrUnknownOp is returned by Run for an op that is not check, memo, probe or lint.
var ErrUnknownOp = errUnknownOp{}

type errUnknownOp struct{}

func (errUnknownOp) Error() string { return "ops: unknown op (want check, memo, probe or lint)" }
