package main

import (
	"regexp"
	"slices"
	"sort"
	"unicode/utf8"
)

// MemoExpected is the memo op's result object (docs/report-format.md).
type MemoExpected struct {
	State   string      `json:"state"`
	Reason  *string     `json:"reason"`
	Factors MemoFactors `json:"factors"`
}

// MemoFactors: exactly the names of the criteria's memo_op.factors.
type MemoFactors struct {
	Fetch1               FetchFactors `json:"fetch1"`
	Fetch2               FetchFactors `json:"fetch2"`
	MemoEqualityFetch1   *bool        `json:"memo_equality_fetch1"`
	MemoEqualityFetch2   *bool        `json:"memo_equality_fetch2"`
	BodyMemosUnique      *bool        `json:"body_memos_unique"`
	HeaderMemosUnique    *bool        `json:"header_memos_unique"`
	BodyFreshnessClass   string       `json:"body_freshness_class"`
	HeaderFreshnessClass string       `json:"header_freshness_class"`
	BodyMemoFormatFetch1 *string      `json:"body_memo_format_fetch1"`
	BodyMemoFormatFetch2 *string      `json:"body_memo_format_fetch2"`
	HdrMemoFormatFetch1  *string      `json:"header_memo_format_fetch1"`
	HdrMemoFormatFetch2  *string      `json:"header_memo_format_fetch2"`
	CorrelationCensus    Census       `json:"correlation_census"`
}

// FetchFactors: "per fetch: fetch_ok, status, is_402, body_over_cap,
// body_parseable, header_present, header_decodable, body_memo_present,
// header_memo_present".
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

// Census: "per fetch, per leg: sorted field NAMES only".
type Census struct {
	Fetch1 LegCensus `json:"fetch1"`
	Fetch2 LegCensus `json:"fetch2"`
}

// LegCensus: nil marshals as null (leg not read) (R24).
type LegCensus struct {
	Body   *LegNames `json:"body"`
	Header *LegNames `json:"header"`
}

// LegNames is one leg's census under R24 (revised in issue 20): "names" are
// the published field names the leg carries, in byte order; "unlisted"
// counts every other distinct name, which is never written out.
type LegNames struct {
	Names    []string `json:"names"`
	Unlisted int      `json:"unlisted"`
}

// memoFetch is what the memo op reads from one of its two fetches.
type memoFetch struct {
	read         bool // a 402 within the cap: the challenge legs were read
	factors      FetchFactors
	ch           challenge
	bodyMemo     string
	bodyMemoOK   bool
	headerMemo   string
	headerMemoOK bool
}

// readMemoFetch: R22 — failed/timed out: fetch_ok false, the rest null; over
// the cap: fetch_ok, status, is_402, body_over_cap true, the rest null (R28:
// body_over_cap reports the observation whatever the status); not a 402:
// fetch_ok, status, is_402 false, body_over_cap false, the rest null; a 402
// within the cap: every factor set.
func readMemoFetch(c Capture) memoFetch {
	var f memoFetch
	if !c.responded() {
		return f
	}
	f.factors.FetchOK = true
	f.factors.Status = c.status()
	f.factors.Is402 = ptr(*c.Status == 402)
	f.factors.BodyOverCap = ptr(c.overCap())
	if *c.Status != 402 || c.overCap() {
		return f
	}
	f.read = true
	f.ch = readChallenge(c)
	// memo_op.field_rule: "the same extraction as payability/v1 section 2,
	// applied per fetch".
	f.bodyMemo, f.bodyMemoOK = f.ch.bodyMemo()
	f.headerMemo, f.headerMemoOK = f.ch.headerMemo()
	f.factors.BodyParseable = ptr(f.ch.bodyParseable)
	f.factors.HeaderPresent = ptr(f.ch.headerPresent)
	f.factors.HeaderDecodable = ptr(f.ch.headerDecodable)
	f.factors.BodyMemoPresent = ptr(f.bodyMemoOK)
	f.factors.HeaderMemoPresent = ptr(f.headerMemoOK)
	return f
}

// equality: "Header-to-body memo equality per fetch follows the A1 semantics
// exactly"; R22: null for a fetch that was not read.
func (f memoFetch) equality() *bool {
	if !f.read {
		return nil
	}
	return equality(f.bodyMemo, f.bodyMemoOK, f.headerMemo, f.headerMemoOK)
}

// unique: "Uniqueness across the pair is graded only when both fetches carry
// the memo on that leg, else null."
func unique(a string, aOK bool, b string, bOK bool) *bool {
	if !aOK || !bOK {
		return nil
	}
	return ptr(a != b)
}

// freshness: "regenerated when both fetches carry a … memo and they differ;
// static when both carry one and they are identical; not_gradable otherwise".
func freshness(a string, aOK bool, b string, bOK bool) string {
	switch {
	case !aOK || !bOK:
		return "not_gradable"
	case a != b:
		return "regenerated"
	}
	return "static"
}

var prefixedOpaque = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]+$`)

// formatClass: "absent when no memo is carried; short when its length is
// under 8 characters; prefixed-opaque when it matches
// ^[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]+$ with a prefix of at least 2
// characters before the first separator and a total length of at least 8;
// opaque otherwise." R23: characters are Unicode code points. R22: null for a
// fetch not read.
func formatClass(read bool, memo string, ok bool) *string {
	if !read {
		return nil
	}
	switch {
	case !ok:
		return ptr("absent")
	case utf8.RuneCountInString(memo) < 8:
		return ptr("short")
	case prefixedOpaque.MatchString(memo) && prefixLen(memo) >= 2:
		return ptr("prefixed-opaque")
	}
	return ptr("opaque")
}

// prefixLen counts the characters before the first - or _.
func prefixLen(s string) int {
	n := 0
	for _, r := range s {
		if r == '-' || r == '_' {
			return n
		}
		n++
	}
	return n
}

// publishedNames is R24's list of the names the census writes out: the
// x402 PaymentRequirements fields (v1 and v2), the extra fields of the exact
// and upto schemes on EVM and Solana, and the criteria's usdc_token_account.
var publishedNames = []string{
	"amount", "asset", "description", "extra", "maxAmountRequired", "maxTimeoutSeconds", "mimeType",
	"network", "outputSchema", "payTo", "resource", "scheme",
	"assetTransferMethod", "facilitatorAddress", "feePayer", "memo", "name", "receiverAuthorizer",
	"tokenProgram", "usdc_token_account", "version", "withdrawDelay",
}

// census: "the sorted union of the accepts[0] top-level key names and the
// accepts[0].extra key names". R24: byte order, de-duplicated; published
// names are written, the others counted; names [] and unlisted 0 for a leg
// read without an object accepts[0]; null for a leg that could not be read.
func census(root map[string]any, a0 map[string]any) *LegNames {
	if root == nil {
		return nil
	}
	set := map[string]bool{}
	for k := range a0 {
		set[k] = true
	}
	for k := range extra(a0) {
		set[k] = true
	}
	out := &LegNames{Names: []string{}}
	for k := range set {
		if slices.Contains(publishedNames, k) {
			out.Names = append(out.Names, k)
		} else {
			out.Unlisted++
		}
	}
	sort.Strings(out.Names)
	return out
}

func (f memoFetch) census() LegCensus {
	if !f.read {
		return LegCensus{}
	}
	return LegCensus{Body: census(f.ch.body, f.ch.bodyA0), Header: census(f.ch.header, f.ch.headerA0)}
}

// gradeMemo grades two back-to-back fetches (memo_op.state_rule).
func gradeMemo(c1, c2 Capture) MemoExpected {
	f1, f2 := readMemoFetch(c1), readMemoFetch(c2)
	eq1, eq2 := f1.equality(), f2.equality()
	fx := MemoFactors{
		Fetch1:               f1.factors,
		Fetch2:               f2.factors,
		MemoEqualityFetch1:   eq1,
		MemoEqualityFetch2:   eq2,
		BodyMemosUnique:      unique(f1.bodyMemo, f1.bodyMemoOK, f2.bodyMemo, f2.bodyMemoOK),
		HeaderMemosUnique:    unique(f1.headerMemo, f1.headerMemoOK, f2.headerMemo, f2.headerMemoOK),
		BodyFreshnessClass:   freshness(f1.bodyMemo, f1.bodyMemoOK, f2.bodyMemo, f2.bodyMemoOK),
		HeaderFreshnessClass: freshness(f1.headerMemo, f1.headerMemoOK, f2.headerMemo, f2.headerMemoOK),
		BodyMemoFormatFetch1: formatClass(f1.read, f1.bodyMemo, f1.bodyMemoOK),
		BodyMemoFormatFetch2: formatClass(f2.read, f2.bodyMemo, f2.bodyMemoOK),
		HdrMemoFormatFetch1:  formatClass(f1.read, f1.headerMemo, f1.headerMemoOK),
		HdrMemoFormatFetch2:  formatClass(f2.read, f2.headerMemo, f2.headerMemoOK),
		CorrelationCensus:    Census{Fetch1: f1.census(), Fetch2: f2.census()},
	}
	b1, b2 := f1.bodyMemoOK, f2.bodyMemoOK
	result := func(state, reason string) MemoExpected {
		r := MemoExpected{State: state, Factors: fx}
		if reason != "" {
			r.Reason = &reason
		}
		return r
	}
	switch {
	// (1) NOT-A-402 — "either fetch failed or timed out, its response status
	// is not 402, or its response body exceeded the 65,536-byte cap".
	case !f1.read || !f2.read:
		return result("NOT-A-402", "")
	// (2) MEMO-ABSENT — "the body leg carries no memo in EITHER fetch".
	case !b1 && !b2:
		return result("MEMO-ABSENT", "")
	// (3) LEG-MISMATCH — "in either fetch, header-to-body memo equality is
	// false".
	case isFalse(eq1) || isFalse(eq2):
		return result("LEG-MISMATCH", "")
	// (4) MEMO-REUSED — "both fetches carry body memos and they are identical".
	case b1 && b2 && f1.bodyMemo == f2.bodyMemo:
		return result("MEMO-REUSED", "")
	// (5) BOUND — "body memos are present in both fetches, unique across the
	// pair, and header-to-body memo equality is true in both fetches".
	case b1 && b2 && isTrue(eq1) && isTrue(eq2):
		return result("BOUND", "")
	// Completion rule 1: "if the body memo is present in exactly one fetch and
	// no earlier step matched, the state is MEMO-ABSENT with reason
	// memo_absent_one_fetch".
	case b1 != b2:
		return result("MEMO-ABSENT", "memo_absent_one_fetch")
	}
	// Completion rule 2: "if body memos are present in both, unique, and no
	// earlier step matched but equality is not true in both fetches … the
	// state is LEG-MISMATCH with reason memo_binding_not_established".
	// Unreachable under the A1 equality semantics (R21); kept so the function
	// is total.
	return result("LEG-MISMATCH", "memo_binding_not_established")
}

func isFalse(b *bool) bool { return b != nil && !*b }
