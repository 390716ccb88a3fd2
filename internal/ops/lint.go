package ops

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

// OpLint is x402 protocol conformance (x402-lint/v1).
const OpLint = "lint"

// Outcomes of a lint report (what scan counts).
const (
	LintConforms       = "CONFORMS"
	LintDoesNotConform = "DOES-NOT-CONFORM"
)

// DefaultLintBody is what a POST lint sends when no body is given.
var DefaultLintBody = []byte("{}")

// Requester sends one request of any published method; *target.Client
// implements it. A Fetcher that is not a Requester can lint only with GET.
type Requester interface {
	Do(ctx context.Context, r target.Request) capture.Capture
}

// ChainReader makes the opt-in chain-readiness look-ups of lint
// (internal/chain implements it). nil on a Runner means none are made.
type ChainReader interface {
	Observe(ctx context.Context, qs []lint.ChainQuery) lint.ChainFacts
}

// LintRules names the rule set a lint report was graded by.
type LintRules struct {
	ID           string `json:"id"`
	Revision     string `json:"revision"`
	CorpusSHA256 string `json:"corpus_sha256"`
}

// LintReport is the lint report (docs/report-format.md, "lint").
type LintReport struct {
	Op        string              `json:"op"`
	Rules     LintRules           `json:"rules"`
	URL       string              `json:"url"`
	Method    string              `json:"method"`
	Status    int                 `json:"status"`
	Dialect   lint.Dialect        `json:"dialect"`
	Entries   []lint.EntrySummary `json:"entries"`
	Findings  []lint.Finding      `json:"findings"`
	Conforms  bool                `json:"conforms"`
	CheckedAt string              `json:"checked_at"`
	// Profile is the directory profile asked for (lint --profile), "" when
	// none; ProfileFindings are its findings (absent when there are none).
	// They never change Conforms.
	Profile         string         `json:"profile,omitempty"`
	ProfileFindings []lint.Finding `json:"profile_findings,omitempty"`
}

// Common gives scan and the surfaces the fields every report has; a lint
// report has no criteria envelope, so only op, url and checked_at are set.
func (r LintReport) Common() Envelope {
	return Envelope{Op: OpLint, URL: r.URL, CheckedAt: r.CheckedAt}
}

// Outcome is CONFORMS or DOES-NOT-CONFORM.
func (r LintReport) Outcome() string {
	if r.Conforms {
		return LintConforms
	}
	return LintDoesNotConform
}

// Counts returns the number of error and warn findings.
func (r LintReport) Counts() (errs, warns int) {
	for _, f := range r.Findings {
		switch f.Severity {
		case lint.Error:
			errs++
		case lint.Warn:
			warns++
		}
	}
	return errs, warns
}

// ErrLintMethod is returned by Lint for a method other than GET or POST.
var ErrLintMethod = errors.New("ops: lint sends GET or POST")

// ErrNoRequester is returned by Lint for POST when the Fetcher cannot send it.
var ErrNoRequester = errors.New("ops: this fetcher cannot send POST")

// LintRulesRef is the rule set every lint report names.
func LintRulesRef() LintRules {
	d := lint.Rules()
	return LintRules{ID: d.ID, Revision: d.Revision, CorpusSHA256: corpus.LintRef().SHA256}
}

// Lint runs x402-lint/v1 on url: one request (GET, or POST of body — "{}"
// when nil — as application/json) under the target policy, graded, then the
// opt-in chain look-ups through r.Chain, graded with it. The only errors are
// a URL-policy refusal (*target.PolicyError) and a method it will not send.
func (r Runner) Lint(ctx context.Context, url, method string, body []byte) (LintReport, error) {
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodPost {
		return LintReport{}, ErrLintMethod
	}
	if _, ok := lint.ProfileByName(r.Profile); r.Profile != "" && !ok {
		return LintReport{}, ErrUnknownProfile
	}
	if err := target.CheckURL(url); err != nil {
		return LintReport{}, err
	}
	var c capture.Capture
	if method == http.MethodGet {
		c = r.Fetcher.Get(ctx, url)
	} else {
		req, ok := r.Fetcher.(Requester)
		if !ok {
			return LintReport{}, ErrNoRequester
		}
		if body == nil {
			body = DefaultLintBody
		}
		c = req.Do(ctx, target.Request{Method: http.MethodPost, URL: url,
			Header: map[string]string{"Content-Type": "application/json"}, Body: body})
	}
	in := lint.Input{URL: url, Method: method, Capture: c}
	if r.Chain != nil {
		if qs := lint.ChainQueries(in); len(qs) > 0 {
			facts := r.Chain.Observe(ctx, qs)
			in.Chain = &facts
		}
	}
	// The check-end time is read after every request (the target's and the
	// chain's) and before grading, which needs it for sign-in-with-x times.
	end := r.now()
	in.Now = end
	res := lint.Lint(in)
	rep := LintReport{
		Op:        OpLint,
		Rules:     LintRulesRef(),
		URL:       url,
		Method:    method,
		Status:    res.Status,
		Dialect:   res.Dialect,
		Entries:   res.Entries,
		Findings:  res.Findings,
		Conforms:  res.Conforms,
		CheckedAt: criteria.Timestamp(end),
	}
	if err := r.applyProfile(&rep, in, res); err != nil {
		return LintReport{}, err
	}
	return rep, nil
}

// ErrUnknownProfile is returned by Lint and LintOrigin when Runner.Profile
// names no published profile.
var ErrUnknownProfile = errors.New("ops: unknown lint profile (want x402scan or bazaar)")

// applyProfile grades r.Profile's acceptance rules on one linted response.
func (r Runner) applyProfile(rep *LintReport, in lint.Input, res lint.Result) error {
	if r.Profile == "" {
		return nil
	}
	fs, ok := lint.GradeProfile(r.Profile, in, res)
	if !ok {
		return ErrUnknownProfile
	}
	rep.Profile = r.Profile
	if len(fs) > 0 {
		rep.ProfileFindings = fs
	}
	return nil
}

// LintLine is the one line a lint report states, as the paid service's
// ledger records it: the rule set, the outcome, the counts and the
// check-end time; closed-form, never a byte of the seller's answer.
func (r LintReport) LintLine() string {
	errs, warns := r.Counts()
	return r.Rules.ID + ": " + r.Outcome() + " (" + strconv.Itoa(errs) + " errors, " + strconv.Itoa(warns) + " warnings) — " + r.CheckedAt
}
