package preflight

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestTermsHashKnownAnswer: the RFC 8785 form is written out by hand.
func TestTermsHashKnownAnswer(t *testing.T) {
	tests := []struct {
		name      string
		challenge lint.Challenge
		canonical string
	}{
		{"v2 solana", lint.Decode(v2(solEntry("1000"))),
			`{"amount":"1000","asset":"` + solUSDC + `","maxTimeoutSeconds":60,"network":"` + solMainnet + `","payTo":"` + solPayTo + `","scheme":"exact","url":"` + testURL + `"}`},
		{"v1 legacy name mapped", lint.Decode(v1(v1Entry("base", "10000"))),
			`{"amount":"10000","asset":"` + baseUSDC + `","maxTimeoutSeconds":60,"network":"eip155:8453","payTo":"` + basePayTo + `","scheme":"exact","url":"` + testURL + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := HashEntries(tt.challenge)
			if len(hs) != 1 || hs[0].TermsSHA256 == nil {
				t.Fatalf("hashes %+v", hs)
			}
			if got, want := *hs[0].TermsSHA256, sum(tt.canonical); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestTermsNumberForms(t *testing.T) {
	e := solEntry("1000")
	base := *HashEntries(lint.Decode(v2(e)))[0].TermsSHA256
	// 60.0 and 6e1 are the number 60: the same canonical form.
	for _, form := range []string{"60.0", "6e1", "60"} {
		raw := `{"x402Version":2,"resource":{"url":"` + testURL + `"},"accepts":[{"scheme":"exact","network":"` + solMainnet +
			`","amount":"1000","asset":"` + solUSDC + `","payTo":"` + solPayTo + `","maxTimeoutSeconds":` + form + `}]}`
		c := withRaw(raw)
		hs := HashEntries(lint.Decode(c))
		if hs[0].TermsSHA256 == nil || *hs[0].TermsSHA256 != base {
			t.Errorf("maxTimeoutSeconds %s: hash differs", form)
		}
	}
}

func TestTermsAbsent(t *testing.T) {
	mk := func(mut func(m map[string]any)) lint.Challenge {
		e := solEntry("1")
		mut(e)
		return lint.Decode(v2(e))
	}
	tests := map[string]lint.Challenge{
		"no payTo":                   mk(func(m map[string]any) { delete(m, "payTo") }),
		"amount a number":            mk(func(m map[string]any) { m["amount"] = 1 }),
		"maxTimeoutSeconds a string": mk(func(m map[string]any) { m["maxTimeoutSeconds"] = "60" }),
		"maxTimeoutSeconds unsafe":   mk(func(m map[string]any) { m["maxTimeoutSeconds"] = 1e300 }),
		"network a legacy name (v2)": mk(func(m map[string]any) { m["network"] = "solana" }),
		"v1 unknown legacy name":     lint.Decode(v1(v1Entry("atlantis", "1"))),
	}
	for name, ch := range tests {
		t.Run(name, func(t *testing.T) {
			hs := HashEntries(ch)
			if len(hs) != 1 || hs[0].TermsSHA256 != nil {
				t.Errorf("a hash was made: %+v", hs)
			}
		})
	}
}

func TestHashEntriesOrderAndIdentifiers(t *testing.T) {
	c := v2(solEntry("1"), evmEntry("2"))
	body := v1(v1Entry("base-sepolia", "3"))
	c.Body = body.Body
	hs := HashEntries(lint.Decode(c))
	if len(hs) != 3 {
		t.Fatalf("%d entries", len(hs))
	}
	want := []struct {
		leg   lint.Leg
		index int
		net   string
	}{{lint.LegHeader, 0, solMainnet}, {lint.LegHeader, 1, "eip155:8453"}, {lint.LegBody, 0, "base-sepolia"}}
	for i, w := range want {
		if hs[i].Leg != w.leg || hs[i].Index != w.index || hs[i].Network != w.net || hs[i].TermsSHA256 == nil {
			t.Errorf("entry %d: %+v", i, hs[i])
		}
	}
}
