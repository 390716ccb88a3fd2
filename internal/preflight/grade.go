package preflight

import (
	"encoding/base64"
	"strings"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// Grade is how a probe's answer was graded.
type Grade string

// The grades of x402-preflight/v1.
const (
	FailOpen     Grade = "FAIL-OPEN"
	Closed       Grade = "CLOSED"
	NotEvaluated Grade = "NOT-EVALUATED"
	Errored      Grade = "ERRORED"
	Ungraded     Grade = "UNGRADED"
	Dirty        Grade = "DIRTY"
)

// Grades lists every grade in the document's order of first appearance.
func Grades() []Grade { return []Grade{Ungraded, FailOpen, Closed, NotEvaluated, Errored, Dirty} }

// signal is one rejection signal: where it was read and its value.
type signal struct{ source, value string }

// HeaderPaymentResponse is the header a seller answers a settlement with.
const HeaderPaymentResponse = "PAYMENT-RESPONSE"

// signals reads every rejection signal of a response (the body is read only
// when it was kept).
func signals(c capture.Capture) []signal {
	var out []signal
	if v, ok := x402.DecodeJSON(c.Body); ok && len(c.Body) <= capture.BodyCapBytes {
		if m, ok := v.(map[string]any); ok {
			for _, k := range []string{"error", "reason", "detail"} {
				if s, ok := m[k].(string); ok && s != "" {
					out = append(out, signal{"body." + k, s})
				}
			}
		}
	}
	if v, ok := c.Header.Get(x402.HeaderName); ok {
		if root, ok := x402.DecodeHeaderValue(v); ok {
			if s, ok := root["error"].(string); ok && s != "" {
				out = append(out, signal{"payment_required.error", s})
			}
		}
	}
	if v, ok := c.Header.Get(HeaderPaymentResponse); ok && paymentResponseFailed(v) {
		out = append(out, signal{"payment_response.success_false", "false"})
	}
	return out
}

// paymentResponseFailed: base64 (padding optional) of a JSON object whose
// success member is false.
func paymentResponseFailed(v string) bool {
	s := strings.Trim(v, " \t")
	enc := base64.RawStdEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.StdEncoding
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		return false
	}
	d, ok := x402.DecodeJSON(raw)
	m, isObj := d.(map[string]any)
	if !ok || !isObj {
		return false
	}
	b, isBool := m["success"].(bool)
	return isBool && !b
}

// rejected reports whether the answer carries a rejection signal the unpaid
// challenge did not already carry with the same value.
func rejected(unpaid, answer capture.Capture) bool {
	had := map[signal]bool{}
	for _, s := range signals(unpaid) {
		had[s] = true
	}
	for _, s := range signals(answer) {
		if !had[s] {
			return true
		}
	}
	return false
}

type gradeRule struct {
	grade Grade
	when  func(unpaid, c capture.Capture) bool
}

// gradeRules are the document's grade rules, first match wins.
var gradeRules = []gradeRule{
	{Ungraded, func(_, c capture.Capture) bool { return !c.Responded() }},
	{FailOpen, func(_, c capture.Capture) bool { return c.Status >= 200 && c.Status <= 299 }},
	{Closed, func(u, c capture.Capture) bool { return c.Status == 402 && rejected(u, c) }},
	{Closed, func(_, c capture.Capture) bool { return c.Status == 400 || c.Status == 422 }},
	{NotEvaluated, func(_, c capture.Capture) bool { return c.Status == 402 }},
	{Errored, func(_, c capture.Capture) bool { return c.Status >= 500 && c.Status <= 599 }},
	{Dirty, func(_, _ capture.Capture) bool { return true }},
}

// GradeAnswer grades one probe's answer against the unpaid challenge.
func GradeAnswer(unpaid, answer capture.Capture) Grade {
	for _, r := range gradeRules {
		if r.when(unpaid, answer) {
			return r.grade
		}
	}
	return Dirty
}
