package preflight

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
)

const (
	testURL     = "https://seller.example/api"
	solMainnet  = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	solUSDC     = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solPayTo    = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	baseUSDC    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	basePayTo   = "0x1111111111111111111111111111111111111111"
	unpaidError = "X-PAYMENT header is required"
)

func solEntry(amount string) map[string]any {
	return map[string]any{"scheme": "exact", "network": solMainnet, "amount": amount, "asset": solUSDC,
		"payTo": solPayTo, "maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": solPayTo}}
}

func evmEntry(amount string) map[string]any {
	return map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": amount, "asset": baseUSDC,
		"payTo": basePayTo, "maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"}}
}

// v2 builds a 402 with a PAYMENT-REQUIRED header carrying entries, and the
// reference middleware's body error.
func v2(entries ...map[string]any) capture.Capture {
	acc := make([]any, len(entries))
	for i, e := range entries {
		acc[i] = e
	}
	doc := map[string]any{"x402Version": 2, "error": "Payment required", "resource": map[string]any{"url": testURL, "description": "d"}, "accepts": acc}
	return withHeader(402, doc, `{}`)
}

func withHeader(status int, doc map[string]any, body string) capture.Capture {
	raw, _ := json.Marshal(doc)
	return capture.Capture{Outcome: capture.OK, Status: status, Header: capture.Header{
		"Payment-Required": {base64.StdEncoding.EncodeToString(raw)}}, Body: []byte(body)}
}

// v1 builds a 402 whose body is a v1 challenge.
func v1(entries ...map[string]any) capture.Capture {
	acc := make([]any, len(entries))
	for i, e := range entries {
		acc[i] = e
	}
	raw, _ := json.Marshal(map[string]any{"x402Version": 1, "error": unpaidError, "accepts": acc})
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{}, Body: raw}
}

func v1Entry(network, amount string) map[string]any {
	return map[string]any{"scheme": "exact", "network": network, "maxAmountRequired": amount, "resource": testURL,
		"asset": baseUSDC, "payTo": basePayTo, "maxTimeoutSeconds": 60, "description": "d", "mimeType": "application/json"}
}

// cleanLint is a lint result with n clean entries on leg.
func cleanLint(leg lint.Leg, n int) lint.Result {
	r := lint.Result{Status: 402, Conforms: true, Findings: []lint.Finding{}}
	for i := 0; i < n; i++ {
		r.Entries = append(r.Entries, lint.EntrySummary{Index: i, Leg: leg})
	}
	return r
}

func status(code int, body string, header capture.Header) capture.Capture {
	if header == nil {
		header = capture.Header{}
	}
	return capture.Capture{Outcome: capture.OK, Status: code, Header: header, Body: []byte(body)}
}

func ip(i int) *int { return &i }

// withRaw is a 402 whose PAYMENT-REQUIRED header is base64 of raw.
func withRaw(raw string) capture.Capture {
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{
		"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(raw))}}, Body: []byte(`{}`)}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
