package preflight

import (
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
)

// Fetch is one unpaid request of the lint step and what it observed.
type Fetch struct {
	Method  string
	Capture capture.Capture
}

// Answer is what one probe observed. A probe that was not sent has no Answer.
type Answer struct {
	ID string
	// Dialect is a payment probe's x402 version (2 PAYMENT-SIGNATURE, 1
	// X-PAYMENT); 0 means the primary dialect, and is ignored for the method
	// matrix.
	Dialect int
	Method  string
	Capture capture.Capture
}

// CORTX is the reliability decision's action ("favourable", "warn",
// "do_not_call", "unverified"); "" when the check could not run.
type CORTX struct {
	Action string `json:"action"`
	Rule   string `json:"rule,omitempty"`
}

// Input is everything a preflight observed.
type Input struct {
	Options Options
	// Lint are the lint step's fetches in order; the last is the gated
	// method's answer, the unpaid challenge.
	Lint []Fetch
	// LintResult is x402-lint/v1's result for the unpaid challenge.
	LintResult lint.Result
	// Second is the second unpaid fetch; nil when it was not sent.
	Second *capture.Capture
	// Answers are the probes' answers, any order; a missing one was not sent.
	Answers []Answer
	// CORTX is nil when no service id was given.
	CORTX *CORTX
}

// FetchRecord is one unpaid fetch in the record.
type FetchRecord struct {
	Role    string             `json:"role"` // "lint" or "second"
	Method  string             `json:"method"`
	Outcome capture.Outcome    `json:"outcome"`
	Status  int                `json:"status"`
	Error   capture.FetchError `json:"error,omitempty"`
}

// ProbeRecord is one probe in the record. Grade is null when not sent.
type ProbeRecord struct {
	ID      string             `json:"id"`
	Method  string             `json:"method"`
	Header  string             `json:"header,omitempty"`  // the payment header's name, never its value
	Dialect int                `json:"dialect,omitempty"` // a payment probe's x402 version: 2 or 1
	Sent    bool               `json:"sent"`
	Outcome capture.Outcome    `json:"outcome,omitempty"`
	Status  int                `json:"status"`
	Error   capture.FetchError `json:"error,omitempty"`
	Grade   *Grade             `json:"grade"`
}

// SelectedEntry names the selected entry by protocol identifiers only.
type SelectedEntry struct {
	Leg         lint.Leg `json:"leg"`
	Index       int      `json:"index"`
	X402Version int      `json:"x402_version"`
	Scheme      string   `json:"scheme"`
	Network     string   `json:"network"` // CAIP-2
}

// LintCounts summarise the lint of the unpaid challenge.
type LintCounts struct {
	Errors   int  `json:"errors"`
	Warnings int  `json:"warnings"`
	Entries  int  `json:"entries"`
	Conforms bool `json:"conforms"`
}

// ChallengeFreshness is what the second fetch showed.
type ChallengeFreshness struct {
	Memo  Freshness `json:"memo"`
	Nonce Freshness `json:"nonce"`
}

// Result is the preflight's decision and what it rests on. It carries no
// fetched value.
type Result struct {
	Decision Decision `json:"decision"`
	Reasons  []Reason `json:"reasons"`
	// FetchError is the closed-form reason the gated method's unpaid fetch
	// got no response (capture.FetchError, else its outcome: timeout); set
	// only with the reason unreachable.
	FetchError    string             `json:"fetch_error,omitempty"`
	Method        string             `json:"method"`
	Fetches       []FetchRecord      `json:"fetches"`
	SelectedEntry *SelectedEntry     `json:"selected_entry"`
	TermsSHA256   *string            `json:"terms_sha256"`
	Lint          *LintCounts        `json:"lint"`
	Challenge     ChallengeFreshness `json:"challenge"`
	Probes        []ProbeRecord      `json:"probes"`
	MethodMatrix  []ProbeRecord      `json:"method_matrix"`
	CORTX         *CORTX             `json:"cortx"`
	// Dialects are the x402 versions the payment probes spoke, the primary
	// first: [2, 1] or [1, 2] for a challenge advertising both.
	Dialects []int `json:"dialects"`
}

// Unpaid returns the gated method's answer (the last lint fetch).
func (in Input) Unpaid() (Fetch, bool) {
	if len(in.Lint) == 0 {
		return Fetch{}, false
	}
	return in.Lint[len(in.Lint)-1], true
}

// Plan is what the preflight sends after the unpaid challenge: the selection
// and the probes, in order. ops calls it with the lint step's outcome.
func Plan(unpaid capture.Capture, res lint.Result, o Options, method string, body []byte, env ProbeEnv) (Selection, []Probe) {
	sel := Select(lint.Decode(unpaid), res, o)
	return sel, Probes(sel, method, body, env)
}

// Evaluate decides. It is a pure function of what was observed.
func Evaluate(in Input) Result {
	r := Result{Reasons: []Reason{}, Fetches: []FetchRecord{}, Probes: []ProbeRecord{}, MethodMatrix: []ProbeRecord{}, CORTX: in.CORTX, Dialects: []int{}}
	for _, f := range in.Lint {
		r.Fetches = append(r.Fetches, fetchRecord("lint", f.Method, f.Capture))
	}
	unpaid, ok := in.Unpaid()
	f := facts{grades: map[probeKey]Grade{}, memo: FreshAbsent, nonce: FreshAbsent, cortx: in.CORTX}
	if in.CORTX != nil {
		f.cortxFavourable = in.CORTX.Action == "favourable"
		f.cortxUnfavourabl = in.CORTX.Action == "warn" || in.CORTX.Action == "do_not_call"
	}
	if ok {
		r.Method = unpaid.Method
		f.got402 = unpaid.Capture.Responded() && unpaid.Capture.Status == 402
		if f.unreachable = !unpaid.Capture.Responded(); f.unreachable {
			r.FetchError = string(unpaid.Capture.Error)
			if r.FetchError == "" {
				r.FetchError = string(unpaid.Capture.Outcome)
			}
		}
	}
	if !f.got402 {
		r.Challenge = ChallengeFreshness{Memo: FreshAbsent, Nonce: FreshAbsent}
		r.Decision, r.Reasons = decide(f)
		return r
	}
	if in.Second != nil {
		r.Fetches = append(r.Fetches, fetchRecord("second", unpaid.Method, *in.Second))
	}
	res := in.LintResult
	r.Lint = counts(res)
	ch := lint.Decode(unpaid.Capture)
	f.sel = Select(ch, res, in.Options)
	f.resourceError = resourceError(res)
	if s := f.sel.Selected; s != nil {
		f.warned = warned(res, s.Leg, s.Index)
		r.SelectedEntry = &SelectedEntry{Leg: s.Leg, Index: s.Index, X402Version: s.X402Version, Scheme: safeIdent(s.Scheme), Network: safeIdent(s.CAIP2)}
		if t, ok := TermsOf(*s); ok {
			if h, ok := t.Hash(); ok {
				r.TermsSHA256 = &h
			}
		}
	}
	f.memo = memoFreshness(f.sel.Selected, in.Second)
	f.nonce = nonceFreshness(ch, in.Second)
	r.Challenge = ChallengeFreshness{Memo: f.memo, Nonce: f.nonce}

	answers := map[probeKey]Answer{}
	for _, a := range in.Answers {
		d := a.Dialect
		switch {
		case a.ID == ProbeHead || a.ID == ProbeOther:
			d = 0
		case d == 0:
			d = f.sel.Dialect
		}
		answers[probeKey{a.ID, d}] = a
	}
	record := func(id string, dialect int, method string, sendable bool) ProbeRecord {
		rec := ProbeRecord{ID: id, Method: method, Dialect: dialect}
		if dialect != 0 {
			rec.Header = HeaderOf(dialect)
		}
		k := probeKey{id, dialect}
		if a, ok := answers[k]; ok && a.Capture.Outcome != capture.NotSent && sendable {
			g := GradeAnswer(unpaid.Capture, a.Capture)
			f.grades[k] = g
			rec.Sent, rec.Outcome, rec.Status, rec.Error, rec.Grade = true, a.Capture.Outcome, a.Capture.Status, a.Capture.Error, &g
		}
		return rec
	}
	for i, leg := range f.sel.Legs() {
		r.Dialects = append(r.Dialects, leg.Dialect)
		if i > 0 {
			f.secondary = leg.Dialect
		}
		r.Probes = append(r.Probes,
			record(ProbeP1, leg.Dialect, unpaid.Method, familyOf(leg.Entry) != ""),
			record(ProbeP2, leg.Dialect, unpaid.Method, true))
	}
	r.MethodMatrix = append(r.MethodMatrix,
		record(ProbeHead, 0, "HEAD", true),
		record(ProbeOther, 0, Other(unpaid.Method), true))
	r.Decision, r.Reasons = decide(f)
	return r
}

func fetchRecord(role, method string, c capture.Capture) FetchRecord {
	return FetchRecord{Role: role, Method: method, Outcome: c.Outcome, Status: c.Status, Error: c.Error}
}

func counts(res lint.Result) *LintCounts {
	c := &LintCounts{Entries: len(res.Entries), Conforms: res.Conforms}
	for _, f := range res.Findings {
		switch f.Severity {
		case lint.Error:
			c.Errors++
		case lint.Warn:
			c.Warnings++
		}
	}
	return c
}
