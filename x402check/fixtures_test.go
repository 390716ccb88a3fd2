package x402check_test

// The @payability/x402-guard package (clients/x402-guard) reimplements
// terms_sha256, RFC 8785 and the record signature in JavaScript. Its tests
// read the vectors this test writes with payability's own Go code: the terms
// hashes of TermsHash (payability terms-hash), canonical forms of
// report.Canonical, and monitor records (monitorhttp.Record) signed by
// report.Sign. `go test ./x402check -run TestGuardFixtures -update` rewrites
// the file; without -update the test fails when it is not what Go writes.

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/x402check"
)

var update = flag.Bool("update", false, "rewrite clients/x402-guard/test/fixtures/go-vectors.json")

const fixtureFile = "../clients/x402-guard/test/fixtures/go-vectors.json"

const (
	solana = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	usdc   = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	payee  = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
	base   = "eip155:8453"
	usdcB  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	evmTo  = "0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
)

// termsCases are challenges as JSON text: a v2 document (sent as the
// PAYMENT-REQUIRED value, base64) or a v1 body.
var termsCases = []struct{ name, doc string }{
	{"v2 solana", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + solana + `","amount":"10000","asset":"` + usdc + `","payTo":"` + payee + `","maxTimeoutSeconds":60,"extra":{"feePayer":"x"}}]}`},
	{"v2 two entries", `{"x402Version":2,"resource":{"url":"https://api.example.com/a?q=1"},"accepts":[{"scheme":"exact","network":"` + base + `","amount":"1","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":300,"extra":{"name":"USD Coin","version":"2"}},{"scheme":"exact","network":"` + solana + `","amount":"1","asset":"` + usdc + `","payTo":"` + payee + `","maxTimeoutSeconds":300}]}`},
	{"v2 timeout written 6e1", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + solana + `","amount":"10000","asset":"` + usdc + `","payTo":"` + payee + `","maxTimeoutSeconds":6e1}]}`},
	{"v2 unicode and escapes in the url", `{"x402Version":2,"resource":{"url":"https://api.example.com/caf\u00e9/\u20ac?x=\"<&>\"\u2028"},"accepts":[{"scheme":"exact","network":"` + solana + `","amount":"10000","asset":"` + usdc + `","payTo":"` + payee + `","maxTimeoutSeconds":60}]}`},
	{"v2 not caip-2", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"base","amount":"1","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
	{"v2 no asset", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + base + `","amount":"1","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
	{"v2 timeout not an integer", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + base + `","amount":"1","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60.5}]}`},
	{"v2 timeout not safe", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + base + `","amount":"1","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":9007199254740993}]}`},
	{"v2 amount a number", `{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},"accepts":[{"scheme":"exact","network":"` + base + `","amount":1,"asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
	{"v2 no resource", `{"x402Version":2,"accepts":[{"scheme":"exact","network":"` + base + `","amount":"1","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
	{"v1 legacy names", `{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"10000","resource":"https://api.example.com/weather","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60},{"scheme":"exact","network":"solana-devnet","maxAmountRequired":"10000","resource":"https://api.example.com/weather","asset":"` + usdc + `","payTo":"` + payee + `","maxTimeoutSeconds":60}]}`},
	{"v1 states caip-2", `{"x402Version":1,"accepts":[{"scheme":"exact","network":"` + base + `","maxAmountRequired":"10000","resource":"https://api.example.com/weather","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
	{"v1 unknown name", `{"x402Version":1,"accepts":[{"scheme":"exact","network":"mainnet","maxAmountRequired":"10000","resource":"https://api.example.com/weather","asset":"` + usdcB + `","payTo":"` + evmTo + `","maxTimeoutSeconds":60}]}`},
}

// canonicalCases are JSON texts and their RFC 8785 forms.
var canonicalCases = []string{
	`{"b":1,"a":[true,false,null,"x"],"c":{"z":"","y":-0}}`,
	`{"\u20ac":"euro","\u00e9":"e","😀":"emoji","a":"\u0000\u001f\t\n\"\\/\u007f\u2028"}`,
	`{"n":[0,1,-1,9007199254740991,-9007199254740991,1e3,100E-2]}`,
	`{"nested":{"deeper":{"deepest":[{"k":"v"},[]]}},"empty":{}}`,
}

type termsVector struct {
	Name string `json:"name"`
	// Header is the PAYMENT-REQUIRED value (v2) or Body the JSON body (v1).
	Header  string                `json:"header,omitempty"`
	Body    string                `json:"body,omitempty"`
	Entries []x402check.EntryHash `json:"entries"`
}

type recordVector struct {
	Name   string          `json:"name"`
	Record json.RawMessage `json:"record"`
}

type vectors struct {
	Comment   string              `json:"comment"`
	Terms     []termsVector       `json:"terms"`
	Canonical []map[string]string `json:"canonical"`
	JWKS      json.RawMessage     `json:"jwks"`
	OtherJWKS json.RawMessage     `json:"other_jwks"`
	Records   []recordVector      `json:"records"`
}

func key(t *testing.T, b byte) report.Key {
	k, err := report.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ptr(s string) *string { return &s }

func buildVectors(t *testing.T) []byte {
	v := vectors{Comment: "written by `go test ./x402check -run TestGuardFixtures -update`; do not edit"}
	for _, c := range termsCases {
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tv := termsVector{Name: c.name}
		input := []byte(c.doc)
		if doc["x402Version"] == float64(2) {
			tv.Header = base64.StdEncoding.EncodeToString([]byte(c.doc))
			input = []byte(tv.Header)
		} else {
			tv.Body = c.doc
		}
		hs, err := x402check.TermsHash(input)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tv.Entries = hs
		v.Terms = append(v.Terms, tv)
	}
	for _, c := range canonicalCases {
		out, err := report.Canonical(json.RawMessage(c))
		if err != nil {
			t.Fatalf("canonical %s: %v", c, err)
		}
		v.Canonical = append(v.Canonical, map[string]string{"json": c, "canonical": string(out)})
	}
	k, other := key(t, 7), key(t, 9)
	var err error
	if v.JWKS, err = report.MarshalJWKS(report.NewKeySet(k, key(t, 8).Public())); err != nil {
		t.Fatal(err)
	}
	if v.OtherJWKS, err = report.MarshalJWKS(report.NewKeySet(other)); err != nil {
		t.Fatal(err)
	}
	terms := v.Terms[0].Entries[0].TermsSHA256
	rec := func(status string, mutate func(*monitorhttp.Record)) monitorhttp.Record {
		r := monitorhttp.Record{Source: "payability", Version: "0.1.0", ServiceID: "weather", Status: status,
			EndpointURL: "https://api.example.com/weather", LastVerifiedAt: ptr("2026-03-02T09:10:00.412Z"),
			Network: ptr(solana), TermsSHA256: ptr(terms), Checks30d: 4320, PassingPercent30d: ptr("99.8"),
			NotMeasured: []string{"paid_delivery"}, GeneratedAt: "2026-03-02T09:12:31.007Z"}
		if mutate != nil {
			mutate(&r)
		}
		return r
	}
	sign := func(name string, doc any, with report.Key) {
		b, err := report.Sign(doc, with)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v.Records = append(v.Records, recordVector{Name: name, Record: b})
	}
	sign("operational", rec("operational", nil), k)
	sign("degraded", rec("degraded", nil), k)
	sign("critical", rec("critical", func(r *monitorhttp.Record) {
		r.ActiveIncident = &monitorhttp.RecordIncident{Severity: "critical", FailureStage: "fail_open", OpenedAt: "2026-03-02T08:00:00Z"}
	}), k)
	sign("unknown", rec("unknown", nil), k)
	sign("no terms", rec("operational", func(r *monitorhttp.Record) { r.TermsSHA256 = nil }), k)
	sign("other endpoint", rec("operational", func(r *monitorhttp.Record) { r.EndpointURL = "https://api.example.com/other" }), k)
	sign("signed by a key not in the set", rec("operational", nil), other)
	sign("claims paid delivery", map[string]any{"source": "payability", "service_id": "weather", "status": "operational",
		"endpoint_url": "https://api.example.com/weather", "last_verified_at": "2026-03-02T09:10:00.412Z", "active_incident": nil,
		"network": solana, "terms_sha256": terms, "checks_30d": 4320, "not_measured": []string{"paid_delivery"}, "paid_delivery_percent": "100.0"}, k)
	sign("unicode", map[string]any{"\u20ac": "euro", "\u00e9": "e", "😀": []any{"\u2028", "\"<&>\"", 1, -2}, "a": map[string]any{}}, k)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func TestGuardFixtures(t *testing.T) {
	want := buildVectors(t)
	if *update {
		if err := os.WriteFile(fixtureFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what Go writes: run go test ./x402check -run TestGuardFixtures -update", fixtureFile)
	}
}
