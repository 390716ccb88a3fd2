package reliability

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fixed scene every test is set in.
var (
	checkTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	verified  = checkTime.Add(-12 * time.Minute)
)

const (
	intendedURL = "https://seller.example/api/paid"
	usdcOnBase  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payee       = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
	serviceID   = "acme-weather"
)

// record returns a valid, bound record as a JSON object, changed by mods.
func record(mods ...func(m map[string]any)) map[string]any {
	m := map[string]any{
		"service_id":              serviceID,
		"service_name":            "Acme Weather",
		"window":                  "30d",
		"status":                  "operational",
		"endpoint_url":            intendedURL,
		"chain_id":                8453,
		"token_address":           usdcOnBase,
		"payee_address":           payee,
		"uptime_percent":          99.9,
		"paid_delivery_percent":   99.5,
		"schema_validity_percent": 100,
		"median_latency_ms":       850,
		"last_verified_at":        verified.Format(time.RFC3339),
		"active_incident":         nil,
	}
	for _, mod := range mods {
		mod(m)
	}
	return m
}

func set(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
func del(keys ...string) func(map[string]any) {
	return func(m map[string]any) {
		for _, k := range keys {
			delete(m, k)
		}
	}
}

// publicShape is a record as the public API returns it: no binding fields.
var publicShape = del("endpoint_url", "chain_id", "token_address", "payee_address")

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// challengeHeader is a v2 PAYMENT-REQUIRED value with one Base entry.
func challengeHeader(payTo, asset string) string {
	v := map[string]any{
		"x402Version": 2,
		"resource":    map[string]any{"url": intendedURL},
		"accepts": []any{map[string]any{
			"scheme": "exact", "network": "eip155:8453", "amount": "10000",
			"asset": asset, "payTo": payTo, "maxTimeoutSeconds": 60,
		}},
	}
	b, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(b)
}

// challengeBody is a v1 body with one Base entry.
func challengeBody(payTo, asset string) []byte {
	v := map[string]any{
		"x402Version": 1,
		"accepts": []any{map[string]any{
			"scheme": "exact", "network": "base", "maxAmountRequired": "10000",
			"resource": intendedURL, "payTo": payTo, "asset": asset, "maxTimeoutSeconds": 60,
		}},
	}
	b, _ := json.Marshal(v)
	return b
}

// challenge is a Base challenge with both legs agreeing.
func challenge() capture.Capture {
	return capture.Capture{Outcome: capture.OK, Status: 402,
		Header: capture.Header{"Payment-Required": {challengeHeader(payee, usdcOnBase)}},
		Body:   challengeBody(payee, usdcOnBase)}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/reliability -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden:\n%s", name, got)
	}
}
