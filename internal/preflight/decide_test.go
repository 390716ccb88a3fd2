package preflight

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
)

// goodInput is a seller with nothing to flag: one clean exact-on-Solana v2
// entry, a fresh second challenge, both payment probes refused with a new
// error, HEAD and POST not open.
func goodInput() Input {
	unpaid := v2(solEntry("1000"))
	second := v2(solEntry("1000"))
	return Input{
		Lint:       []Fetch{{Method: http.MethodGet, Capture: unpaid}},
		LintResult: cleanLint(lint.LegHeader, 1),
		Second:     &second,
		Answers: []Answer{
			{ID: ProbeP1, Method: http.MethodGet, Capture: status(402, `{"error":"invalid_exact_svm_payload_transaction"}`, nil)},
			{ID: ProbeP2, Method: http.MethodGet, Capture: status(400, `bad header`, nil)},
			{ID: ProbeHead, Method: http.MethodHead, Capture: status(402, ``, nil)},
			{ID: ProbeOther, Method: http.MethodPost, Capture: status(405, ``, nil)},
		},
	}
}

func setAnswer(in *Input, id string, c capture.Capture) {
	for i := range in.Answers {
		if in.Answers[i].ID == id {
			in.Answers[i].Capture = c
			return
		}
	}
	in.Answers = append(in.Answers, Answer{ID: id, Capture: c})
}

// dual turns the input into a seller advertising both dialects (a v2
// Solana header entry, a v1 Base body entry) that refuses every payment
// probe in both.
func dual(in *Input) {
	u := v2(solEntry("1000"))
	u.Body = v1(v1Entry("base", "1000")).Body
	in.Lint[0].Capture, in.Second = u, &u
	in.LintResult.Entries = append(in.LintResult.Entries, lint.EntrySummary{Index: 0, Leg: lint.LegBody})
	setDialectAnswer(in, ProbeP1, 1, status(402, `{"error":"invalid_exact_evm_payload_signature"}`, nil))
	setDialectAnswer(in, ProbeP2, 1, status(400, ``, nil))
}

func setDialectAnswer(in *Input, id string, dialect int, c capture.Capture) {
	for i := range in.Answers {
		if in.Answers[i].ID == id && in.Answers[i].Dialect == dialect {
			in.Answers[i].Capture = c
			return
		}
	}
	in.Answers = append(in.Answers, Answer{ID: id, Dialect: dialect, Capture: c})
}

func withMemo(c capture.Capture, memo string) capture.Capture {
	e := solEntry("1000")
	e["extra"] = map[string]any{"feePayer": solPayTo, "memo": memo}
	return v2(e)
}

func withNonce(nonce string) capture.Capture {
	return withHeader(402, map[string]any{"x402Version": 2, "resource": map[string]any{"url": testURL}, "accepts": []any{solEntry("1000")},
		"extensions": map[string]any{"sign-in-with-x": map[string]any{"info": map[string]any{"nonce": nonce}}}}, `{}`)
}

func TestDecisionTable(t *testing.T) {
	tests := []struct {
		name     string
		mut      func(in *Input)
		decision Decision
		reasons  []Reason
	}{
		{"nothing flagged is GO", func(in *Input) {}, Go, nil},
		{"GO on a v1-only seller", func(in *Input) {
			u := v1(v1Entry("base", "10000"))
			in.Lint[0].Capture, in.LintResult, in.Second = u, cleanLint(lint.LegBody, 1), &u
		}, Go, nil},

		{"not_402: a 200", func(in *Input) { in.Lint[0].Capture = status(200, `free`, nil) }, Stop, []Reason{ReasonNot402}},
		{"unreachable: the fetch failed", func(in *Input) {
			in.Lint[0].Capture = capture.Capture{Outcome: capture.Failed, Error: capture.DNSFailed}
		}, Stop, []Reason{ReasonUnreachable}},
		{"unreachable: GET 404, then POST timed out", func(in *Input) {
			in.Lint = []Fetch{{http.MethodGet, status(404, ``, nil)}, {http.MethodPost, capture.Capture{Outcome: capture.Timeout}}}
		}, Stop, []Reason{ReasonUnreachable}},
		{"not_402: GET failed, then POST 200", func(in *Input) {
			in.Lint = []Fetch{{http.MethodGet, capture.Capture{Outcome: capture.Failed, Error: capture.ConnectRefused}}, {http.MethodPost, status(200, ``, nil)}}
		}, Stop, []Reason{ReasonNot402}},
		{"not_402: GET 404 then POST 405", func(in *Input) {
			in.Lint = []Fetch{{http.MethodGet, status(404, ``, nil)}, {http.MethodPost, status(405, ``, nil)}}
		}, Stop, []Reason{ReasonNot402}},
		{"no_payable_entry: every entry has a lint error", func(in *Input) { in.LintResult.Entries[0].Errors = 1 }, Stop,
			[]Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: a leg error", func(in *Input) {
			in.LintResult.Findings = append(in.LintResult.Findings, lint.Finding{Rule: "x", Severity: lint.Error, Leg: lint.LegHeader, Field: "x402Version"})
		}, Stop, []Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: lint did not summarise the entry", func(in *Input) { in.LintResult.Entries = nil }, Stop,
			[]Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: network does not match", func(in *Input) { in.Options.Network = "eip155:8453" }, Stop,
			[]Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: scheme does not match", func(in *Input) { in.Options.Scheme = "upto" }, Stop,
			[]Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: asset does not match", func(in *Input) { in.Options.Asset = "So11111111111111111111111111111111111111112" }, Stop,
			[]Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"no_payable_entry: a v2 document in the body is no candidate", func(in *Input) {
			in.Lint[0].Capture = status(402, `{"x402Version":2,"accepts":[]}`, nil)
		}, Stop, []Reason{ReasonNoPayableEntry, ReasonPaymentNotVerified}},
		{"over_budget", func(in *Input) { in.Options.MaxAmount = "999" }, Stop, []Reason{ReasonOverBudget, ReasonPaymentNotVerified}},
		{"within budget at the edge", func(in *Input) { in.Options.MaxAmount = "1000" }, Go, nil},
		{"over_budget: an amount that is no decimal integer is never within a budget", func(in *Input) {
			e := solEntry("1e3")
			u := v2(e)
			in.Lint[0].Capture, in.Second = u, &u
			in.Options.MaxAmount = "100000"
		}, Stop, []Reason{ReasonOverBudget, ReasonPaymentNotVerified}},
		{"an over-cap unpaid 402 is still a 402 (its header leg is read)", func(in *Input) {
			in.Lint[0].Capture.Outcome, in.Lint[0].Capture.Body = capture.OverCap, nil
		}, Go, nil},
		{"fail_open: P1 answered 200", func(in *Input) { setAnswer(in, ProbeP1, status(200, `data`, nil)) }, Stop, []Reason{ReasonFailOpen}},
		{"fail_open: P2 answered 200", func(in *Input) { setAnswer(in, ProbeP2, status(200, `data`, nil)) }, Stop, []Reason{ReasonFailOpen}},
		{"dual dialect: both refused is GO", func(in *Input) { dual(in) }, Go, nil},
		{"dual dialect: v1 P2 open is fail_open (v2 closed)", func(in *Input) {
			dual(in)
			setDialectAnswer(in, ProbeP2, 1, status(200, `data`, nil))
		}, Stop, []Reason{ReasonFailOpen}},
		{"dual dialect: v1 P1 open is fail_open", func(in *Input) {
			dual(in)
			setDialectAnswer(in, ProbeP1, 1, status(200, `data`, nil))
		}, Stop, []Reason{ReasonFailOpen}},
		{"dual dialect: v1 P1 not graded CLOSED holds, naming v1", func(in *Input) {
			dual(in)
			setDialectAnswer(in, ProbeP1, 1, status(500, ``, nil))
		}, Hold, []Reason{ReasonNotVerifiedV1}},
		{"dual dialect: no clean v1 entry holds, naming v1", func(in *Input) {
			dual(in)
			in.LintResult.Entries[1].Errors = 1
		}, Hold, []Reason{ReasonNotVerifiedV1}},
		{"dual dialect: v2 broken, v1 selected: v2 unprobed holds, naming v2", func(in *Input) {
			dual(in)
			in.LintResult.Entries[0].Errors = 1
			in.Answers = in.Answers[:0]
			for _, d := range []int{1, 2} {
				setDialectAnswer(in, ProbeP1, d, status(402, `{"error":"invalid_exact_evm_payload_signature"}`, nil))
				setDialectAnswer(in, ProbeP2, d, status(400, ``, nil))
			}
		}, Hold, []Reason{ReasonNotVerifiedV2}},
		{"resource_mismatch", func(in *Input) {
			in.LintResult.Findings = append(in.LintResult.Findings, lint.Finding{Rule: "r", Severity: lint.Error, Leg: lint.LegHeader, Field: "resource.url"})
		}, Stop, []Reason{ReasonNoPayableEntry, ReasonResourceMismatch, ReasonPaymentNotVerified}},
		{"resource_mismatch on a v1 entry", func(in *Input) {
			in.LintResult.Findings = append(in.LintResult.Findings, lint.Finding{Rule: "r", Severity: lint.Error, Leg: lint.LegBody, Entry: ip(0), Field: "accepts[0].resource"})
		}, Stop, []Reason{ReasonResourceMismatch}},

		{"payment_not_verified: P1 NOT-EVALUATED (repeats the unpaid answer)", func(in *Input) {
			setAnswer(in, ProbeP1, status(402, `{}`, nil))
		}, Hold, []Reason{ReasonPaymentNotVerified}},
		{"payment_not_verified: P1 ERRORED", func(in *Input) { setAnswer(in, ProbeP1, status(500, ``, nil)) }, Hold, []Reason{ReasonPaymentNotVerified}},
		{"payment_not_verified: P1 UNGRADED", func(in *Input) { setAnswer(in, ProbeP1, capture.Capture{Outcome: capture.Timeout}) }, Hold, []Reason{ReasonPaymentNotVerified}},
		{"payment_not_verified: P1 DIRTY", func(in *Input) { setAnswer(in, ProbeP1, status(404, ``, nil)) }, Hold, []Reason{ReasonPaymentNotVerified}},
		{"payment_not_verified: P1 not sent", func(in *Input) { in.Answers = in.Answers[1:] }, Hold, []Reason{ReasonPaymentNotVerified}},
		{"challenge_static: memo repeated", func(in *Input) {
			u, s := withMemo(capture.Capture{}, "m1"), withMemo(capture.Capture{}, "m1")
			in.Lint[0].Capture, in.Second = u, &s
		}, Hold, []Reason{ReasonChallengeStatic}},
		{"memo fresh is GO", func(in *Input) {
			u, s := withMemo(capture.Capture{}, "m1"), withMemo(capture.Capture{}, "m2")
			in.Lint[0].Capture, in.Second = u, &s
		}, Go, nil},
		{"challenge_static: second fetch failed with a memo", func(in *Input) {
			in.Lint[0].Capture = withMemo(capture.Capture{}, "m1")
			in.Second = &capture.Capture{Outcome: capture.Failed}
		}, Hold, []Reason{ReasonChallengeStatic}},
		{"challenge_static: nonce repeated", func(in *Input) {
			u, s := withNonce("n1"), withNonce("n1")
			in.Lint[0].Capture, in.Second = u, &s
		}, Hold, []Reason{ReasonChallengeStatic}},
		{"nonce fresh is GO", func(in *Input) {
			u, s := withNonce("n1"), withNonce("n2")
			in.Lint[0].Capture, in.Second = u, &s
		}, Go, nil},
		{"method_open: HEAD 200", func(in *Input) { setAnswer(in, ProbeHead, status(200, ``, nil)) }, Hold, []Reason{ReasonMethodOpen}},
		{"method_open: POST 200", func(in *Input) { setAnswer(in, ProbeOther, status(201, ``, nil)) }, Hold, []Reason{ReasonMethodOpen}},
		{"lint_warnings on the entry", func(in *Input) { in.LintResult.Entries[0].Warnings = 2 }, Hold, []Reason{ReasonLintWarnings}},
		{"lint_warnings on the leg", func(in *Input) {
			in.LintResult.Findings = append(in.LintResult.Findings, lint.Finding{Rule: "w", Severity: lint.Warn, Leg: lint.LegHeader, Field: "resource.mimeType"})
		}, Hold, []Reason{ReasonLintWarnings}},
		{"a warning on the other leg is not the entry's", func(in *Input) {
			in.LintResult.Findings = append(in.LintResult.Findings, lint.Finding{Rule: "w", Severity: lint.Warn, Leg: lint.LegBody, Field: "x"})
		}, Go, nil},
		{"scheme_not_probed", func(in *Input) {
			e := solEntry("1000")
			e["scheme"] = "upto"
			u := v2(e)
			in.Lint[0].Capture, in.Second = u, &u
		}, Hold, []Reason{ReasonPaymentNotVerified, ReasonSchemeNotProbed}},
		{"cortx_unfavourable: warn", func(in *Input) { in.CORTX = &CORTX{Action: "warn"} }, Hold, []Reason{ReasonCortxUnfavourable}},
		{"cortx_unfavourable: do_not_call", func(in *Input) { in.CORTX = &CORTX{Action: "do_not_call"} }, Hold, []Reason{ReasonCortxUnfavourable}},
		{"cortx_unverified", func(in *Input) { in.CORTX = &CORTX{Action: "unverified"} }, Hold, []Reason{ReasonCortxUnverified}},
		{"cortx_unverified: the check did not run", func(in *Input) { in.CORTX = &CORTX{} }, Hold, []Reason{ReasonCortxUnverified}},
		{"cortx favourable is GO", func(in *Input) { in.CORTX = &CORTX{Action: "favourable"} }, Go, nil},
		{"every reason at once: STOP lists the HOLD reasons too", func(in *Input) {
			setAnswer(in, ProbeP2, status(200, ``, nil))
			setAnswer(in, ProbeHead, status(200, ``, nil))
			in.LintResult.Entries[0].Warnings = 1
			in.CORTX = &CORTX{Action: "warn"}
		}, Stop, []Reason{ReasonFailOpen, ReasonMethodOpen, ReasonLintWarnings, ReasonCortxUnfavourable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := goodInput()
			tt.mut(&in)
			got := Evaluate(in)
			if got.Decision != tt.decision {
				t.Errorf("decision %s, want %s (reasons %v)", got.Decision, tt.decision, got.Reasons)
			}
			want := tt.reasons
			if want == nil {
				want = []Reason{}
			}
			if !reflect.DeepEqual(got.Reasons, want) {
				t.Errorf("reasons %v, want %v", got.Reasons, want)
			}
		})
	}
}

// TestEveryReasonHasARow: the table above names every code of the document.
func TestReasonsAreTheDocuments(t *testing.T) {
	var doc []string
	for _, r := range Document().Decision.Stop {
		doc = append(doc, r.Reason)
	}
	doc = append(doc, "|")
	for _, r := range Document().Decision.Hold {
		doc = append(doc, r.Reason)
	}
	var code []string
	for _, r := range StopReasons() {
		code = append(code, string(r))
	}
	code = append(code, "|")
	for _, r := range HoldReasons() {
		code = append(code, string(r))
	}
	if strings.Join(doc, ",") != strings.Join(code, ",") {
		t.Errorf("document %v\n    code %v", doc, code)
	}
}

func TestRecordCarriesNoFetchedValue(t *testing.T) {
	in := goodInput()
	in.Lint[0].Capture = withMemo(capture.Capture{}, "CANARY-MEMO")
	got := Evaluate(in)
	if got.SelectedEntry == nil || got.SelectedEntry.Network != solMainnet || got.SelectedEntry.Scheme != "exact" {
		t.Fatalf("selected %+v", got.SelectedEntry)
	}
	s := strings.ToLower(strings.Join([]string{jsonOf(t, got)}, ""))
	for _, v := range []string{"canary", strings.ToLower(solPayTo), strings.ToLower(solUSDC), "1000", "seller.example"} {
		if strings.Contains(s, v) {
			t.Errorf("record carries a fetched value %q", v)
		}
	}
	if got.TermsSHA256 == nil || len(*got.TermsSHA256) != 64 {
		t.Errorf("terms_sha256 %v", got.TermsSHA256)
	}
}

func TestRecordShape(t *testing.T) {
	got := Evaluate(goodInput())
	if len(got.Probes) != 2 || got.Probes[0].ID != ProbeP1 || got.Probes[1].ID != ProbeP2 {
		t.Fatalf("probes %+v", got.Probes)
	}
	if *got.Probes[0].Grade != Closed || got.Probes[0].Header != HeaderV2 || got.Probes[0].Status != 402 {
		t.Errorf("P1 record %+v", got.Probes[0])
	}
	if len(got.MethodMatrix) != 2 || got.MethodMatrix[0].Method != http.MethodHead || got.MethodMatrix[1].Method != http.MethodPost {
		t.Errorf("matrix %+v", got.MethodMatrix)
	}
	if len(got.Fetches) != 2 || got.Fetches[1].Role != "second" {
		t.Errorf("fetches %+v", got.Fetches)
	}
	in := goodInput()
	in.Answers = in.Answers[1:]
	got = Evaluate(in)
	if got.Probes[0].Sent || got.Probes[0].Grade != nil {
		t.Errorf("unsent P1 %+v", got.Probes[0])
	}
	in = goodInput()
	dual(&in)
	got = Evaluate(in)
	var ids []string
	for _, p := range got.Probes {
		ids = append(ids, p.ID+"/"+p.Header+"/"+string(*p.Grade))
	}
	if strings.Join(ids, ",") != "p1_structural/PAYMENT-SIGNATURE/CLOSED,p2_bogus/PAYMENT-SIGNATURE/CLOSED,p1_structural/X-PAYMENT/CLOSED,p2_bogus/X-PAYMENT/CLOSED" ||
		!reflect.DeepEqual(got.Dialects, []int{2, 1}) || got.Probes[2].Dialect != 1 {
		t.Errorf("dual-dialect probes %v, dialects %v", ids, got.Dialects)
	}
	in = goodInput()
	in.Lint[0].Capture = capture.Capture{Outcome: capture.Failed, Error: capture.DNSFailed}
	if got := Evaluate(in); got.FetchError != "dns_failed" {
		t.Errorf("fetch_error %q", got.FetchError)
	}
	in.Lint[0].Capture = capture.Capture{Outcome: capture.Timeout}
	if got := Evaluate(in); got.FetchError != "timeout" {
		t.Errorf("fetch_error %q", got.FetchError)
	}
}

func TestEveryReasonHasASentence(t *testing.T) {
	for _, r := range append(StopReasons(), HoldReasons()...) {
		if r.Sentence() == "" {
			t.Errorf("%s has no sentence", r)
		}
	}
	if got := Summary(Result{Decision: Go}, "2026-12-01T10:00:00.000Z"); got != "GO: no red flag observed at 2026-12-01T10:00:00.000Z; not a guarantee that a payment will settle or be honoured" {
		t.Errorf("GO summary %q", got)
	}
}
