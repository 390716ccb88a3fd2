package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1772442000, 0)

func TestSignIsHMACOfTimestampDotBody(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"id":"evt_1"}`)
	got := Sign(secret, body, t0)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("1772442000." + string(body)))
	if want := "t=1772442000,v1=" + hex.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"id":"evt_1"}`)
	good := Sign(secret, body, t0)
	sig := strings.TrimPrefix(good[strings.Index(good, "v1="):], "v1=")
	for _, tc := range []struct {
		name   string
		secret []byte
		body   []byte
		header string
		now    time.Time
		want   error
	}{
		{"valid", secret, body, good, t0, nil},
		{"300 s old is the edge: valid", secret, body, good, t0.Add(300 * time.Second), nil},
		{"301 s old is stale", secret, body, good, t0.Add(301 * time.Second), ErrStale},
		{"300 s ahead is the edge: valid", secret, body, good, t0.Add(-300 * time.Second), nil},
		{"301 s ahead is stale", secret, body, good, t0.Add(-301 * time.Second), ErrStale},
		{"another body", secret, []byte(`{"id":"evt_2"}`), good, t0, ErrMismatch},
		{"another secret", []byte("other"), body, good, t0, ErrMismatch},
		{"a later t with the old v1", secret, body, "t=1772442001,v1=" + sig, t0, ErrMismatch},
		{"one of two v1 matches", secret, body, "t=1772442000,v1=" + strings.Repeat("0", 64) + ",v1=" + sig, t0, nil},
		{"unknown scheme ignored", secret, body, good + ",v0=abc", t0, nil},
		{"no t", secret, body, "v1=" + sig, t0, ErrMalformed},
		{"no v1", secret, body, "t=1772442000", t0, ErrMalformed},
		{"two t", secret, body, "t=1772442000,t=1772442000,v1=" + sig, t0, ErrMalformed},
		{"t not digits", secret, body, "t=-5,v1=" + sig, t0, ErrMalformed},
		{"v1 upper case", secret, body, "t=1772442000,v1=" + strings.ToUpper(sig), t0, ErrMalformed},
		{"v1 short", secret, body, "t=1772442000,v1=" + sig[:63], t0, ErrMalformed},
		{"no equals", secret, body, "t1772442000", t0, ErrMalformed},
		{"empty", secret, body, "", t0, ErrMalformed},
		{"over 4096 bytes", secret, body, good + "," + strings.Repeat("x=y,", 1100), t0, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Verify(tc.secret, tc.body, tc.header, tc.now); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEventIDAndBody(t *testing.T) {
	a, b := EventID("ep", "check", 60), EventID("ep", "check", 120)
	if a == b || a != EventID("ep", "check", 60) || !strings.HasPrefix(a, "evt_") || len(a) != 36 {
		t.Errorf("ids %s %s", a, b)
	}
	if EventID("e", "pcheck", 1) == EventID("ep", "check", 1) {
		t.Error("ids of different endpoints collide")
	}
	got := string(Event{ID: a, Type: TypeOutcomeChanged, Endpoint: "ep", Op: "check", From: "passing", To: "failing", At: "2026-03-02T09:00:00.000Z"}.Body())
	want := `{"id":"` + a + `","type":"outcome_changed","endpoint":"ep","op":"check","from":"passing","to":"failing","reasons":[],"at":"2026-03-02T09:00:00.000Z"}`
	if got != want {
		t.Errorf("body %s\nwant %s", got, want)
	}
}

// FuzzVerify: any header is accepted only with a matching v1.
func FuzzVerify(f *testing.F) {
	secret, body := []byte("s3cret"), []byte(`{"id":"evt_1"}`)
	f.Add(Sign(secret, body, t0))
	f.Add("t=1,v1=00")
	f.Add(",,,=")
	f.Fuzz(func(t *testing.T, header string) {
		if Verify(secret, body, header, t0) == nil && !strings.Contains(header, Sign(secret, body, t0)[len("t=1772442000,"):]) {
			// A valid header must carry the real MAC of its own t.
			ok := false
			for _, p := range strings.Split(header, ",") {
				if strings.HasPrefix(strings.TrimSpace(p), "t=") {
					ts := strings.TrimPrefix(strings.TrimSpace(p), "t=")
					ok = strings.Contains(header, mac(secret, ts, body))
				}
			}
			if !ok {
				t.Fatalf("accepted %q", header)
			}
		}
	})
}
