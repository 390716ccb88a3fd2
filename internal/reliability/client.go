// Package reliability is payability's CORTX client: it fetches a service's
// reliability record and the intended endpoint's own 402 challenge, validates
// the record strictly, binds it to the intended request and the locally
// resolved payment terms, and decides with the skill's decision table.
//
// Validate, ResolveTerms, Bind and Decide are pure; Client composes them over
// a Fetcher. Every string in a record is data: nothing here follows a URL or
// acts on text found in a response, and only closed-form findings, validated
// numbers, addresses, timestamps and plain labels are ever printed.
package reliability

import (
	"context"
	"net/http"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// Fetcher is what the client needs from target fetching; *target.Client
// implements it, with its timeout, body cap, no redirects and address guard.
type Fetcher interface {
	Get(ctx context.Context, url string) capture.Capture
}

// Client checks a service's CORTX record before an agent pays its endpoint.
type Client struct {
	Fetcher Fetcher
	// API is the CORTX API base URL; "" means DefaultAPI.
	API string
	// AllowHTTP lets the API base URL be plain http (a local or staging API).
	AllowHTTP bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Result is one check: the decision, and what it was made from.
type Result struct {
	ServiceID   string    `json:"service_id"`
	IntendedURL string    `json:"intended_url"` // normalized
	CheckedAt   time.Time `json:"checked_at"`
	Decision    Decision  `json:"decision"`
	// Record is the validated record, present only when it also bound: a
	// record that failed validation or binding is not surfaced.
	Record *Record `json:"record"`
	// Terms are the locally resolved payment terms, when the challenge was
	// fetched and resolved.
	Terms    *Terms    `json:"terms"`
	Findings []Finding `json:"findings"`
	// Debug is the raw material, for a --debug dump only.
	Debug Debug `json:"-"`
}

// Debug is what was fetched, kept only for a debug dump.
type Debug struct {
	RecordURL    string
	Record       capture.Capture
	ChallengeURL string // "" when the challenge was not fetched
	Challenge    capture.Capture
}

// Check fetches and judges serviceID's record for the intended URL. It returns
// an error only for input refused before any request (an *InputError); a
// broken, hostile or missing record is a Result.
func (c Client) Check(ctx context.Context, serviceID, intendedURL string) (Result, error) {
	intended, err := Normalize(intendedURL)
	if err != nil {
		return Result{}, err
	}
	api := c.API
	if api == "" {
		api = DefaultAPI
	}
	recordURL, err := RecordURL(api, serviceID, c.AllowHTTP)
	if err != nil {
		return Result{}, err
	}
	clock := c.Now
	if clock == nil {
		clock = time.Now
	}

	res := Result{ServiceID: serviceID, IntendedURL: intended, Findings: []Finding{}}
	res.Debug.RecordURL = recordURL
	rc := c.Fetcher.Get(ctx, recordURL)
	res.Debug.Record = rc
	now := clock().UTC()
	res.CheckedAt = now

	var a Assessment
	if f, notFound, ok := responseFinding(rc); notFound {
		a.NotFound = true
	} else if !ok {
		a.Findings = append(a.Findings, f)
	} else {
		rec, fs := Validate(rc.Body, now)
		a.Findings = append(a.Findings, fs...)
		if len(fs) == 0 {
			a.Record = &rec
			// The challenge comes from the URL exactly as the agent will call
			// it; the record is compared with its normalized form.
			cc := c.Fetcher.Get(ctx, intendedURL)
			res.Debug.ChallengeURL, res.Debug.Challenge = intendedURL, cc
			terms, tfs := ResolveTerms(cc)
			if len(tfs) == 0 {
				res.Terms = &terms
			}
			a.Findings = append(a.Findings, tfs...)
			a.Findings = append(a.Findings, Bind(rec, intended, terms, now)...)
		}
	}
	res.Decision = Decide(a, now)
	if a.usable() {
		res.Record = a.Record
	}
	if a.Findings != nil {
		res.Findings = a.Findings
	}
	return res, nil
}

// responseFinding classifies the record fetch: a finding when it cannot be
// validated, notFound on a 404, ok when a 200 body is there to validate.
func responseFinding(c capture.Capture) (f Finding, notFound, ok bool) {
	f = Finding{Stage: StageResponse, Field: FieldResponse}
	switch {
	case c.Outcome == capture.Timeout:
		f.Code = CodeTimeout
	case c.OverCapBody():
		f.Code = CodeOverCap
	case !c.Usable():
		f.Code = CodeFetchFailed
	case c.Status == http.StatusNotFound:
		return f, true, false
	case c.Status != http.StatusOK:
		f.Code = CodeUnexpectedStatus
	default:
		return f, false, true
	}
	return f, false, false
}
