package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/report"
)

// The records of a payability monitor (`--source payability`): signed
// (Ed25519 over RFC 8785, the monitor's JWKS), carrying the CORTX fields a
// consumer needs and payability's binding — the network and the terms_sha256
// of the endpoint's live terms — but no payee, asset or amount. The consumer
// binds by recomputing terms_sha256 from the endpoint's own 402, which covers
// every field the skill binds (the URL, network, asset, payee) and more.

// SourcePayability and SourceCORTX are the record sources.
const (
	SourceCORTX      = "cortx"
	SourcePayability = "payability"
)

// Finding codes of payability records.
const (
	CodeSignature    Code = "signature_invalid" // the signature does not verify against the monitor's JWKS
	CodeNoJWKS       Code = "jwks_unavailable"  // the monitor's JWKS could not be fetched or parsed
	CodeMeasuredLie  Code = "claims_paid_delivery"
	CodeNotMeasuring Code = "not_measured_missing"
	CodeNoTerms      Code = "no_terms_hash" // the record has no terms_sha256 to bind (no preflight)
)

// Fields of a payability record in findings.
const (
	FieldSignature   = "signature"
	FieldJWKS        = "jwks"
	FieldNetwork     = "network"
	FieldTermsSHA256 = "terms_sha256"
	FieldNotMeasured = "not_measured"
	FieldSource      = "source"
	FieldServiceID   = "service_id"
	FieldChecks      = "checks_30d"
	FieldPassing     = "passing_percent_30d"
)

func init() {
	messages[CodeSignature] = "the signature does not verify against the monitor's published keys"
	messages[CodeNoJWKS] = "the monitor's key set could not be fetched or read"
	messages[CodeMeasuredLie] = "claims a paid-delivery figure a monitor that never pays cannot have measured"
	messages[CodeNotMeasuring] = "does not say that paid delivery is not measured"
	messages[CodeNoTerms] = "no terms hash to bind the record to the endpoint's live terms"
}

// RulePayabilityFavourable: a payability record that validated, verified and
// bound, operational and fresh. There is no paid-delivery figure: payability
// never pays.
const RulePayabilityFavourable Rule = "operational_terms_bound"

// PayabilityRecord is a validated payability record.
type PayabilityRecord struct {
	ServiceID         string    `json:"service_id"`
	Status            Status    `json:"status"`
	EndpointURL       string    `json:"endpoint_url"`
	LastVerifiedAt    time.Time `json:"last_verified_at"`
	ActiveIncident    *Incident `json:"active_incident"`
	Network           string    `json:"network,omitempty"` // "" when the record names none
	TermsSHA256       string    `json:"terms_sha256"`
	Checks30d         int64     `json:"checks_30d"`
	PassingPercent30d string    `json:"passing_percent_30d,omitempty"` // "" when null
	Kid               string    `json:"kid"`                           // the key that signed it
}

// PayabilityResult is the outcome of a payability-record check.
type PayabilityResult struct {
	ServiceID   string            `json:"service_id"`
	IntendedURL string            `json:"intended_url"`
	CheckedAt   time.Time         `json:"checked_at"`
	Decision    Decision          `json:"decision"`
	Record      *PayabilityRecord `json:"record"`
	// Bound names the live entry whose terms hash is the record's.
	Bound    *preflight.EntryHash `json:"bound_entry"`
	Findings []Finding            `json:"findings"`
	Debug    Debug                `json:"-"`
}

// JWKSURL is the monitor's key set URL under api (already checked by
// RecordURL).
func JWKSURL(recordURL string) string {
	u, _ := url.Parse(recordURL)
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath()[:strings.Index(u.EscapedPath(), "/api/v1/reliability/")], "/") + "/.well-known/jwks.json"
}

// CheckPayability fetches serviceID's record from a payability monitor at
// c.API, verifies its signature against the monitor's JWKS, validates it,
// binds it to the intended URL and that URL's live terms, and decides. The
// only error is an input refused before any request.
func (c Client) CheckPayability(ctx context.Context, serviceID, intendedURL string) (PayabilityResult, error) {
	intended, err := Normalize(intendedURL)
	if err != nil {
		return PayabilityResult{}, err
	}
	recordURL, err := RecordURL(c.API, serviceID, c.AllowHTTP)
	if err != nil {
		return PayabilityResult{}, err
	}
	clock := c.Now
	if clock == nil {
		clock = time.Now
	}
	res := PayabilityResult{ServiceID: serviceID, IntendedURL: intended, Findings: []Finding{}}
	res.Debug.RecordURL = recordURL
	rc := c.Fetcher.Get(ctx, recordURL)
	res.Debug.Record = rc
	now := clock().UTC()
	res.CheckedAt = now

	var (
		notFound bool
		rec      *PayabilityRecord
		fs       []Finding
	)
	if f, nf, ok := responseFinding(rc); nf {
		notFound = true
	} else if !ok {
		fs = append(fs, f)
	} else if f, ok := c.verifyRecord(ctx, recordURL, rc.Body); !ok {
		fs = append(fs, f)
	} else {
		r, vfs := ValidatePayability(rc.Body, serviceID, now)
		fs = append(fs, vfs...)
		if len(vfs) == 0 {
			r.Kid = f.Field // verifyRecord returns the kid in Field when ok
			rec = &r
			cc := c.Fetcher.Get(ctx, intendedURL)
			res.Debug.ChallengeURL, res.Debug.Challenge = intendedURL, cc
			bound, bfs := BindPayability(r, intended, cc, now)
			res.Bound = bound
			fs = append(fs, bfs...)
		}
	}
	res.Decision = decidePayability(notFound, rec, fs, now)
	if rec != nil && len(fs) == 0 {
		res.Record = rec
	}
	if fs != nil {
		res.Findings = fs
	}
	return res, nil
}

// verifyRecord checks the record's signature against the monitor's JWKS.
// When ok, the returned finding's Field holds the kid that signed.
func (c Client) verifyRecord(ctx context.Context, recordURL string, body []byte) (Finding, bool) {
	jc := c.Fetcher.Get(ctx, JWKSURL(recordURL))
	if !jc.Usable() || jc.Status != 200 {
		return Finding{Stage: StageResponse, Field: FieldJWKS, Code: CodeNoJWKS}, false
	}
	keys, err := report.ParseJWKS(jc.Body)
	if err != nil {
		return Finding{Stage: StageResponse, Field: FieldJWKS, Code: CodeNoJWKS}, false
	}
	kid, err := report.Verify(body, keys)
	if err != nil {
		return Finding{Stage: StageValidation, Field: FieldSignature, Code: CodeSignature}, false
	}
	return Finding{Field: kid}, true
}

// payabilityWire is a record as sent; pointers tell absent from null.
type payabilityWire struct {
	Source              *string          `json:"source"`
	ServiceID           *string          `json:"service_id"`
	Status              *string          `json:"status"`
	EndpointURL         *string          `json:"endpoint_url"`
	LastVerifiedAt      *string          `json:"last_verified_at"`
	ActiveIncident      *json.RawMessage `json:"active_incident"`
	Network             *string          `json:"network"`
	TermsSHA256         *string          `json:"terms_sha256"`
	Checks30d           *int64           `json:"checks_30d"`
	PassingPercent30d   *string          `json:"passing_percent_30d"`
	NotMeasured         []string         `json:"not_measured"`
	PaidDeliveryPercent json.RawMessage  `json:"paid_delivery_percent"`
}

// ValidatePayability checks a (verified) payability record's fields. The
// record may be used only when the findings are empty.
func ValidatePayability(raw []byte, serviceID string, now time.Time) (PayabilityRecord, []Finding) {
	var w payabilityWire
	var fs []Finding
	add := func(field string, c Code) { fs = append(fs, Finding{Stage: StageValidation, Field: field, Code: c}) }
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&w); err != nil {
		add(FieldResponse, CodeUnparseable)
		return PayabilityRecord{}, fs
	}
	r := PayabilityRecord{Status: StatusUnknown}
	if w.Source == nil || *w.Source != SourcePayability {
		add(FieldSource, CodeNotInEnum)
	}
	if w.ServiceID == nil || *w.ServiceID != serviceID {
		add(FieldServiceID, CodeMismatch)
	} else {
		r.ServiceID = *w.ServiceID
	}
	switch {
	case w.Status == nil:
		add(FieldStatus, CodeMissing)
	default:
		switch st := Status(*w.Status); st {
		case StatusOperational, StatusDegraded, StatusCritical, StatusUnknown:
			r.Status = st
		default:
			add(FieldStatus, CodeNotInEnum)
		}
	}
	if w.EndpointURL == nil {
		add(FieldEndpointURL, CodeMissing)
	} else if n, err := Normalize(*w.EndpointURL); err != nil {
		add(FieldEndpointURL, CodeNotHTTPSURL)
	} else if n != *w.EndpointURL {
		add(FieldEndpointURL, CodeNotNormal)
	} else {
		r.EndpointURL = n
	}
	switch {
	case w.LastVerifiedAt == nil:
		add(FieldLastVerified, CodeNotMeasured) // absent or null: never verified
	default:
		t, err := time.Parse(time.RFC3339Nano, *w.LastVerifiedAt)
		switch {
		case err != nil:
			add(FieldLastVerified, CodeNotTimestamp)
		case t.After(now):
			add(FieldLastVerified, CodeInFuture)
		default:
			r.LastVerifiedAt = t
		}
	}
	if w.ActiveIncident != nil && !bytes.Equal(bytes.TrimSpace(*w.ActiveIncident), []byte("null")) {
		var in struct {
			Severity     *string `json:"severity"`
			FailureStage *string `json:"failure_stage"`
			OpenedAt     *string `json:"opened_at"`
		}
		if json.Unmarshal(*w.ActiveIncident, &in) != nil || in.Severity == nil || in.FailureStage == nil || in.OpenedAt == nil {
			add(FieldIncident, CodeWrongType)
		} else if t, err := time.Parse(time.RFC3339Nano, *in.OpenedAt); err != nil {
			add(FieldOpenedAt, CodeNotTimestamp)
		} else {
			r.ActiveIncident = &Incident{Severity: *in.Severity, FailureStage: *in.FailureStage, OpenedAt: t}
		}
	}
	if w.Network != nil {
		if !lint.IsCAIP2(*w.Network) {
			add(FieldNetwork, CodeNotInEnum)
		} else {
			r.Network = *w.Network
		}
	}
	if w.TermsSHA256 != nil {
		if len(*w.TermsSHA256) != 64 || strings.Trim(*w.TermsSHA256, "0123456789abcdef") != "" {
			add(FieldTermsSHA256, CodeWrongType)
		} else {
			r.TermsSHA256 = *w.TermsSHA256
		}
	}
	if w.Checks30d == nil || *w.Checks30d < 0 {
		add(FieldChecks, CodeMissing)
	} else {
		r.Checks30d = *w.Checks30d
	}
	if w.PassingPercent30d != nil {
		r.PassingPercent30d = *w.PassingPercent30d
	}
	// Never invent what was not observed: a record must say paid delivery
	// is not measured, and must not carry a figure for it.
	if w.PaidDeliveryPercent != nil {
		add(FieldPaidDelivery, CodeMeasuredLie)
	}
	if !slices.Contains(w.NotMeasured, "paid_delivery") {
		add(FieldNotMeasured, CodeNotMeasuring)
	}
	return r, fs
}

// BindPayability binds a validated record to the intended request: the
// endpoint URL equals the normalized intended URL; the record's terms_sha256
// is the hash of an entry of the endpoint's live 402 (c, fetched now), on
// the record's network when it names one; and the record is at most MaxAge
// old. It returns the live entry that bound.
func BindPayability(r PayabilityRecord, intended string, c capture.Capture, now time.Time) (*preflight.EntryHash, []Finding) {
	var fs []Finding
	add := func(stage Stage, field string, code Code) {
		fs = append(fs, Finding{Stage: stage, Field: field, Code: code})
	}
	if r.EndpointURL != intended {
		add(StageBinding, FieldEndpointURL, CodeMismatch)
	}
	var bound *preflight.EntryHash
	switch {
	case r.TermsSHA256 == "":
		add(StageBinding, FieldTermsSHA256, CodeNoTerms)
	case !c.Usable() || c.Status != 402:
		add(StageChallenge, FieldTermsSHA256, CodeNot402)
	default:
		for _, h := range preflight.HashEntries(lint.Decode(c)) {
			if h.TermsSHA256 != nil && *h.TermsSHA256 == r.TermsSHA256 && (r.Network == "" || caip2(h.Network) == r.Network) {
				h := h
				bound = &h
				break
			}
		}
		if bound == nil {
			add(StageBinding, FieldTermsSHA256, CodeMismatch)
		}
	}
	if !r.LastVerifiedAt.IsZero() && now.Sub(r.LastVerifiedAt) > MaxAge {
		add(StageBinding, FieldLastVerified, CodeStale)
	}
	return bound, fs
}

// decidePayability is the decision table for payability records, in the
// skill's order where its rows apply: not usable → unverified; critical or
// an active incident → do not call; degraded → warn; stale → unverified;
// operational → favourable; 404 → unverified (not monitored); unknown →
// unverified. Stale is a binding finding, so it falls in the first row.
func decidePayability(notFound bool, rec *PayabilityRecord, fs []Finding, now time.Time) Decision {
	usable := !notFound && rec != nil && len(fs) == 0
	switch {
	case !notFound && !usable:
		return Decision{Action: Unverified, Rule: RuleNotUsable}
	case notFound:
		return Decision{Action: Unverified, Rule: RuleNotMonitored}
	case rec.Status == StatusCritical || rec.ActiveIncident != nil:
		return Decision{Action: DoNotCall, Rule: RuleCriticalOrIncident}
	case rec.Status == StatusDegraded:
		return Decision{Action: Warn, Rule: RuleDegraded}
	case now.Sub(rec.LastVerifiedAt) > MaxAge:
		return Decision{Action: Unverified, Rule: RuleStale}
	case rec.Status == StatusOperational:
		return Decision{Action: Favourable, Rule: RulePayabilityFavourable}
	}
	return Decision{Action: Unverified, Rule: RuleStatusUnknown}
}

// RenderPayabilityJSON writes a payability-record result as JSON.
func RenderPayabilityJSON(w io.Writer, r PayabilityResult) error {
	out := struct {
		Source string `json:"source"`
		PayabilityResult
		Advisory string `json:"advisory"`
	}{SourcePayability, r, AdvisoryNote}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// RenderPayability writes a payability-record result as text: a heading,
// the status sentence (with the findings when the record is not used), the
// figures, the incident and the advisory note.
func RenderPayability(w io.Writer, r PayabilityResult) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("payability reliability record for %s at %s\n", Clean(r.ServiceID, 128), Clean(r.IntendedURL, maxPrintedURL))
	p("Checked %s. Decision: %s (%s).\n", stamp(r.CheckedAt), r.Decision.Action, r.Decision.Rule)
	rec := r.Record
	if rec != nil && r.Bound != nil {
		p("Bound to: the live %s accepts[%d] (%s %s), terms_sha256 %s; signed by key %s.\n",
			r.Bound.Leg, r.Bound.Index, r.Bound.Scheme, r.Bound.Network, rec.TermsSHA256, rec.Kid)
	}
	p("\n")
	switch {
	case r.Decision.Rule == RuleNotMonitored:
		p("Status: not monitored. The monitor has no record for this id (404).\n")
	case rec == nil:
		p("Status: unverified. The record could not be verified, validated and bound to this endpoint, so its data is not used.\n")
		p("Findings:\n")
		for _, f := range r.Findings {
			p("  %-10s  %-29s  %-21s  %s\n", f.Stage, f.Field, f.Code, f.Message())
		}
	default:
		p("Status: %s.\n", rec.Status)
		share := "no check in 30 days"
		if rec.PassingPercent30d != "" {
			share = rec.PassingPercent30d + "% of " + strconv.FormatInt(rec.Checks30d, 10) + " checks passing over 30 days"
		}
		p("Reliability: %s | paid delivery not measured (payability never pays) | verified %s (%s ago)\n",
			share, stamp(rec.LastVerifiedAt), span(r.CheckedAt.Sub(rec.LastVerifiedAt)))
		p("Active incident: %s\n", incidentSentence(rec.ActiveIncident, r.CheckedAt))
	}
	p("Advisory: %s\n", AdvisoryNote)
	return bw.Flush()
}

// caip2 is an entry's network as a CAIP-2 id: a v1 entry states a legacy
// name (base), which the record, naming the CAIP-2 network of the entry its
// hash is of, spells eip155:8453.
func caip2(network string) string {
	if id, ok := lint.NetworkCAIP2(network); ok {
		return id
	}
	return network
}
