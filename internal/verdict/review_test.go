package verdict

// Review rows: expected outputs derived by hand from the criteria text
// (payability.criteria.json, rail-probe.criteria.json) and the readings of
// docs/criteria-readings.md, not from the graders. Each row cites the clause
// it reads. They stay as regression tests.

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

const rvURL = "https://seller.example/api/paid"

// rvBody is a fleet-shaped v1 body: every body-leg field of field_rule present.
const rvBody = `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000",` +
	`"payTo":"PayTo1111","resource":"https://seller.example/api/paid","description":"one paid call",` +
	`"extra":{"usdc_token_account":"Token1111","memo":"pv-memo-0001"}}]}`

// rvHdr is the matching decoded PAYMENT-REQUIRED JSON (x402 v2 shape, R1).
const rvHdr = `{"x402Version":2,"resource":{"url":"https://seller.example/api/paid"},` +
	`"accepts":[{"scheme":"exact","network":"solana","amount":"10000","payTo":"PayTo1111","extra":{"memo":"pv-memo-0001"}}]}`

// rvSub replaces old/new pairs in s; it fails loudly when an old string is
// not there, so a row never silently tests the base shape.
func rvSub(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("rvSub: %q not in %s", pairs[i], s)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// rvCap is a 402 (or other status) with an optional header value and a body.
func rvCap(status int, headerValue *string, body string) capture.Capture {
	h := capture.Header{}
	if headerValue != nil {
		h["Payment-Required"] = []string{*headerValue}
	}
	return capture.Capture{Outcome: capture.OK, Status: status, Header: h, Body: []byte(body)}
}

func rvB64(s string) *string { v := base64.StdEncoding.EncodeToString([]byte(s)); return &v }
func rvRaw(s string) *string { return &s }

func rvBool(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "T"
	}
	return "F"
}

// rvCheckFactors renders the 14 boolean factors in this order:
// header_present header_decodable body_parseable | recipient token memo |
// amounts_present amounts_consistent | resource_present resource_equals |
// memo_eq amount_eq pay_to_eq | description_overlong.
func rvCheckFactors(f CheckFactors) string {
	return rvBool(f.HeaderPresent) + rvBool(f.HeaderDecodable) + rvBool(f.BodyParseable) + " " +
		rvBool(f.RecipientPresent) + rvBool(f.TokenAccountPresent) + rvBool(f.MemoPresent) + " " +
		rvBool(f.AmountsPresent) + rvBool(f.AmountsConsistent) + " " +
		rvBool(f.ResourcePresent) + rvBool(f.ResourceEqualsCalledURL) + " " +
		rvBool(f.HeaderBodyMemoEqual) + rvBool(f.HeaderBodyAmountEqual) + rvBool(f.HeaderBodyPayToEqual) + " " +
		rvBool(f.DescriptionOverlong)
}

func rvStr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func rvInt(i *int) string {
	if i == nil {
		return "-"
	}
	return fmt.Sprint(*i)
}

const rvAllTrue = "TTT TTT TT TT TTT F"

func TestReviewCheckHandDerived(t *testing.T) {
	hdr := rvB64(rvHdr)
	tests := []struct {
		name   string
		url    string // "" = rvURL
		cap    capture.Capture
		state  State
		f      string // rvCheckFactors form
		reason string // "-" = null
		status string // "-" = null
	}{
		{"base fleet challenge: every field check passes (state_rule 6)",
			"", rvCap(402, hdr, rvBody), Populated, rvAllTrue, "-", "402"},

		// R17: "the bytes parse as one JSON value". JSON's grammar has no
		// magnitude limit on numbers, so 1e400 in an unread field leaves the
		// body parseable and every field present.
		{"body carries a number beyond float64 (R17: still one JSON value)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"scheme":"exact"`, `"scheme":"exact","maxTimeoutSeconds":1e400`)), Populated, rvAllTrue, "-", "402"},
		{"body carries a 400-digit integer (R17)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"scheme":"exact"`, `"scheme":"exact","n":`+strings.Repeat("9", 400))), Populated, rvAllTrue, "-", "402"},
		{"body carries -1e400 at top level (R17)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"x402Version":1`, `"x402Version":1,"n":-1e400`)), Populated, rvAllTrue, "-", "402"},
		{"body carries 1e-400 (underflow) (R17)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"x402Version":1`, `"x402Version":1,"n":1e-400`)), Populated, rvAllTrue, "-", "402"},
		// R4: "The decoded bytes must be a JSON object" — a header whose
		// object holds 1e400 is a JSON object.
		{"header JSON carries a number beyond float64 (R4: still a JSON object)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"x402Version":2`, `"x402Version":2,"maxTimeoutSeconds":1e400`)), rvBody), Populated, rvAllTrue, "-", "402"},
		// R3: a number-typed amount is absent, whatever its magnitude.
		{"amount number-typed beyond float64 is absent (R3)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"amount":"10000","maxAmountRequired":"10000"`, `"amount":1e400`)),
			Unconfigured, "TTT TTT FF TT TFT F", "-", "402"},

		// JSON string escapes decode before comparison: equal JSON strings.
		{"memo spelled with \\u escapes equals the literal header memo",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"memo":"pv-memo-0001"`, `"memo":"pv-\u006d\u0065mo-0001"`)), Populated, rvAllTrue, "-", "402"},
		{"resource with escaped slashes equals the called URL (R2 after JSON decoding)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"resource":"https://seller.example/api/paid"`, `"resource":"https:\/\/seller.example\/api\/paid"`)), Populated, rvAllTrue, "-", "402"},
		{"memo non-ASCII, escaped on one leg only",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"memo":"pv-memo-0001"`, `"memo":"pv-m\u00e9mo-0001"`)), rvSub(t, rvBody, `"memo":"pv-memo-0001"`, `"memo":"pv-mémo-0001"`)), Populated, rvAllTrue, "-", "402"},
		// Equality is string equality: no Unicode normalisation (R2/R3 spirit).
		{"memo NFC on one leg, NFD on the other: not equal",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"memo":"pv-memo-0001"`, `"memo":"pv-me\u0301mo-0001"`)), rvSub(t, rvBody, `"memo":"pv-memo-0001"`, `"memo":"pv-mémo-0001"`)),
			Unconfigured, "TTT TTT TT TT FTT F", "-", "402"},

		// R17: a UTF-8 BOM is not JSON whitespace: the body does not parse.
		{"body starts with a BOM: not parseable (R17), UNCONFIGURED (state_rule 5)",
			"", rvCap(402, hdr, "\ufeff"+rvBody), Unconfigured, "TTF FFF FF FT FFF F", "-", "402"},
		{"header JSON starts with a BOM: undecodable (R4), HEADER-MISSING",
			"", rvCap(402, rvB64("\ufeff"+rvHdr), rvBody), HeaderMissing, "TFT TTT TT TT FFF F", "-", "402"},
		{"body followed by a no-break space: not parseable (R17)",
			"", rvCap(402, hdr, rvBody+"\u00a0"), Unconfigured, "TTF FFF FF FT FFF F", "-", "402"},
		{"body followed by a NUL byte: not parseable (R17)",
			"", rvCap(402, hdr, rvBody+"\x00"), Unconfigured, "TTF FFF FF FT FFF F", "-", "402"},
		{"decoded header JSON wrapped in JSON whitespace: decodable (R4)",
			"", rvCap(402, rvB64("\r\n\t "+rvHdr+"\n"), rvBody), Populated, rvAllTrue, "-", "402"},
		{"header base64 wrapped in a vertical tab: undecodable (R4 ignores space, tab, CR, LF only)",
			"", rvCap(402, rvRaw("\v"+*hdr), rvBody), HeaderMissing, "TFT TTT TT TT FFF F", "-", "402"},
		{"header value with a scheme word before the base64: undecodable (R4)",
			"", rvCap(402, rvRaw("x402 "+*hdr), rvBody), HeaderMissing, "TFT TTT TT TT FFF F", "-", "402"},

		// Duplicate JSON keys: the last one is the value (as JSON.parse and
		// every mainstream decoder read it).
		{"duplicate payTo key, last one matches",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"payTo":"PayTo1111"`, `"payTo":"Other","payTo":"PayTo1111"`)), Populated, rvAllTrue, "-", "402"},

		// R3: present = non-empty JSON string; amounts = ^[0-9]+$.
		{"payTo is an object: recipient absent, pay_to equality false",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"payTo":"PayTo1111"`, `"payTo":{"address":"PayTo1111"}`)), Unconfigured, "TTT FTT TT TT TTF F", "-", "402"},
		{"payTo is an array of the string: absent",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"payTo":"PayTo1111"`, `"payTo":["PayTo1111"]`)), Unconfigured, "TTT FTT TT TT TTF F", "-", "402"},
		{"payTo true: absent",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"payTo":"PayTo1111"`, `"payTo":true`)), Unconfigured, "TTT FTT TT TT TTF F", "-", "402"},
		{"extra.memo is an array and no top-level memo: memo absent (R15)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"memo":"pv-memo-0001"`, `"memo":["pv-memo-0001"]`)), Unconfigured, "TTT TTF TT TT FTT F", "-", "402"},
		{"extra is an array: token absent, memo falls back to the top level (R15)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"extra":{"usdc_token_account":"Token1111","memo":"pv-memo-0001"}}]`, `"extra":[]}],"memo":"pv-memo-0001"`)), Unconfigured, "TTT TFT TT TT TTT F", "-", "402"},
		{"fullwidth digits are not digits (R3)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"amount":"10000"`, `"amount":"１００００"`)), Unconfigured, "TTT TTT FF TT TFT F", "-", "402"},
		{"amount with a trailing newline is not a string of digits (R3)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"amount":"10000"`, `"amount":"10000\n"`)), Unconfigured, "TTT TTT FF TT TFT F", "-", "402"},
		{"amount \"00\" vs header \"0\": string equality (R3)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"amount":"10000"`, `"amount":"0"`)), rvSub(t, rvBody, `"amount":"10000","maxAmountRequired":"10000"`, `"amount":"00"`)), Unconfigured, "TTT TTT TF TT TFT F", "-", "402"},
		{"maxAmountRequired not digits is absent, so consistent (field_rule + R3)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"maxAmountRequired":"10000"`, `"maxAmountRequired":"0.01"`)), Populated, rvAllTrue, "-", "402"},
		{"a 1,000-digit amount equal on every leg (R3: string equality)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"amount":"10000"`, `"amount":"`+strings.Repeat("7", 1000)+`"`)), rvSub(t, rvBody, `"amount":"10000","maxAmountRequired":"10000"`, `"amount":"`+strings.Repeat("7", 1000)+`","maxAmountRequired":"`+strings.Repeat("7", 1000)+`"`)), Populated, rvAllTrue, "-", "402"},

		// field_rule: memo = extra.memo (body: falling back to the top-level
		// memo); a memo anywhere else is not read.
		{"memo directly in accepts[0] (not in extra): not read, memo absent",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"extra":{"usdc_token_account":"Token1111","memo":"pv-memo-0001"}`, `"memo":"pv-memo-0001","extra":{"usdc_token_account":"Token1111"}`)), Unconfigured, "TTT TTF TT TT FTT F", "-", "402"},
		{"header memo at the header's top level (not in accepts[0].extra): not read (no header fallback)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"extra":{"memo":"pv-memo-0001"}`, `"extra":{}`, `"x402Version":2`, `"x402Version":2,"memo":"pv-memo-0001"`)), rvBody), Unconfigured, "TTT TTT TT TT FTT F", "-", "402"},
		{"extra null: token absent, memo falls back to the top level",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"extra":{"usdc_token_account":"Token1111","memo":"pv-memo-0001"}}]`, `"extra":null}],"memo":"pv-memo-0001"`)), Unconfigured, "TTT TFT TT TT TTT F", "-", "402"},
		{"token account under another name is not read",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"usdc_token_account"`, `"tokenAccount"`)), Unconfigured, "TTT TFT TT TT TTT F", "-", "402"},
		{"header Payment-Required decodes but accepts is a string: header fields absent, top-level resource read",
			"", rvCap(402, rvB64(`{"resource":{"url":"https://seller.example/api/paid"},"accepts":"exact"}`), rvBody), Unconfigured, "TTT TTT TT TT FFF F", "-", "402"},
		// state_rule (4) precedes (5): header carries payTo and memo the body lacks.
		{"amounts-only body with a header carrying payTo and memo: AMOUNTS-ONLY (4 before 5)",
			"", rvCap(402, hdr, `{"accepts":[{"amount":"10000","resource":"https://seller.example/api/paid"}]}`), AmountsOnly, "TTT FFF TT TT FTF F", "-", "402"},
		{"amounts-only body without resource: AMOUNTS-ONLY (4 does not ask for resource)",
			"", rvCap(402, rvB64(`{"accepts":[{"amount":"10000"}]}`), `{"accepts":[{"amount":"10000"}]}`), AmountsOnly, "TTT FFF TT F- -T- F", "-", "402"},
		{"amounts-only body, header accepts[0] empty object: AMOUNTS-ONLY, amount equality false",
			"", rvCap(402, rvB64(`{"accepts":[{}]}`), `{"accepts":[{"amount":"5","maxAmountRequired":"5"}]}`), AmountsOnly, "TTT FFF TT F- -F- F", "-", "402"},
		{"amounts-only shape with a top-level memo (R15): not all absent, UNCONFIGURED",
			"", rvCap(402, rvB64(`{"accepts":[{"amount":"5"}]}`), `{"accepts":[{"amount":"5"}],"memo":"pv-memo-0001"}`), Unconfigured, "TTT FFT TT F- FT- F", "-", "402"},
		{"amounts-only shape with an empty-string payTo: still AMOUNTS-ONLY (R3)",
			"", rvCap(402, rvB64(`{"accepts":[{"amount":"5"}]}`), `{"accepts":[{"amount":"5","payTo":""}]}`), AmountsOnly, "TTT FFF TT F- -T- F", "-", "402"},

		// state_rule (2): resource compared with the URL exactly as submitted (R2).
		{"called URL has a fragment the resource lacks: RESOURCE-MISMATCH (R2)",
			rvURL + "#frag", rvCap(402, hdr, rvBody), ResourceMismatch, "TTT TTT TT TF TTT F", "-", "402"},
		{"resource has an empty query '?': RESOURCE-MISMATCH (R2)",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"resource":"https://seller.example/api/paid"`, `"resource":"https://seller.example/api/paid?"`)), ResourceMismatch, "TTT TTT TT TF TTT F", "-", "402"},
		{"header resource is a string, not an object: not read; fallback absent (R1)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"resource":{"url":"https://seller.example/api/paid"}`, `"resource":"https://other.example/"`)), rvBody), Populated, rvAllTrue, "-", "402"},
		{"header resource.url not a string; a string accepts[0].resource is not resource.url: not read (R1)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"resource":{"url":"https://seller.example/api/paid"}`, `"resource":{"url":7}`, `"scheme":"exact"`, `"scheme":"exact","resource":"https://other.example/"`)), rvBody), Populated, rvAllTrue, "-", "402"},
		{"header accepts[0].resource.url differs while the top-level resource.url equals: both read, RESOURCE-MISMATCH (R1)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"scheme":"exact"`, `"scheme":"exact","resource":{"url":"https://other.example/"}`)), rvBody), ResourceMismatch, "TTT TTT TT TF TTT F", "-", "402"},
		{"body resource object with url and the header lacking a resource: the object is absent, UNCONFIGURED (R1, R16)",
			"", rvCap(402, rvB64(rvSub(t, rvHdr, `"resource":{"url":"https://seller.example/api/paid"},`, ``)), rvSub(t, rvBody, `"resource":"https://seller.example/api/paid"`, `"resource":{"url":"https://seller.example/api/paid"}`)), Unconfigured, "TTT TTT TT F- TTT F", "-", "402"},
		{"mismatch with undecodable header and unparseable body: nothing carries a resource, HEADER-MISSING",
			"", rvCap(402, rvRaw("%%%"), "<html>"), HeaderMissing, "TFF FFF FF F- --- F", "-", "402"},
		// Two rules at once: (2) RESOURCE-MISMATCH and (4) AMOUNTS-ONLY.
		{"resource mismatch and amounts-only: (2) wins",
			"", rvCap(402, rvB64(`{"accepts":[{"amount":"5"}]}`), `{"accepts":[{"amount":"5","resource":"https://seller.example/api/other"}]}`), ResourceMismatch, "TTT FFF TT TF -T- F", "-", "402"},

		// R6: description over 500 code points is a flag only.
		{"description overlong on a RESOURCE-MISMATCH: flag set, state unchanged",
			"", rvCap(402, hdr, rvSub(t, rvBody, `"resource":"https://seller.example/api/paid","description":"one paid call"`, `"resource":"x","description":"`+strings.Repeat("é", 501)+`"`)), ResourceMismatch, "TTT TTT TT TF TTT T", "-", "402"},

		// state_rule (1), R19, R11.
		{"status 100 recorded as the response: NOT-A-402 status_not_402",
			"", rvCap(100, hdr, rvBody), NotA402, "--- --- -- -- --- -", "status_not_402", "100"},
		{"status 304 with a challenge: NOT-A-402",
			"", rvCap(304, hdr, rvBody), NotA402, "--- --- -- -- --- -", "status_not_402", "304"},
		{"HEAD-like empty 402 with a full header: body unparseable, UNCONFIGURED",
			"", rvCap(402, hdr, ""), Unconfigured, "TTF FFF FF FT FFF F", "-", "402"},
		{"402 whose body is exactly the cap: graded (R7)",
			"", rvCap(402, hdr, rvBody+strings.Repeat(" ", 65536-len(rvBody))), Populated, rvAllTrue, "-", "402"},
		{"402 whose body is one byte over the cap with outcome ok: body_over_cap (R7)",
			"", rvCap(402, hdr, rvBody+strings.Repeat(" ", 65537-len(rvBody))), NotA402, "--- --- -- -- --- -", "body_over_cap", "402"},
		{"failed fetch that had recorded a status: status null (R27)",
			"", capture.Capture{Outcome: capture.Failed, Status: 402}, NotA402, "--- --- -- -- --- -", "fetch_failed", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url
			if u == "" {
				u = rvURL
			}
			r := Check(u, tt.cap)
			got := fmt.Sprintf("%s | %s | %s | %s", r.State, rvCheckFactors(r.Factors), rvStr(r.Factors.Reason), rvInt(r.Factors.Status))
			want := fmt.Sprintf("%s | %s | %s | %s", tt.state, tt.f, tt.reason, tt.status)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

// rvMemoCap is a 402 whose body and header carry the given memo JSON
// fragments (the value part, e.g. `"pv-a"`; "" leaves the memo out).
func rvMemoCap(bodyMemo, headerMemo string) capture.Capture {
	extra := func(m string) string {
		if m == "" {
			return `{}`
		}
		return `{"memo":` + m + `}`
	}
	body := `{"accepts":[{"amount":"1","payTo":"P","extra":` + extra(bodyMemo) + `}]}`
	hdr := `{"accepts":[{"amount":"1","payTo":"P","extra":` + extra(headerMemo) + `}]}`
	return rvCap(402, rvB64(hdr), body)
}

func rvFetch(f FetchFactors) string {
	ok := "F"
	if f.FetchOK {
		ok = "T"
	}
	return ok + " " + rvInt(f.Status) + " " + rvBool(f.Is402) + rvBool(f.BodyOverCap) + " " +
		rvBool(f.BodyParseable) + rvBool(f.HeaderPresent) + rvBool(f.HeaderDecodable) + " " +
		rvBool(f.BodyMemoPresent) + rvBool(f.HeaderMemoPresent)
}

func TestReviewMemoHandDerived(t *testing.T) {
	const fullRead = "T 402 TF TTT TT"
	tests := []struct {
		name    string
		a, b    capture.Capture
		state   State
		reason  string // "-" = null
		f1, f2  string // rvFetch form
		eq      string // eq1 eq2 bodyUnique headerUnique
		fresh   string // body/header freshness
		formats string // body1 body2 header1 header2
	}{
		{"fresh, unique, leg-consistent: BOUND (state_rule 5)",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`), rvMemoCap(`"pv-aaaa-0002"`, `"pv-aaaa-0002"`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		// field_rule: "the same extraction as payability/v1"; R17: 1e400 parses.
		{"fetch 1 body carries 1e400 elsewhere: still parseable, BOUND",
			rvCap(402, rvB64(`{"accepts":[{"extra":{"memo":"pv-aaaa-0001"}}]}`), `{"n":1e400,"accepts":[{"extra":{"memo":"pv-aaaa-0001"}}]}`),
			rvMemoCap(`"pv-aaaa-0002"`, `"pv-aaaa-0002"`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		{"fetch 2 header carries 1e400 elsewhere: still decodable, BOUND",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`),
			rvCap(402, rvB64(`{"n":1e400,"accepts":[{"extra":{"memo":"pv-aaaa-0002"}}]}`), `{"accepts":[{"extra":{"memo":"pv-aaaa-0002"}}]}`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		// Escapes decode first: the two body memos are the same string.
		{"body memos differ only by \\u escaping: identical, MEMO-REUSED (4)",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`), rvMemoCap(`"pv-\u0061aaa-0001"`, `"pv-aaaa-0001"`),
			MemoReused, "-", fullRead, fullRead, "TTFF", "static/static", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		// (3) precedes (4).
		{"identical body memos, fetch 2 header differs: LEG-MISMATCH (3 before 4)",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`), rvMemoCap(`"pv-aaaa-0001"`, `"pv-zzzz-0001"`),
			LegMismatch, "-", fullRead, fullRead, "TFFT", "static/regenerated", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		// (2) precedes (3).
		{"no body memo in either fetch, header memos present: MEMO-ABSENT (2 before 3)",
			rvMemoCap("", `"pv-aaaa-0001"`), rvMemoCap("", `"pv-aaaa-0002"`),
			MemoAbsent, "-", "T 402 TF TTT FT", "T 402 TF TTT FT", "FF-T", "not_gradable/regenerated", "absent absent prefixed-opaque prefixed-opaque"},
		// Completion rule 1.
		{"body memo in fetch 1 only, fetch 2 carries no memo on either leg: MEMO-ABSENT memo_absent_one_fetch",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`), rvMemoCap("", ""),
			MemoAbsent, "memo_absent_one_fetch", fullRead, "T 402 TF TTT FF", "T---", "not_gradable/not_gradable", "prefixed-opaque absent prefixed-opaque absent"},
		// R21: A1 equality makes "header carries none" false, so rule (3).
		{"body memos unique, fetch 1 header carries none: LEG-MISMATCH by rule 3 (R21)",
			rvMemoCap(`"pv-aaaa-0001"`, ""), rvMemoCap(`"pv-aaaa-0002"`, `"pv-aaaa-0002"`),
			LegMismatch, "-", "T 402 TF TTT TF", fullRead, "FTT-", "regenerated/not_gradable", "prefixed-opaque prefixed-opaque absent prefixed-opaque"},
		{"memo number-typed on both legs: absent (R3), MEMO-ABSENT",
			rvMemoCap(`12345678`, `12345678`), rvMemoCap(`12345679`, `12345679`),
			MemoAbsent, "-", "T 402 TF TTT FF", "T 402 TF TTT FF", "----", "not_gradable/not_gradable", "absent absent absent absent"},
		// format_rule, R23: code points.
		{"format classes: 7 emoji short, 8 emoji opaque",
			rvMemoCap(`"🌦🌦🌦🌦🌦🌦🌦"`, `"🌦🌦🌦🌦🌦🌦🌦"`), rvMemoCap(`"🌦🌦🌦🌦🌦🌦🌦🌦"`, `"🌦🌦🌦🌦🌦🌦🌦🌦"`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "short opaque short opaque"},
		{"format classes: trailing newline breaks the pattern (opaque); underscore prefix ok",
			rvMemoCap(`"ab-cdefg\n"`, `"ab-cdefg\n"`), rvMemoCap(`"Ab_12345"`, `"Ab_12345"`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "opaque prefixed-opaque opaque prefixed-opaque"},
		{"format classes: escaped separator decodes to '-'",
			rvMemoCap(`"ab\u002dcdefg"`, `"ab-cdefg"`), rvMemoCap(`"ab-cdefh"`, `"ab-cdefh"`),
			Bound, "-", fullRead, fullRead, "TTTT", "regenerated/regenerated", "prefixed-opaque prefixed-opaque prefixed-opaque prefixed-opaque"},
		// state_rule (1), R7/R28: a 402 longer than the cap is over the cap.
		{"fetch 2 is a 402 of 65,537 bytes with outcome ok: NOT-A-402, body_over_cap true",
			rvMemoCap(`"pv-aaaa-0001"`, `"pv-aaaa-0001"`), rvCap(402, nil, strings.Repeat(" ", 65537)),
			NotA402, "-", fullRead, "T 402 TT --- --", "T---", "not_gradable/not_gradable", "prefixed-opaque - prefixed-opaque -"},
		{"fetch 1 timed out after a 402 status line: no status (R27)",
			capture.Capture{Outcome: capture.Timeout, Status: 402}, rvMemoCap(`"pv-aaaa-0002"`, `"pv-aaaa-0002"`),
			NotA402, "-", "F - -- --- --", fullRead, "-T--", "not_gradable/not_gradable", "- prefixed-opaque - prefixed-opaque"},
		{"undecodable header in both fetches: memo equality false (R11), LEG-MISMATCH",
			rvCap(402, rvRaw("not base64!"), `{"accepts":[{"extra":{"memo":"pv-aaaa-0001"}}]}`), rvCap(402, rvRaw("not base64!"), `{"accepts":[{"extra":{"memo":"pv-aaaa-0002"}}]}`),
			LegMismatch, "-", "T 402 TF TTF TF", "T 402 TF TTF TF", "FFT-", "regenerated/not_gradable", "prefixed-opaque prefixed-opaque absent absent"},
		// state_rule (1).
		{"fetch 1 is a 304: NOT-A-402",
			rvCap(304, nil, ""), rvMemoCap(`"pv-aaaa-0002"`, `"pv-aaaa-0002"`),
			NotA402, "-", "T 304 FF --- --", fullRead, "-T--", "not_gradable/not_gradable", "- prefixed-opaque - prefixed-opaque"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Memo(tt.a, tt.b)
			f := r.Factors
			fmts := func(s *string) string { return rvStr(s) }
			got := fmt.Sprintf("%s %s | %s | %s | %s | %s/%s | %s %s %s %s", r.State, rvStr(r.Reason), rvFetch(f.Fetch1), rvFetch(f.Fetch2),
				rvBool(f.MemoEqualityFetch1)+rvBool(f.MemoEqualityFetch2)+rvBool(f.BodyMemosUnique)+rvBool(f.HeaderMemosUnique),
				f.BodyFreshnessClass, f.HeaderFreshnessClass,
				fmts(f.BodyMemoFormatFetch1), fmts(f.BodyMemoFormatFetch2), fmts(f.HeaderMemoFormatFetch1), fmts(f.HeaderMemoFormatFetch2))
			want := fmt.Sprintf("%s %s | %s | %s | %s | %s | %s", tt.state, tt.reason, tt.f1, tt.f2, tt.eq, tt.fresh, tt.formats)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestReviewMemoCensusHandDerived(t *testing.T) {
	// field_rule: "the sorted union of the accepts[0] top-level key names and
	// the accepts[0].extra key names"; R24: byte order, de-duplicated.
	a := rvCap(402, rvB64(`{"accepts":[{"memo":"x","extra":{"memo":"pv-aaaa-0001","Zeta":1}}]}`),
		`{"accepts":[{"payTo":"P","extra":null,"n":1e400}],"memo":"pv-aaaa-0001"}`)
	b := rvCap(402, nil, `{"accepts":[{"\u00e9":1,"e":2,"extra":{"E":3}}],"memo":"pv-aaaa-0002"}`)
	r := Memo(a, b)
	c := r.Factors.CorrelationCensus
	// R24 (issue 20): listed names by name, every other name only counted.
	leg := func(l *LegCensus) string { return fmt.Sprintf("%q+%d", l.Names, l.Unlisted) }
	got := fmt.Sprintf("%s %s %s %v", leg(c.Fetch1.Body), leg(c.Fetch1.Header), leg(c.Fetch2.Body), c.Fetch2.Header == nil)
	want := `["extra" "payTo"]+1 ["extra" "memo"]+1 ["extra"]+3 true`
	if got != want {
		t.Errorf("census\n got %s\nwant %s", got, want)
	}
}

func TestReviewProbeGradesHandDerived(t *testing.T) {
	tests := []struct {
		name   string
		c      capture.Capture
		grade  Grade
		reason string
		status string
	}{
		// grade_rule (3): a JSON-parseable body carrying a non-empty error
		// string; 1e400 elsewhere does not stop the body being JSON.
		{"402 error string beside 1e400: PRESENT-FAIL-CLOSED (3)", resp(402, `{"error":"invalid_payment","n":1e400}`), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"402 plain challenge beside 1e400: ABSENT (4)", resp(402, `{"x402Version":1,"maxTimeoutSeconds":1e400,"accepts":[]}`), Absent, ReasonPaymentNeverEvaluated, "402"},
		{"402 whitespace-only detail is non-empty: PRESENT-FAIL-CLOSED", resp(402, `{"detail":" "}`), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"402 reason only: PRESENT-FAIL-CLOSED", resp(402, `{"error":null,"reason":"bad signature"}`), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"402 'Error' capitalised is not 'error': ABSENT (4)", resp(402, `{"Error":"x"}`), Absent, ReasonPaymentNeverEvaluated, "402"},
		{"402 error in a nested object only: ABSENT (R10)", resp(402, `{"error":{"message":"invalid"}}`), Absent, ReasonPaymentNeverEvaluated, "402"},
		{"402 error escaped as \\u0065rror decodes to error: CLOSED", resp(402, `{"\u0065rror":"x"}`), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"402 error value is escapes of a non-empty string: CLOSED", resp(402, `{"error":"\u0020"}`), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"402 JSON string body: ABSENT (R10)", resp(402, `"invalid payment"`), Absent, ReasonPaymentNeverEvaluated, "402"},
		{"402 JSON null body: ABSENT (R10)", resp(402, `null`), Absent, ReasonPaymentNeverEvaluated, "402"},
		{"402 with BOM before JSON: not parseable, PRESENT-FAIL-DIRTY (5)", resp(402, "\ufeff{\"error\":\"x\"}"), PresentFailDirty, ReasonDirtyRejection, "402"},
		{"402 JSON with trailing text: PRESENT-FAIL-DIRTY (5)", resp(402, `{"error":"x"} ok`), PresentFailDirty, ReasonDirtyRejection, "402"},
		{"204 no body: fail open (2)", resp(204, ``), PresentFailDirty, ReasonFailOpen2xx, "204"},
		{"299: fail open (2)", resp(299, `{}`), PresentFailDirty, ReasonFailOpen2xx, "299"},
		{"300: anything else (5)", resp(300, `{}`), PresentFailDirty, ReasonDirtyRejection, "300"},
		{"101: anything else (5)", resp(101, ``), PresentFailDirty, ReasonDirtyRejection, "101"},
		{"302 redirect (not followed): anything else (5)", resp(302, ``), PresentFailDirty, ReasonDirtyRejection, "302"},
		{"401 with a JSON error: anything else (5)", resp(401, `{"error":"unauthorized"}`), PresentFailDirty, ReasonDirtyRejection, "401"},
		{"200 over the cap: UNGRADED (1 before 2), status kept", capture.Capture{Outcome: capture.OverCap, Status: 200}, Ungraded, ReasonProbeFailed, "200"},
		{"200 body of 65,537 bytes with outcome ok: UNGRADED (R7, R28)", resp(200, strings.Repeat("a", 65537)), Ungraded, ReasonProbeFailed, "200"},
		{"402 body of exactly 65,536 bytes with a reason: CLOSED", resp(402, `{"error":"x"}`+strings.Repeat(" ", 65536-13)), PresentFailClosed, ReasonRejectedWithReason, "402"},
		{"timed out after a 200 status line: UNGRADED, status null (R27)", capture.Capture{Outcome: capture.Timeout, Status: 200}, Ungraded, ReasonProbeFailed, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := GradeProbe(tt.c)
			got := fmt.Sprintf("%s %s %s %v", g.Grade, g.Reason, rvInt(g.Status), g.FailOpen)
			want := fmt.Sprintf("%s %s %s %v", tt.grade, tt.reason, tt.status, tt.reason == ReasonFailOpen2xx)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestReviewProbeCallsHandDerived(t *testing.T) {
	gate := resp(402, `{"x402Version":1,"accepts":[]}`)
	rej := resp(402, `{"error":"invalid"}`)
	tests := []struct {
		name      string
		caps      []capture.Capture
		outcome   string
		grades    string // direct facilitator missing_memo bogus
		methods   string // GET HEAD POST: status/gated/unpaid
		exposures string
	}{
		// grade_rule (1): only a failed/timed-out/over-cap baseline makes NOT-PROBED.
		{"baseline 500: PROBED, GET not gated",
			[]capture.Capture{resp(500, ``), gate, gate, rej, rej, rej, rej},
			Probed, "PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED", "500FF 402TF 402TF", ""},
		{"baseline 200 and HEAD 200: both named, PROBED",
			[]capture.Capture{resp(200, `{}`), resp(200, ``), gate, gate, rej, resp(200, `{}`), gate},
			Probed, "ABSENT PRESENT-FAIL-CLOSED PRESENT-FAIL-DIRTY ABSENT", "200FT 200FT 402TF",
			"METHOD-UNPAID-2XX:GET,METHOD-UNPAID-2XX:HEAD,FAIL-OPEN:missing_memo"},
		{"HEAD over the cap keeps its status (R26), POST failed is null",
			[]capture.Capture{gate, {Outcome: capture.OverCap, Status: 200}, {Outcome: capture.Failed}, rej, rej, rej, rej},
			Probed, "PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED PRESENT-FAIL-CLOSED", "402TF 200FT ---",
			"METHOD-UNPAID-2XX:HEAD"},
		{"baseline 402 body of 65,537 bytes: NOT-PROBED (R28)",
			[]capture.Capture{resp(402, strings.Repeat("a", 65537))},
			NotProbed, "UNGRADED UNGRADED UNGRADED UNGRADED", "402TF --- ---", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Probe(tt.caps)
			row := func(e MethodEntry) string { return rvInt(e.Status) + rvBool(e.Gated) + rvBool(e.Unpaid2xx) }
			if row(MethodEntry{}) != "---" {
				t.Fatal("row helper")
			}
			got := fmt.Sprintf("%s | %s %s %s %s | %s %s %s | %s", r.Outcome,
				r.Grades.Direct.Grade, r.Grades.Facilitator.Grade, r.Grades.MissingMemo.Grade, r.Grades.Bogus.Grade,
				row(r.Methods.GET), row(r.Methods.HEAD), row(r.Methods.POST), strings.Join(r.Exposures, ","))
			want := fmt.Sprintf("%s | %s | %s | %s", tt.outcome, tt.grades, tt.methods, tt.exposures)
			if got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}
