package x402check_test

import (
	"encoding/json"
	"testing"

	"github.com/exchangerebel/payability/x402check"
)

// FuzzParsePreflightRecord: any input either is refused or gives a record
// with a known decision whose JSON() is valid JSON that parses back to the
// same decision and terms.
func FuzzParsePreflightRecord(f *testing.F) {
	f.Add([]byte(`{"document":"x402-preflight/v1","revision":"1","decision":"GO","reasons":[],"terms_sha256":"` + "ab" + `"}`))
	f.Add([]byte(`{"decision":"STOP","reasons":["not_402"],"terms_sha256":null,"selected_entry":null}`))
	f.Add([]byte(`{"decision":"HOLD","selected_entry":{"leg":"header","index":0}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := x402check.ParsePreflightRecord(b)
		if err != nil {
			return
		}
		if r.Decision != x402check.Go && r.Decision != x402check.Hold && r.Decision != x402check.Stop {
			t.Fatalf("decision %q", r.Decision)
		}
		if !json.Valid(r.JSON()) {
			t.Fatal("JSON() is not JSON")
		}
		again, err := x402check.ParsePreflightRecord(r.JSON())
		if err != nil || again.Decision != r.Decision || again.TermsSHA256 != r.TermsSHA256 {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzRequirementsHash: any version, URL and requirements either are
// refused or give 64 lower-case hex.
func FuzzRequirementsHash(f *testing.F) {
	f.Add(2, "https://api.example.com/weather", []byte(`{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xa","payTo":"0xb","maxTimeoutSeconds":60}`))
	f.Add(1, "", []byte(`{"scheme":"exact","network":"base","maxAmountRequired":"1","resource":"https://x.example/","asset":"0xa","payTo":"0xb","maxTimeoutSeconds":6e1}`))
	f.Add(2, "u", []byte(`{"maxTimeoutSeconds":1e400}`))
	f.Fuzz(func(t *testing.T, version int, url string, req []byte) {
		h, err := x402check.RequirementsHash(version, url, req)
		if err != nil {
			return
		}
		if len(h) != 64 {
			t.Fatalf("hash %q", h)
		}
		for _, c := range h {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				t.Fatalf("hash %q", h)
			}
		}
	})
}
