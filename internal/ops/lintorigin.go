package ops

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

// ModeOrigin names an origin lint report (lint --origin).
const ModeOrigin = "origin"

// originConcurrency is how many listed resources an origin lint requests at
// a time (at most lint.MaxOriginResources in all).
const originConcurrency = 4

// OriginResource is one listed resource's lint report, as `lint URL` writes
// it, with the listings that name it (document leg, index, field path).
type OriginResource struct {
	LintReport
	Listed []lint.ListingRef `json:"listed"`
}

// OriginReport is the report of `lint --origin` (docs/report-format.md,
// "lint, origin mode"): the discovery documents read, the document findings
// and every listed resource's own lint report.
type OriginReport struct {
	Op        string                 `json:"op"`
	Mode      string                 `json:"mode"`
	Rules     LintRules              `json:"rules"`
	Origin    string                 `json:"origin"`
	Documents []lint.DocumentSummary `json:"documents"`
	Findings  []lint.Finding         `json:"findings"`
	Resources []OriginResource       `json:"resources"`
	Conforms  bool                   `json:"conforms"`
	CheckedAt string                 `json:"checked_at"`
}

// Common gives scan the fields every report has: op, the origin as url, and
// checked_at.
func (r OriginReport) Common() Envelope {
	return Envelope{Op: OpLint, URL: r.Origin, CheckedAt: r.CheckedAt}
}

// Outcome is CONFORMS or DOES-NOT-CONFORM for the origin as a whole.
func (r OriginReport) Outcome() string {
	if r.Conforms {
		return LintConforms
	}
	return LintDoesNotConform
}

// ErrNotAnOrigin is returned by LintOrigin for a URL with a path, query or
// fragment: an origin is scheme://host[:port].
var ErrNotAnOrigin = errors.New("ops: --origin takes an origin: scheme://host[:port], no path, query or fragment")

// NormalOrigin checks raw against the target-URL policy and returns it as
// scheme://host[:port].
func NormalOrigin(raw string) (string, error) {
	if err := target.CheckURL(raw); err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", ErrNotAnOrigin
	}
	return u.Scheme + "://" + u.Host, nil
}

// LintOrigin runs x402-lint/v1 over an origin: it reads /.well-known/x402,
// /.well-known/x402.json and, when openAPI is not "", the OpenAPI document at
// that URL; it lints every listed resource on the origin (at most
// lint.MaxOriginResources, originConcurrency at a time) with its listed
// method and example body; then grades the documents against the live
// challenges. Every request goes through the Fetcher (target policy,
// address guard, fetch limits). The only errors are a policy refusal of the
// origin or of openAPI, and ErrNotAnOrigin.
func (r Runner) LintOrigin(ctx context.Context, origin, openAPI string) (OriginReport, error) {
	if _, ok := lint.ProfileByName(r.Profile); r.Profile != "" && !ok {
		return OriginReport{}, ErrUnknownProfile
	}
	o, err := NormalOrigin(origin)
	if err != nil {
		return OriginReport{}, err
	}
	if openAPI != "" {
		if err := target.CheckURL(openAPI); err != nil {
			return OriginReport{}, err
		}
	}
	var docs []lint.DocumentCapture
	for _, w := range lint.WellKnownPaths {
		u := o + w.Path
		docs = append(docs, lint.DocumentCapture{Leg: w.Leg, URL: u, Capture: r.Fetcher.Get(ctx, u)})
	}
	if openAPI != "" {
		docs = append(docs, lint.DocumentCapture{Leg: lint.LegOpenAPI, URL: openAPI, Capture: r.Fetcher.Get(ctx, openAPI), Named: true})
	}
	plan := lint.PlanOrigin(o, docs)
	live := make([]lint.LiveCapture, len(plan.Targets))
	sem := make(chan struct{}, originConcurrency)
	var wg sync.WaitGroup
	for i, t := range plan.Targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			live[i] = r.requestListed(ctx, t)
		}()
	}
	wg.Wait()
	end := r.now()
	res := lint.LintOrigin(lint.OriginInput{Origin: o, Documents: docs, Live: live, Now: end})
	rep := OriginReport{
		Op: OpLint, Mode: ModeOrigin, Rules: LintRulesRef(), Origin: o,
		Documents: res.Documents, Findings: res.Findings, Resources: []OriginResource{},
		Conforms: res.Conforms, CheckedAt: criteria.Timestamp(end),
	}
	for i, rr := range res.Resources {
		lr := LintReport{
			Op: OpLint, Rules: rep.Rules, URL: rr.URL, Method: rr.Method,
			Status: rr.Result.Status, Dialect: rr.Result.Dialect, Entries: rr.Result.Entries,
			Findings: rr.Result.Findings, Conforms: rr.Result.Conforms, CheckedAt: rep.CheckedAt,
		}
		// Resources are in the plan's target order, as live is.
		in := lint.Input{URL: rr.URL, Method: rr.Method, Capture: live[i].Capture, Now: end}
		if err := r.applyProfile(&lr, in, rr.Result); err != nil {
			return OriginReport{}, err
		}
		rep.Resources = append(rep.Resources, OriginResource{LintReport: lr, Listed: rr.Listed})
	}
	return rep, nil
}

// requestListed makes one listed resource's request: GET, or POST of its
// body as application/json; a listing with no method (MethodFallback) sends
// GET and then POST of {} when GET answers 404 or 405. A URL the target
// policy refuses is not requested (its capture is a failed fetch).
func (r Runner) requestListed(ctx context.Context, t lint.Target) lint.LiveCapture {
	lc := lint.LiveCapture{Target: t, Method: http.MethodGet}
	if target.CheckURL(t.URL) != nil {
		lc.Capture = capture.Capture{Outcome: capture.Failed}
		return lc
	}
	post := func(body []byte) capture.Capture {
		req, ok := r.Fetcher.(Requester)
		if !ok {
			return capture.Capture{Outcome: capture.Failed}
		}
		return req.Do(ctx, target.Request{Method: http.MethodPost, URL: t.URL,
			Header: map[string]string{"Content-Type": "application/json"}, Body: body})
	}
	switch t.Method {
	case http.MethodPost:
		lc.Method = http.MethodPost
		lc.Capture = post(t.Body)
	case lint.MethodFallback:
		lc.Capture = r.Fetcher.Get(ctx, t.URL)
		if s := lc.Capture.Status; s == http.StatusNotFound || s == http.StatusMethodNotAllowed {
			lc.Method = http.MethodPost
			lc.Capture = post(lint.DefaultBody())
		}
	default:
		lc.Capture = r.Fetcher.Get(ctx, t.URL)
	}
	return lc
}
