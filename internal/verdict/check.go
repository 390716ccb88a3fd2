// Package verdict holds the three graders of the criteria: A1 check, A4 memo
// and A3 probe. Each is a pure function from captures to a typed result with
// every factor; none fetches, logs or reads the clock.
package verdict

import (
	"unicode/utf8"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// State is one of the published verdict states of the check or memo op.
type State string

// The six states of the check op, in the criteria's order.
const (
	Populated        State = "POPULATED"
	AmountsOnly      State = "AMOUNTS-ONLY"
	Unconfigured     State = "UNCONFIGURED"
	HeaderMissing    State = "HEADER-MISSING"
	ResourceMismatch State = "RESOURCE-MISMATCH"
	NotA402          State = "NOT-A-402"
)

// DescriptionThreshold is the description-length risk flag's threshold in
// characters (Unicode code points, R6).
const DescriptionThreshold = 500

// Reasons a check is NOT-A-402, checked in this order (R19).
const (
	ReasonFetchFailed  = "fetch_failed"
	ReasonTimeout      = "timeout"
	ReasonStatusNot402 = "status_not_402"
	ReasonBodyOverCap  = "body_over_cap"
)

// CheckFactors are the field-check factors of the check op. A nil pointer is
// JSON null: the factor's leg was never read (R11).
type CheckFactors struct {
	HeaderPresent           *bool   `json:"header_present"`
	HeaderDecodable         *bool   `json:"header_decodable"`
	BodyParseable           *bool   `json:"body_parseable"`
	RecipientPresent        *bool   `json:"recipient_present"`
	TokenAccountPresent     *bool   `json:"token_account_present"`
	MemoPresent             *bool   `json:"memo_present"`
	AmountsPresent          *bool   `json:"amounts_present"`
	AmountsConsistent       *bool   `json:"amounts_consistent"`
	ResourcePresent         *bool   `json:"resource_present"`
	ResourceEqualsCalledURL *bool   `json:"resource_equals_called_url"`
	HeaderBodyMemoEqual     *bool   `json:"header_body_memo_equal"`
	HeaderBodyAmountEqual   *bool   `json:"header_body_amount_equal"`
	HeaderBodyPayToEqual    *bool   `json:"header_body_pay_to_equal"`
	DescriptionOverlong     *bool   `json:"description_overlong"`
	Reason                  *string `json:"reason"`
	Status                  *int    `json:"status"`
}

// CheckResult is the A1 verdict: one state and every factor.
type CheckResult struct {
	State   State        `json:"state"`
	Factors CheckFactors `json:"factors"`
}

func ptr[T any](v T) *T { return &v }

// equality is the A1 header-to-body equality: true when both legs carry the
// field and agree, false when they differ or exactly one carries it, null when
// neither does.
func equality(header, body string) *bool {
	switch {
	case header == "" && body == "":
		return nil
	case header == "" || body == "":
		return ptr(false)
	default:
		return ptr(header == body)
	}
}

// notA402Reason returns the NOT-A-402 reason of a capture, or "" when the
// capture is a 402 within the cap.
func notA402Reason(c capture.Capture) string {
	switch {
	case c.Outcome == capture.Timeout:
		return ReasonTimeout
	case c.Outcome != capture.OK && c.Outcome != capture.OverCap, c.Status == 0:
		return ReasonFetchFailed
	case c.Status != 402:
		return ReasonStatusNot402
	case c.OverCapBody():
		return ReasonBodyOverCap
	}
	return ""
}

// checkFacts is everything the state rules look at, extracted once.
type checkFacts struct {
	notA402           string
	headerPresent     bool
	headerDecodable   bool
	bodyParseable     bool
	body, header      x402.Leg
	resourceMismatch  bool
	amountsPresent    bool
	amountsConsistent bool
	equalities        [3]*bool // memo, amount, payTo
}

func extractCheck(url string, c capture.Capture) checkFacts {
	f := checkFacts{notA402: notA402Reason(c)}
	if f.notA402 != "" {
		return f
	}
	// One pass over each leg; the check op reports no census.
	f.body, f.bodyParseable = x402.ReadBody(c.Body, false)
	var value string
	value, f.headerPresent = c.Header.Get(x402.HeaderKey)
	if f.headerPresent {
		f.header, f.headerDecodable = x402.ReadHeader(value, false)
	}
	// R1/R16: every present resource is compared — the body's and both
	// places of the header's.
	f.resourceMismatch = (f.body.Resource != "" && f.body.Resource != url) ||
		(f.header.Resource != "" && f.header.Resource != url) ||
		(f.header.Resource2 != "" && f.header.Resource2 != url)
	f.amountsPresent = f.body.Amount != ""
	f.amountsConsistent = f.amountsPresent &&
		(f.body.MaxAmountRequired == "" || f.body.MaxAmountRequired == f.body.Amount) &&
		(f.header.Amount == "" || f.header.Amount == f.body.Amount)
	f.equalities = [3]*bool{
		equality(f.header.Memo, f.body.Memo),
		equality(f.header.Amount, f.body.Amount),
		equality(f.header.PayTo, f.body.PayTo),
	}
	return f
}

// anyEqualityNotTrue: POPULATED needs "every field check passes", so an
// equality that is false fails and one that is null (neither leg carries the
// field) does not pass either. Under R13 a null equality always comes with an
// absent core field, so this only keeps rule (6) from ever resting on that.
func (f checkFacts) anyEqualityNotTrue() bool {
	for _, e := range f.equalities {
		if !isTrue(e) {
			return true
		}
	}
	return false
}

type checkRule struct {
	state State
	match func(checkFacts) bool
}

// checkRules is the criteria's state_rule, in order: first match wins.
var checkRules = []checkRule{
	{NotA402, func(f checkFacts) bool { return f.notA402 != "" }},
	{ResourceMismatch, func(f checkFacts) bool { return f.resourceMismatch }},
	{HeaderMissing, func(f checkFacts) bool { return !f.headerPresent || !f.headerDecodable }},
	{AmountsOnly, func(f checkFacts) bool {
		return f.amountsPresent && f.amountsConsistent &&
			f.body.PayTo == "" && f.body.TokenAccount == "" && f.body.Memo == ""
	}},
	{Unconfigured, func(f checkFacts) bool {
		return !f.amountsPresent || !f.amountsConsistent ||
			f.body.PayTo == "" || f.body.TokenAccount == "" || f.body.Memo == "" || f.body.Resource == "" ||
			f.anyEqualityNotTrue() || !f.bodyParseable
	}},
	{Populated, func(checkFacts) bool { return true }},
}

// Check grades one GET of url (A1).
func Check(url string, c capture.Capture) CheckResult {
	f := extractCheck(url, c)
	var r CheckResult
	for _, rule := range checkRules {
		if rule.match(f) {
			r.State = rule.state
			break
		}
	}
	if c.Responded() {
		r.Factors.Status = ptr(c.Status)
	}
	if f.notA402 != "" {
		r.Factors.Reason = ptr(f.notA402)
		return r
	}
	r.Factors.HeaderPresent = ptr(f.headerPresent)
	r.Factors.HeaderDecodable = ptr(f.headerDecodable)
	r.Factors.BodyParseable = ptr(f.bodyParseable)
	r.Factors.RecipientPresent = ptr(f.body.PayTo != "")
	r.Factors.TokenAccountPresent = ptr(f.body.TokenAccount != "")
	r.Factors.MemoPresent = ptr(f.body.Memo != "")
	r.Factors.AmountsPresent = ptr(f.amountsPresent)
	r.Factors.AmountsConsistent = ptr(f.amountsConsistent)
	r.Factors.ResourcePresent = ptr(f.body.Resource != "")
	if f.body.Resource != "" || f.header.Resource != "" || f.header.Resource2 != "" {
		r.Factors.ResourceEqualsCalledURL = ptr(!f.resourceMismatch)
	}
	r.Factors.HeaderBodyMemoEqual = f.equalities[0]
	r.Factors.HeaderBodyAmountEqual = f.equalities[1]
	r.Factors.HeaderBodyPayToEqual = f.equalities[2]
	r.Factors.DescriptionOverlong = ptr(utf8.RuneCountInString(f.body.Description) > DescriptionThreshold)
	return r
}
