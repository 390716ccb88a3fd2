// Package ops composes fetching and grading: check, memo and probe are each
// "validate the URL, fetch, grade, stamp the check-end time". It is the one
// place that does so, used by the CLI, the server and the scanner.
package ops

import (
	"context"
	"encoding/json"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/jsonenc"
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

// Fetcher is what ops needs from target fetching; *target.Client and
// *target.Session implement it (and Requester too).
type Fetcher interface {
	Get(ctx context.Context, url string) capture.Capture
	RunProbes(ctx context.Context, url string) []capture.Capture
}

// Scoper is a Fetcher that opens connection scopes of its own making: a
// wrapper of a *target.Client that wraps the scope's requests too (the scan
// command's guard watch). Each op then runs in a scope of its own, so its
// requests reuse connections and no connection is ever shared with another
// op's (another caller's) requests.
type Scoper interface {
	Scope(idlePerHost int) target.Scope
}

// OpenScope opens a connection scope on f: a *target.Client's own pool, or a
// Scoper's scope. It opens none (false) for anything else: a fake, a scope
// already, or a type that embeds a *target.Client to wrap its requests
// (a scope of the embedded Client would bypass the wrapper's methods, so
// such a fetcher is used as it is).
func OpenScope(f Fetcher, idlePerHost int) (target.Scope, bool) {
	switch f := f.(type) {
	case *target.Client:
		return f.Pool(idlePerHost), true
	case Scoper:
		return f.Scope(idlePerHost), true
	}
	return nil, false
}

// Scoped returns r with its Fetcher replaced by a connection scope of its
// own (OpenScope), and the function that closes the scope; when the Fetcher
// opens none, r itself and a no-op. A job that runs many ops (a scan run)
// keeps one scope and passes it as its Runner's Fetcher, so the ops share it.
func (r Runner) Scoped(idlePerHost int) (Runner, func()) {
	if s, ok := OpenScope(r.Fetcher, idlePerHost); ok {
		r.Fetcher = s
		return r, s.Close
	}
	return r, func() {}
}

// Runner runs ops against live targets.
type Runner struct {
	Fetcher Fetcher
	Now     func() time.Time
	// Chain makes lint's opt-in chain-readiness look-ups; nil: none.
	Chain ChainReader
	// Profile names a directory profile lint also grades (lint --profile:
	// x402scan or bazaar); "" for none.
	Profile string
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
	return newEnvelopeAt(op, url, criteria.Timestamp(end), line)
}

// newEnvelopeAt is NewEnvelope with the check-end time already formatted
// (criteria.Timestamp).
func newEnvelopeAt(op, url, checkedAt string, line string) Envelope {
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
		CheckedAt:          checkedAt,
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
	// FetchError says why the fetch got no response, from a closed set
	// (capture.FetchError); nil when a response arrived or the fetch timed
	// out. It is ours, not a criteria factor: it never changes the state, and
	// the JSON puts it in factors beside the criteria's reason.
	FetchError *capture.FetchError `json:"-"`
}

// MemoReport is the A4 report.
type MemoReport struct {
	Envelope
	verdict.MemoResult
	// FetchErrors are the two fetches' FetchError (see CheckReport); the JSON
	// puts each in its fetch's factors as fetch_error.
	FetchErrors [2]*capture.FetchError `json:"-"`
}

// ProbeReport is the A3 report.
type ProbeReport struct {
	Envelope
	verdict.ProbeResult
	NoFundsProperty string `json:"no_funds_property"`
	// FetchErrors are the seven probes' FetchError (see CheckReport); the
	// JSON puts each in its probe entry as fetch_error.
	FetchErrors [7]*capture.FetchError `json:"-"`
}

// fetchError is a capture's FetchError, nil when it has none.
func fetchError(c capture.Capture) *capture.FetchError {
	if c.Error == "" {
		return nil
	}
	e := c.Error
	return &e
}

// MarshalJSON writes the report with fetch_error after the criteria's
// factors (docs/report-format.md): AppendJSON.
func (r CheckReport) MarshalJSON() ([]byte, error) { return r.AppendJSON(make([]byte, 0, 1536)), nil }

// AppendJSON appends the report's JSON to b, byte for byte what
// json.Marshal writes for the envelope, the state and the factors with
// fetch_error last (TestCheckReportAppendJSONMatchesEncoder), without
// reflection: a scan writes one per URL.
func (r CheckReport) AppendJSON(b []byte) []byte {
	b = r.Envelope.appendFields(append(b, '{'))
	b = append(b, `,"state":`...)
	b = jsonenc.AppendString(b, string(r.State), true)
	f := &r.Factors
	for _, p := range [...]struct {
		key string
		v   *bool
	}{
		{`,"factors":{"header_present":`, f.HeaderPresent},
		{`,"header_decodable":`, f.HeaderDecodable},
		{`,"body_parseable":`, f.BodyParseable},
		{`,"recipient_present":`, f.RecipientPresent},
		{`,"token_account_present":`, f.TokenAccountPresent},
		{`,"memo_present":`, f.MemoPresent},
		{`,"amounts_present":`, f.AmountsPresent},
		{`,"amounts_consistent":`, f.AmountsConsistent},
		{`,"resource_present":`, f.ResourcePresent},
		{`,"resource_equals_called_url":`, f.ResourceEqualsCalledURL},
		{`,"header_body_memo_equal":`, f.HeaderBodyMemoEqual},
		{`,"header_body_amount_equal":`, f.HeaderBodyAmountEqual},
		{`,"header_body_pay_to_equal":`, f.HeaderBodyPayToEqual},
		{`,"description_overlong":`, f.DescriptionOverlong},
	} {
		b = jsonenc.AppendBoolPtr(append(b, p.key...), p.v)
	}
	b = jsonenc.AppendStringPtr(append(b, `,"reason":`...), f.Reason, true)
	b = jsonenc.AppendIntPtr(append(b, `,"status":`...), f.Status)
	b = append(b, `,"fetch_error":`...)
	if r.FetchError == nil {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, string(*r.FetchError), true)
	}
	return append(b, '}', '}')
}

// appendFields appends the envelope's fields, as json.Marshal writes them
// inside the object that embeds it (no braces).
func (e *Envelope) appendFields(b []byte) []byte {
	for _, f := range [...]struct{ key, v string }{
		{`"service":`, e.Service},
		{`,"version":`, e.Version},
		{`,"criteria_id":`, e.CriteriaID},
		{`,"criteria_revision":`, e.CriteriaRevision},
		{`,"corpus":{"id":`, e.Corpus.ID},
		{`,"sha256":`, e.Corpus.SHA256},
	} {
		b = jsonenc.AppendString(append(b, f.key...), f.v, true)
	}
	b = append(b, '}')
	for _, f := range [...]struct{ key, v string }{
		{`,"op":`, e.Op},
		{`,"url":`, e.URL},
		{`,"checked_at":`, e.CheckedAt},
		{`,"verdict_line":`, e.VerdictLine},
		{`,"disclosure_sentence":`, e.DisclosureSentence},
		{`,"honesty_line":`, e.HonestyLine},
		{`,"retention":`, e.Retention},
	} {
		b = jsonenc.AppendString(append(b, f.key...), f.v, true)
	}
	return b
}

// MarshalJSON writes the report with each fetch's fetch_error in its factors.
func (r MemoReport) MarshalJSON() ([]byte, error) {
	type fetch struct {
		verdict.FetchFactors
		FetchError *capture.FetchError `json:"fetch_error"`
	}
	type factors struct {
		Fetch1 fetch `json:"fetch1"`
		Fetch2 fetch `json:"fetch2"`
		verdict.MemoFactors
	}
	f := factors{fetch{r.Factors.Fetch1, r.FetchErrors[0]}, fetch{r.Factors.Fetch2, r.FetchErrors[1]}, r.Factors}
	return json.Marshal(struct {
		Envelope
		State   verdict.State `json:"state"`
		Reason  *string       `json:"reason"`
		Factors factors       `json:"factors"`
	}{r.Envelope, r.State, r.Reason, f})
}

// MarshalJSON writes the report with each probe's fetch_error in its entry.
func (r ProbeReport) MarshalJSON() ([]byte, error) {
	type entry struct {
		verdict.ProbeEntry
		FetchError *capture.FetchError `json:"fetch_error"`
	}
	probes := make([]entry, len(r.Probes))
	for i, p := range r.Probes {
		probes[i].ProbeEntry = p
		if i < len(r.FetchErrors) {
			probes[i].FetchError = r.FetchErrors[i]
		}
	}
	return json.Marshal(struct {
		Envelope
		Outcome         string          `json:"outcome"`
		Grades          verdict.Grades  `json:"grades"`
		Probes          []entry         `json:"probes"`
		Methods         verdict.Methods `json:"methods"`
		Exposures       []string        `json:"exposures"`
		NoFundsProperty string          `json:"no_funds_property"`
	}{r.Envelope, r.ProbeResult.Outcome, r.Grades, probes, r.Methods, r.Exposures, r.NoFundsProperty})
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
	c := r.Fetcher.Get(ctx, url)
	res := verdict.Check(url, c)
	ts := criteria.Timestamp(r.now())
	return CheckReport{newEnvelopeAt(OpCheck, url, ts, criteria.CheckLineAt(string(res.State), ts)), res, fetchError(c)}, nil
}

// Memo runs A4: two back-to-back GETs of url, graded as a pair.
func (r Runner) Memo(ctx context.Context, url string) (MemoReport, error) {
	if err := target.CheckURL(url); err != nil {
		return MemoReport{}, err
	}
	r, done := r.Scoped(1) // the two GETs share a connection
	defer done()
	first := r.Fetcher.Get(ctx, url)
	second := r.Fetcher.Get(ctx, url)
	res := verdict.Memo(first, second)
	ts := criteria.Timestamp(r.now())
	return MemoReport{newEnvelopeAt(OpMemo, url, ts, criteria.MemoLineAt(string(res.State), ts)), res,
		[2]*capture.FetchError{fetchError(first), fetchError(second)}}, nil
}

// Probe runs A3: the seven published probes in order, graded.
func (r Runner) Probe(ctx context.Context, url string) (ProbeReport, error) {
	if err := target.CheckURL(url); err != nil {
		return ProbeReport{}, err
	}
	r, done := r.Scoped(1) // the seven probes share a connection
	defer done()
	caps := r.Fetcher.RunProbes(ctx, url)
	res := verdict.Probe(caps)
	end := r.now()
	line := criteria.ProbeLine(string(res.Grades.Direct.Grade), string(res.Grades.Facilitator.Grade), end)
	rep := ProbeReport{Envelope: NewEnvelope(OpProbe, url, end, line), ProbeResult: res, NoFundsProperty: criteria.RailProbe().NoFundsProperty}
	for i := range rep.FetchErrors {
		// A probe the grader reports as not sent (after a failed baseline)
		// has no fetch error whatever the fetcher returned.
		if i < len(caps) && i < len(res.Probes) && res.Probes[i].Outcome != capture.NotSent {
			rep.FetchErrors[i] = fetchError(caps[i])
		}
	}
	return rep, nil
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
