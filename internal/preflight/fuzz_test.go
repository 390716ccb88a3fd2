package preflight

import (
	"encoding/base64"
	"reflect"
	"regexp"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
)

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FuzzParseChallenge: terms-hash's input parser never panics, is
// deterministic, prints only well-formed hashes and passes no free text.
func FuzzParseChallenge(f *testing.F) {
	v2doc := `{"x402Version":2,"resource":{"url":"https://s.example/a"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60}]}`
	f.Add([]byte(v2doc))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte(v2doc))))
	f.Add([]byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1","resource":"https://s.example/a","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":6e1}]}`))
	f.Add([]byte(`{"x402Version":1,"accepts":[null,1,"x",{}]}`))
	f.Add([]byte("  \n"))
	f.Add([]byte(`{"accepts":[{"maxTimeoutSeconds":1e400}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		hs, ok := ParseChallenge(raw)
		again, ok2 := ParseChallenge(raw)
		if ok != ok2 || !reflect.DeepEqual(hs, again) {
			t.Fatal("not deterministic")
		}
		if !ok && hs != nil {
			t.Fatal("entries for an unreadable input")
		}
		for _, h := range hs {
			if h.TermsSHA256 != nil && !hexHash.MatchString(*h.TermsSHA256) {
				t.Fatalf("hash %q", *h.TermsSHA256)
			}
			for _, id := range []string{h.Scheme, h.Network} {
				if id != "" && !identPattern.MatchString(id) {
					t.Fatalf("identifier %q passed", id)
				}
			}
			if h.Leg != lint.LegHeader && h.Leg != lint.LegBody {
				t.Fatalf("leg %q", h.Leg)
			}
		}
	})
}
