package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
)

const (
	sellerURL = "https://seller.example/api/weather"
	solana    = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	solMint   = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solPayee  = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	baseUSDC  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	evmPayee  = "0x1111111111111111111111111111111111111111"
	// The reference middleware's error in every unpaid 402.
	unpaidErr = "Payment required"
)

func ptr[T any](v T) *T { return &v }

func ok(status int, headers map[string]string, body string) capture {
	return capture{Outcome: "ok", Status: ptr(status), Headers: headers, BodyText: ptr(body)}
}

func failed(outcome string) capture { return capture{Outcome: outcome} }

func b64(v any) string {
	raw, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(raw)
}

func solEntry() map[string]any {
	return map[string]any{"scheme": "exact", "network": solana, "amount": "10000", "asset": solMint, "payTo": solPayee,
		"maxTimeoutSeconds": 300, "extra": map[string]any{"feePayer": solPayee}}
}

func evmEntry() map[string]any {
	return map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "10000", "asset": baseUSDC, "payTo": evmPayee,
		"maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

func v1Entry() map[string]any {
	return map[string]any{"scheme": "exact", "network": "base", "maxAmountRequired": "10000", "resource": sellerURL,
		"description": "Current weather", "mimeType": "application/json", "asset": baseUSDC, "payTo": evmPayee,
		"maxTimeoutSeconds": 60}
}

// v2 is a 402 carrying entries in a PAYMENT-REQUIRED header, as the
// reference middleware sends it; extra members go into the header document.
func v2(extra map[string]any, entries ...map[string]any) capture {
	doc := map[string]any{"x402Version": 2, "error": unpaidErr, "resource": map[string]any{"url": sellerURL, "mimeType": "application/json"}, "accepts": entries}
	for k, v := range extra {
		doc[k] = v
	}
	return ok(402, map[string]string{"content-type": "application/json", "payment-required": b64(doc)}, "{}")
}

// v1 is a 402 whose body is a v1 challenge.
func v1(entries ...map[string]any) capture {
	raw, _ := json.Marshal(map[string]any{"x402Version": 1, "error": "X-PAYMENT header is required", "accepts": entries})
	return ok(402, map[string]string{"content-type": "application/json"}, string(raw))
}

func withMemo(e map[string]any, memo string) map[string]any {
	extra := map[string]any{"memo": memo}
	for k, v := range e["extra"].(map[string]any) {
		extra[k] = v
	}
	e["extra"] = extra
	return e
}

func siwx(nonce string) map[string]any {
	return map[string]any{"extensions": map[string]any{"sign-in-with-x": map[string]any{"info": map[string]any{"nonce": nonce, "domain": "seller.example"}}}}
}

// lintClean summarises entries on one leg with no finding.
func lintClean(leg string, entries ...map[string]any) *lintResult {
	l := &lintResult{Status: 402, Entries: []lintEntry{}, Findings: []lintFinding{}, Conforms: true}
	l.Dialect.V2Header, l.Dialect.V1Body = leg == "header", leg == "body"
	for i, e := range entries {
		v := 2
		if leg == "body" {
			v = 1
		}
		l.Entries = append(l.Entries, lintEntry{Index: i, Leg: leg, X402Version: v, Scheme: e["scheme"].(string), Network: e["network"].(string)})
	}
	return l
}

func finding(rule, sev, leg string, entry *int, field string) lintFinding {
	return lintFinding{Rule: rule, Severity: sev, Leg: leg, Entry: entry, Field: field, Message: "static message"}
}

// answers are the probe answers of a seller that refuses: P1 a new error,
// P2 400, HEAD 402, the other method 405.
func answers(gated, other string) []answer {
	return []answer{
		{ID: "p1_structural", Method: gated, Capture: ok(402, map[string]string{"content-type": "application/json"}, `{"error":"invalid_exact_svm_payload_transaction"}`)},
		{ID: "p2_bogus", Method: gated, Capture: ok(400, nil, `{"error":"invalid payment header"}`)},
		{ID: "head", Method: "HEAD", Capture: ok(402, nil, "")},
		{ID: "other", Method: other, Capture: ok(405, nil, "")},
	}
}

func setAnswer(as []answer, id string, c capture) []answer {
	out := append([]answer(nil), as...)
	for i := range out {
		if out[i].ID == id {
			out[i].Capture = c
		}
	}
	return out
}

func dropAnswer(as []answer, id string) []answer {
	var out []answer
	for _, a := range as {
		if a.ID != id {
			out = append(out, a)
		}
	}
	return out
}

// good is a GET-gated v2 Solana seller with nothing to flag.
func good() caseInput {
	c := v2(nil, solEntry())
	return caseInput{Lint: []methodCapture{{"GET", c}}, LintResult: lintClean("header", solEntry()), Second: ptr(v2(nil, solEntry())),
		Answers: answers("GET", "POST")}
}

func mk(id, note string, mut func(in *caseInput)) cases {
	in := good()
	mut(&in)
	return cases{ID: id, Note: note, URL: sellerURL, Input: in}
}

func synthetic() []cases {
	return []cases{
		mk("go-v2-solana-exact", "a closed v2 seller: P1 refused with a new error, P2 400, HEAD 402, POST 405", func(in *caseInput) {}),
		mk("go-v2-evm-exact-post-route", "GET 404, POST is the gated method; the matrix's other method is GET", func(in *caseInput) {
			c := v2(nil, evmEntry())
			in.Lint = []methodCapture{{"GET", ok(404, nil, "")}, {"POST", c}}
			in.LintResult, in.Second = lintClean("header", evmEntry()), ptr(c)
			in.Answers = answers("POST", "GET")
		}),
		mk("go-v1-legacy-network-name", "a v1-only seller: X-PAYMENT dialect, the legacy name base hashed as eip155:8453", func(in *caseInput) {
			c := v1(v1Entry())
			in.Lint, in.LintResult, in.Second = []methodCapture{{"GET", c}}, lintClean("body", v1Entry()), ptr(c)
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(402, nil, `{"error":"invalid_exact_evm_payload_signature"}`))
		}),
		mk("go-memo-fresh", "the selected entry's memo differs between the two fetches", func(in *caseInput) {
			in.Lint[0].Capture = v2(nil, withMemo(solEntry(), "m-0001"))
			in.Second = ptr(v2(nil, withMemo(solEntry(), "m-0002")))
		}),
		mk("go-nonce-fresh", "the sign-in-with-x nonce differs between the two fetches", func(in *caseInput) {
			in.Lint[0].Capture = v2(siwx("n-0001"), solEntry())
			in.Second = ptr(v2(siwx("n-0002"), solEntry()))
		}),
		mk("go-budget-at-the-edge", "max_amount equals the amount: within budget", func(in *caseInput) { in.Options.MaxAmount = "10000" }),
		mk("go-options-match", "network, scheme and asset given; the 0x asset compared case-insensitively", func(in *caseInput) {
			c := v2(nil, evmEntry())
			in.Lint[0].Capture, in.LintResult, in.Second = c, lintClean("header", evmEntry()), ptr(c)
			in.Options = options{Network: "eip155:8453", Scheme: "exact", Asset: "0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913"}
		}),
		mk("go-second-entry-selected", "the first entry has a lint error; the second is selected", func(in *caseInput) {
			c := v2(nil, evmEntry(), solEntry())
			in.Lint[0].Capture, in.Second = c, ptr(c)
			in.LintResult = lintClean("header", evmEntry(), solEntry())
			in.LintResult.Entries[0].Errors = 1
			in.LintResult.Findings = []lintFinding{finding("evm-asset", "error", "header", ptr(0), "accepts[0].asset")}
			in.LintResult.Conforms = false
		}),
		mk("hold-v1-entry-after-a-broken-v2-leg", "the v2 header leg has a leg error; the v1 body entry is selected, and the v2 dialect cannot be probed: payment_not_verified_v2", func(in *caseInput) {
			c := v2(nil, solEntry())
			body := v1(v1Entry())
			c.BodyText = body.BodyText
			in.Lint[0].Capture, in.Second = c, ptr(c)
			in.LintResult = lintClean("header", solEntry())
			in.LintResult.Entries = append(in.LintResult.Entries, lintEntry{Index: 0, Leg: "body", X402Version: 1, Scheme: "exact", Network: "base"})
			in.LintResult.Findings = []lintFinding{finding("x402-version", "error", "header", nil, "x402Version")}
			in.LintResult.Conforms = false
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(402, nil, `{"error":"invalid_exact_evm_payload_signature"}`))
		}),
		mk("go-cortx-favourable", "service_id given and the reliability decision is favourable", func(in *caseInput) {
			in.CORTX = &cortxIn{Action: "favourable", Rule: "operational_paid_delivery_98"}
		}),
		mk("go-payment-response-refusal", "P1 answered 402 with PAYMENT-RESPONSE success false", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(402, map[string]string{"payment-response": b64(map[string]any{"success": false, "errorReason": "invalid_transaction"})}, "{}"))
		}),

		mk("grade-closed-422", "P1 422: the malformed payment refused", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(422, nil, ""))
		}),
		mk("grade-closed-header-error", "P1 402 whose PAYMENT-REQUIRED error differs from the unpaid one", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(402, map[string]string{"payment-required": b64(map[string]any{"x402Version": 2, "error": "invalid_payload"})}, "{}"))
		}),
		mk("grade-not-evaluated-unpaid-error-repeated", "P1 402 with the unpaid challenge's own header error: a seller ignoring payments", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", v2(nil, solEntry()))
		}),
		mk("grade-errored-500", "P1 500", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(500, nil, `{"error":"facilitator unreachable"}`))
		}),
		mk("grade-ungraded-timeout", "P1 timed out", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", failed("timeout"))
		}),
		mk("grade-ungraded-failed", "P1 got no response", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", failed("failed"))
		}),
		mk("grade-dirty-404", "P1 404", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(404, nil, ""))
		}),
		mk("grade-fail-open-200", "P1 200: served for a payment that cannot pay", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p1_structural", ok(200, nil, `{"temperature":21}`))
		}),

		mk("stop-not-402-free", "GET and POST both 200", func(in *caseInput) {
			in.Lint = []methodCapture{{"GET", ok(200, nil, "free")}, {"POST", ok(200, nil, "free")}}
			in.LintResult, in.Second, in.Answers = nil, nil, nil
		}),
		mk("stop-unreachable-dns", "GET and POST failed to resolve: unreachable with the fetch error, not not_402", func(in *caseInput) {
			dead := capture{Outcome: "failed", Error: "dns_failed"}
			in.Lint = []methodCapture{{"GET", dead}, {"POST", dead}}
			in.LintResult, in.Second, in.Answers = nil, nil, nil
		}),
		mk("stop-unreachable-timeout", "GET failed, POST timed out: unreachable, fetch_error timeout", func(in *caseInput) {
			in.Lint = []methodCapture{{"GET", capture{Outcome: "failed", Error: "connect_refused"}}, {"POST", failed("timeout")}}
			in.LintResult, in.Second, in.Answers = nil, nil, nil
		}),
		mk("stop-not-402-method-given", "--method GET answered 405; nothing else is sent", func(in *caseInput) {
			in.Lint = []methodCapture{{"GET", ok(405, nil, "")}}
			in.LintResult, in.Second, in.Answers = nil, nil, nil
			in.CORTX = &cortxIn{Action: "warn", Rule: "degraded"}
		}),
		mk("stop-no-payable-entry-lint-error", "the only entry has a lint error", func(in *caseInput) {
			in.LintResult.Entries[0].Errors = 2
			in.LintResult.Findings = []lintFinding{finding("a", "error", "header", ptr(0), "accepts[0].payTo"), finding("b", "error", "header", ptr(0), "accepts[0].asset")}
			in.LintResult.Conforms = false
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("stop-no-payable-entry-network", "network option matches no entry", func(in *caseInput) {
			in.Options.Network = "eip155:8453"
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("stop-no-payable-entry-unsummarised", "lint summarised no entry: none is known to be clean", func(in *caseInput) {
			in.LintResult.Entries = []lintEntry{}
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("stop-no-payable-entry-v2-in-body", "a v2 document in the body only: no standard client reads it", func(in *caseInput) {
			raw, _ := json.Marshal(map[string]any{"x402Version": 2, "resource": map[string]any{"url": sellerURL}, "accepts": []any{solEntry()}})
			c := ok(402, nil, string(raw))
			in.Lint[0].Capture, in.Second = c, ptr(c)
			in.LintResult = lintClean("body", solEntry())
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("stop-over-budget", "the entry matches but costs more than max_amount", func(in *caseInput) {
			in.Options.MaxAmount = "9999"
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("stop-fail-open-p2", "P2 (bogus header) answered 200", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "p2_bogus", ok(200, nil, "served"))
		}),
		mk("stop-resource-mismatch", "lint error on resource.url", func(in *caseInput) {
			in.LintResult.Findings = []lintFinding{finding("resource-url-matches", "error", "header", nil, "resource.url")}
			in.LintResult.Conforms = false
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),

		mk("hold-challenge-static-memo", "the memo repeats", func(in *caseInput) {
			in.Lint[0].Capture = v2(nil, withMemo(solEntry(), "m-0001"))
			in.Second = ptr(v2(nil, withMemo(solEntry(), "m-0001")))
		}),
		mk("hold-challenge-static-nonce", "the nonce repeats", func(in *caseInput) {
			in.Lint[0].Capture = v2(siwx("n-0001"), solEntry())
			in.Second = ptr(v2(siwx("n-0001"), solEntry()))
		}),
		mk("hold-challenge-static-second-failed", "a memo, and the second fetch timed out: freshness not shown", func(in *caseInput) {
			in.Lint[0].Capture = v2(nil, withMemo(solEntry(), "m-0001"))
			in.Second = ptr(failed("timeout"))
		}),
		mk("hold-method-open-head", "HEAD 200 unpaid", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "head", ok(200, nil, ""))
		}),
		mk("hold-method-open-other", "POST 200 unpaid on a GET-gated route", func(in *caseInput) {
			in.Answers = setAnswer(in.Answers, "other", ok(200, nil, "{}"))
		}),
		mk("hold-lint-warnings-entry", "lint warned about the selected entry", func(in *caseInput) {
			in.LintResult.Entries[0].Warnings = 1
			in.LintResult.Findings = []lintFinding{finding("w", "warn", "header", ptr(0), "accepts[0].maxTimeoutSeconds")}
		}),
		mk("hold-lint-warnings-leg", "lint warned about the selected entry's leg as a whole", func(in *caseInput) {
			in.LintResult.Findings = []lintFinding{finding("w", "warn", "header", nil, "resource.description")}
		}),
		mk("go-lint-warning-other-leg", "a warning on the other leg is not the selected entry's", func(in *caseInput) {
			in.LintResult.Findings = []lintFinding{finding("w", "warn", "body", nil, "x402Version"), finding("i", "info", "header", nil, "resource")}
		}),
		mk("hold-scheme-not-probed", "scheme upto: P1 has no payload for it and is not sent", func(in *caseInput) {
			e := solEntry()
			e["scheme"] = "upto"
			c := v2(nil, e)
			in.Lint[0].Capture, in.Second = c, ptr(c)
			in.LintResult = lintClean("header", e)
			in.Answers = dropAnswer(in.Answers, "p1_structural")
		}),
		mk("hold-cortx-unfavourable", "the reliability decision is do_not_call", func(in *caseInput) {
			in.CORTX = &cortxIn{Action: "do_not_call", Rule: "critical_or_active_incident"}
		}),
		mk("hold-cortx-unverified", "the reliability record could not be verified", func(in *caseInput) {
			in.CORTX = &cortxIn{Action: "unverified", Rule: "not_monitored"}
		}),
		mk("stop-every-reason-listed", "STOP lists the HOLD reasons that also apply, in table order", func(in *caseInput) {
			in.Answers = setAnswer(setAnswer(in.Answers, "p2_bogus", ok(200, nil, "")), "head", ok(204, nil, ""))
			in.LintResult.Entries[0].Warnings = 1
			in.CORTX = &cortxIn{Action: "warn", Rule: "degraded"}
			in.Lint[0].Capture = v2(nil, withMemo(solEntry(), "m-1"))
			in.Second = ptr(v2(nil, withMemo(solEntry(), "m-1")))
		}),
	}
}

// captured adds the reference middleware's own unpaid 402 (recorded by
// tools/capture into internal/corpus/gen/captured) as the lint fetch of a
// seller that ignores payments and of one that refuses them.
func captured(root string) ([]cases, error) {
	raw, err := os.ReadFile(filepath.Join(root, "internal", "corpus", "gen", "captured", "x402-express-v2.json"))
	if err != nil {
		return nil, err
	}
	var recorded []struct {
		ID       string    `json:"id"`
		URL      string    `json:"url"`
		Captures []capture `json:"captures"`
	}
	if err := json.Unmarshal(raw, &recorded); err != nil {
		return nil, err
	}
	var out []cases
	for _, r := range recorded {
		if r.ID != "captured-x402-express-v2-solana-verbless-check" || len(r.Captures) != 1 {
			continue
		}
		c := r.Captures[0]
		ch, _ := fromBase64(c.Headers["payment-required"])
		root, _ := parseJSONObject(ch)
		var entries []map[string]any
		for _, a := range root["accepts"].([]any) {
			entries = append(entries, a.(map[string]any))
		}
		base := caseInput{Lint: []methodCapture{{"GET", c}}, LintResult: lintClean("header", entries...), Second: ptr(c),
			Answers: answers("GET", "POST")}
		deaf := base
		deaf.Answers = setAnswer(base.Answers, "p1_structural", c)
		deaf.Answers = setAnswer(deaf.Answers, "p2_bogus", c)
		out = append(out,
			cases{ID: "captured-express-v2-closed", Note: "@x402/express@2.27.0's unpaid 402 (captured); synthetic refusals", URL: r.URL, Input: base},
			cases{ID: "captured-express-v2-ignores-payments", Note: "@x402/express@2.27.0's unpaid 402 answered again to both payment probes: its error member is discounted, P1 NOT-EVALUATED", URL: r.URL, Input: deaf})
	}
	return out, nil
}
