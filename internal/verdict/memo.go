package verdict

import (
	"unicode/utf8"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// The five states of the memo op, in the criteria's order.
const (
	Bound       State = "BOUND"
	MemoReused  State = "MEMO-REUSED"
	LegMismatch State = "LEG-MISMATCH"
	MemoAbsent  State = "MEMO-ABSENT"
)

// Reasons of the memo op's completion rules.
const (
	ReasonMemoAbsentOneFetch        = "memo_absent_one_fetch"
	ReasonMemoBindingNotEstablished = "memo_binding_not_established"
)

// Freshness classes (graded per leg across the pair).
const (
	FreshRegenerated = "regenerated"
	FreshStatic      = "static"
	FreshNotGradable = "not_gradable"
)

// Format classes of one memo string.
const (
	FormatAbsent         = "absent"
	FormatShort          = "short"
	FormatPrefixedOpaque = "prefixed-opaque"
	FormatOpaque         = "opaque"
)

// FetchFactors are the per-fetch factors of the memo op (R22).
type FetchFactors struct {
	FetchOK           bool  `json:"fetch_ok"`
	Status            *int  `json:"status"`
	Is402             *bool `json:"is_402"`
	BodyOverCap       *bool `json:"body_over_cap"`
	BodyParseable     *bool `json:"body_parseable"`
	HeaderPresent     *bool `json:"header_present"`
	HeaderDecodable   *bool `json:"header_decodable"`
	BodyMemoPresent   *bool `json:"body_memo_present"`
	HeaderMemoPresent *bool `json:"header_memo_present"`
}

// LegNames is one fetch's census, per leg (R24): nil (JSON null) for a leg
// that could not be read.
type LegNames struct {
	Body   *LegCensus `json:"body"`
	Header *LegCensus `json:"header"`
}

// LegCensus is one leg's census, closed-form (R24, issue 20): the listed
// field names the leg's accepts[0] and accepts[0].extra carry, sorted in
// byte order, and the count of the other names. A name the seller chose is
// never reported, only counted: every string here is one of CensusNames.
type LegCensus struct {
	Names    []string `json:"names"`
	Unlisted int      `json:"unlisted"`
}

// CensusNames are the field names the census reports by name (R24): the
// accepts entry fields of x402 v1 and v2 (PaymentRequirements), the extra
// fields the exact and upto schemes define on EVM and Solana, and the
// criteria's own extra.usdc_token_account. Every other name is unlisted.
var CensusNames = map[string]bool{
	// accepts[0] (x402-specification-v1.md, -v2.md: PaymentRequirements)
	"scheme": true, "network": true, "amount": true, "maxAmountRequired": true, "asset": true,
	"payTo": true, "resource": true, "description": true, "mimeType": true, "outputSchema": true,
	"maxTimeoutSeconds": true, "extra": true,
	// extra (scheme_exact_evm.md, scheme_exact_svm.md, scheme_upto_evm.md,
	// scheme_upto_svm.md; the criteria's field_rule)
	"name": true, "version": true, "assetTransferMethod": true, "feePayer": true, "memo": true,
	"facilitatorAddress": true, "receiverAuthorizer": true, "withdrawDelay": true, "tokenProgram": true,
	"usdc_token_account": true,
}

// legCensus classifies a leg's sorted key names: nil stays nil (not read).
func legCensus(names []string) *LegCensus {
	if names == nil {
		return nil
	}
	c := &LegCensus{Names: []string{}}
	for _, n := range names {
		if CensusNames[n] {
			c.Names = append(c.Names, n)
		} else {
			c.Unlisted++
		}
	}
	return c
}

// Census is the correlation-field census of both fetches.
type Census struct {
	Fetch1 LegNames `json:"fetch1"`
	Fetch2 LegNames `json:"fetch2"`
}

// MemoFactors are exactly the factors the criteria's memo_op.factors name.
type MemoFactors struct {
	Fetch1                 FetchFactors `json:"fetch1"`
	Fetch2                 FetchFactors `json:"fetch2"`
	MemoEqualityFetch1     *bool        `json:"memo_equality_fetch1"`
	MemoEqualityFetch2     *bool        `json:"memo_equality_fetch2"`
	BodyMemosUnique        *bool        `json:"body_memos_unique"`
	HeaderMemosUnique      *bool        `json:"header_memos_unique"`
	BodyFreshnessClass     string       `json:"body_freshness_class"`
	HeaderFreshnessClass   string       `json:"header_freshness_class"`
	BodyMemoFormatFetch1   *string      `json:"body_memo_format_fetch1"`
	BodyMemoFormatFetch2   *string      `json:"body_memo_format_fetch2"`
	HeaderMemoFormatFetch1 *string      `json:"header_memo_format_fetch1"`
	HeaderMemoFormatFetch2 *string      `json:"header_memo_format_fetch2"`
	CorrelationCensus      Census       `json:"correlation_census"`
}

// MemoResult is the A4 verdict. Reason is set only when a completion rule
// decided the state. It never carries a memo value.
type MemoResult struct {
	State   State       `json:"state"`
	Reason  *string     `json:"reason"`
	Factors MemoFactors `json:"factors"`
}

// memoFetch is what one fetch of the pair carries, extracted once.
type memoFetch struct {
	read         bool // a 402 within the cap
	body, header x402.Leg
	factors      FetchFactors
}

func extractMemoFetch(c capture.Capture) memoFetch {
	var m memoFetch
	if c.Outcome != capture.OK && c.Outcome != capture.OverCap || c.Status == 0 {
		return m // failed, timed out or never sent: every other factor null
	}
	m.factors.FetchOK = true
	m.factors.Status = ptr(c.Status)
	m.factors.Is402 = ptr(c.Status == 402)
	m.factors.BodyOverCap = ptr(c.OverCapBody())
	if c.Status != 402 || c.OverCapBody() {
		return m
	}
	m.read = true
	var parseable, decodable bool
	// One pass over each leg, census included: the memo op reports it.
	m.body, parseable = x402.ReadBody(c.Body, true)
	value, present := c.Header.Get(x402.HeaderKey)
	if present {
		m.header, decodable = x402.ReadHeader(value, true)
	}
	m.factors.BodyParseable = ptr(parseable)
	m.factors.HeaderPresent = ptr(present)
	m.factors.HeaderDecodable = ptr(decodable)
	m.factors.BodyMemoPresent = ptr(m.body.Memo != "")
	m.factors.HeaderMemoPresent = ptr(m.header.Memo != "")
	return m
}

// matchesPrefixedOpaque reports whether s matches the criteria's
// ^[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]+$: every byte in [A-Za-z0-9_-], a
// letter first, and a separator with at least one byte after the first one.
// (The regexp itself is kept in the tests, which check the two agree.)
func matchesPrefixedOpaque(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	sep := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' || c == '_':
			if sep < 0 {
				sep = i
			}
		default:
			return false
		}
	}
	return sep > 0 && sep < len(s)-1
}

// MemoFormat is the structural format class of one memo string (R23).
func MemoFormat(memo string) string {
	n := utf8.RuneCountInString(memo)
	switch {
	case memo == "":
		return FormatAbsent
	case n < 8:
		return FormatShort
	case matchesPrefixedOpaque(memo) && prefixLen(memo) >= 2:
		return FormatPrefixedOpaque
	default:
		return FormatOpaque
	}
}

func prefixLen(s string) int {
	for i, r := range s {
		if r == '-' || r == '_' {
			return i
		}
	}
	return len(s)
}

func unique(a, b string) *bool {
	if a == "" || b == "" {
		return nil
	}
	return ptr(a != b)
}

func freshness(a, b string) string {
	switch {
	case a == "" || b == "":
		return FreshNotGradable
	case a != b:
		return FreshRegenerated
	default:
		return FreshStatic
	}
}

// memoFacts is everything the memo state rules look at.
type memoFacts struct {
	f1, f2   memoFetch
	eq1, eq2 *bool
}

func isFalse(b *bool) bool { return b != nil && !*b }
func isTrue(b *bool) bool  { return b != nil && *b }

type memoRule struct {
	state  State
	reason string
	match  func(memoFacts) bool
}

// memoRules is the criteria's memo state_rule in order, then its two
// completion rules: first match wins.
var memoRules = []memoRule{
	{NotA402, "", func(m memoFacts) bool { return !m.f1.read || !m.f2.read }},
	{MemoAbsent, "", func(m memoFacts) bool { return m.f1.body.Memo == "" && m.f2.body.Memo == "" }},
	{LegMismatch, "", func(m memoFacts) bool { return isFalse(m.eq1) || isFalse(m.eq2) }},
	{MemoReused, "", func(m memoFacts) bool {
		return m.f1.body.Memo != "" && m.f2.body.Memo != "" && m.f1.body.Memo == m.f2.body.Memo
	}},
	{Bound, "", func(m memoFacts) bool {
		return m.f1.body.Memo != "" && m.f2.body.Memo != "" && m.f1.body.Memo != m.f2.body.Memo &&
			isTrue(m.eq1) && isTrue(m.eq2)
	}},
	{MemoAbsent, ReasonMemoAbsentOneFetch, func(m memoFacts) bool {
		return (m.f1.body.Memo == "") != (m.f2.body.Memo == "")
	}},
	// Unreachable under the A1 equality semantics (R21); kept so the function is total.
	{LegMismatch, ReasonMemoBindingNotEstablished, func(memoFacts) bool { return true }},
}

// Memo grades two back-to-back GETs of one endpoint (A4).
func Memo(first, second capture.Capture) MemoResult {
	m := memoFacts{f1: extractMemoFetch(first), f2: extractMemoFetch(second)}
	if m.f1.read {
		m.eq1 = equality(m.f1.header.Memo, m.f1.body.Memo)
	}
	if m.f2.read {
		m.eq2 = equality(m.f2.header.Memo, m.f2.body.Memo)
	}
	var r MemoResult
	for _, rule := range memoRules {
		if rule.match(m) {
			r.State = rule.state
			if rule.reason != "" {
				r.Reason = ptr(rule.reason)
			}
			break
		}
	}
	r.Factors = MemoFactors{
		Fetch1:               m.f1.factors,
		Fetch2:               m.f2.factors,
		MemoEqualityFetch1:   m.eq1,
		MemoEqualityFetch2:   m.eq2,
		BodyMemosUnique:      unique(m.f1.body.Memo, m.f2.body.Memo),
		HeaderMemosUnique:    unique(m.f1.header.Memo, m.f2.header.Memo),
		BodyFreshnessClass:   freshness(m.f1.body.Memo, m.f2.body.Memo),
		HeaderFreshnessClass: freshness(m.f1.header.Memo, m.f2.header.Memo),
	}
	if m.f1.read {
		r.Factors.BodyMemoFormatFetch1 = ptr(MemoFormat(m.f1.body.Memo))
		r.Factors.HeaderMemoFormatFetch1 = ptr(MemoFormat(m.f1.header.Memo))
		r.Factors.CorrelationCensus.Fetch1 = LegNames{Body: legCensus(m.f1.body.Census), Header: legCensus(m.f1.header.Census)}
	}
	if m.f2.read {
		r.Factors.BodyMemoFormatFetch2 = ptr(MemoFormat(m.f2.body.Memo))
		r.Factors.HeaderMemoFormatFetch2 = ptr(MemoFormat(m.f2.header.Memo))
		r.Factors.CorrelationCensus.Fetch2 = LegNames{Body: legCensus(m.f2.body.Census), Header: legCensus(m.f2.header.Census)}
	}
	return r
}
