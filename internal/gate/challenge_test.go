package gate

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/verdict"
)

var testTerms = Terms{
	Network: Mainnet, PayTo: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
	TokenAccount: "3EpVCPUgyjq2MfGeCttyey6bs5zya5wumZe6Rtp1RTNd", MaxTimeoutSeconds: 60,
}

func testMemos(now time.Time) Memos {
	return Memos{Key: bytes.Repeat([]byte{7}, 32), Now: func() time.Time { return now }, Rand: rand.Reader}
}

func asCapture(c Challenge) capture.Capture {
	return capture.Capture{Outcome: capture.OK, Status: 402, Body: c.Body,
		Header: capture.Header{"Payment-Required": {c.Header}}}
}

// Our own challenge must pass our own check and memo ops.
func TestOwnChallengeGradesPopulatedAndBound(t *testing.T) {
	const resource = "https://payability.example/toll/payability/check"
	m := testMemos(time.Now())
	offer := Offer{Op: "check", Price: 10000, Description: "one payability verdict"}
	memo1, _ := m.Issue("check", "")
	memo2, _ := m.Issue("check", "")
	c1, c2 := testTerms.Challenge(offer, resource, memo1), testTerms.Challenge(offer, resource, memo2)
	if got := verdict.Check(resource, asCapture(c1)).State; got != verdict.Populated {
		t.Errorf("check = %s, want POPULATED", got)
	}
	r := verdict.Memo(asCapture(c1), asCapture(c2))
	if r.State != verdict.Bound || *r.Factors.BodyMemoFormatFetch1 != verdict.FormatPrefixedOpaque {
		t.Errorf("memo = %s (%s), want BOUND, prefixed-opaque", r.State, *r.Factors.BodyMemoFormatFetch1)
	}
	for _, k := range []string{`"error"`, `"reason"`, `"detail"`} {
		if strings.Contains(string(c1.Body), k) {
			t.Errorf("plain challenge carries %s", k)
		}
	}
	if g := verdict.GradeProbe(asCapture(c1)); g.Grade != verdict.Absent {
		t.Errorf("plain challenge grades %s, want ABSENT (never evaluated)", g.Grade)
	}
	refused := capture.Capture{Outcome: capture.OK, Status: 402, Body: RefusalBody(CodeMemoMissing, c1)}
	if g := verdict.GradeProbe(refused); g.Grade != verdict.PresentFailClosed {
		t.Errorf("refusal grades %s, want PRESENT-FAIL-CLOSED", g.Grade)
	}
}

func TestMemoVerify(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	m := testMemos(now)
	bound, _ := m.Issue("check", "https://a.example/")
	free, _ := m.Issue("memo", "")
	if len(bound) > 256 || verdict.MemoFormat(bound) != verdict.FormatPrefixedOpaque {
		t.Fatalf("memo %q: %d bytes, %s", bound, len(bound), verdict.MemoFormat(bound))
	}
	later := func(d time.Duration) Memos { return testMemos(now.Add(d)) }
	other := Memos{Key: bytes.Repeat([]byte{8}, 32), Now: m.Now, Rand: rand.Reader}
	tests := []struct {
		name string
		m    Memos
		memo string
		op   string
		url  string
		want Code
	}{
		{"bound, same URL", m, bound, "check", "https://a.example/", ""},
		{"bound, other URL", m, bound, "check", "https://b.example/", CodeMemoInvalid},
		{"unbound, any URL", m, free, "memo", "https://b.example/", ""},
		{"wrong op", m, free, "check", "", CodeMemoWrongOp},
		{"just before expiry", later(MemoLifetime - time.Second), free, "memo", "", ""},
		{"at expiry", later(MemoLifetime), free, "memo", "", CodeMemoExpired},
		{"other key", other, free, "memo", "", CodeMemoInvalid},
		{"tampered", m, free[:len(free)-2] + "AA", "memo", "", CodeMemoInvalid},
		{"not ours", m, "probe-memo-not-bound-to-any-challenge", "memo", "", CodeMemoInvalid},
		{"empty", m, "", "memo", "", CodeMemoInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := tt.m.Verify(tt.memo, tt.op, tt.url); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if m.Digest(free) == m.Digest(bound) || len(m.Digest(free)) != 64 || strings.Contains(m.Digest(free), free) {
		t.Error("digest is not a distinct 64-hex keyed digest")
	}
}

func TestEveryCodeHasADetail(t *testing.T) {
	for _, c := range Codes() {
		if c.Detail() == "" {
			t.Errorf("%s has no detail", c)
		}
	}
}
