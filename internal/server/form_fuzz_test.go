package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// newFormServer is a server for the free routes only (no payment rail: the
// fuzz target never pays), on its own SQLite store.
func newFormServer(tb testing.TB) *Server {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), tb.TempDir()+"/p.db")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) }
	g := &gate.Gate{
		Terms:  gate.Terms{Network: gate.Mainnet, PayTo: testPayTo, TokenAccount: testTokenAccount, MaxTimeoutSeconds: 120},
		Offers: testOffers(),
		Memos:  gate.Memos{Key: bytes.Repeat([]byte{7}, 32), Now: now, Rand: rand.Reader},
		Store:  st, Now: now,
	}
	s, err := New(Config{Service: ServeAll, Gate: g, Key: key, KeySet: report.NewKeySet(key), Store: st, Now: now,
		ClientLimiter: NewLimiter(1e6, 1e6, now), ReadyCorpus: true})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// FuzzFormRoutes posts arbitrary bodies to the page's form routes and to
// POST /verify: every answer is one of the documented statuses, and a
// refusal never repeats the body.
func FuzzFormRoutes(f *testing.F) {
	for _, seed := range []string{"", "url=https%3A%2F%2Fexample.com%2Fx&op=check", "report=%7B%7D", "url=a&url=b", "%zz", "op=probe&caller=x&url=ftp://x",
		`{"signature":{"alg":"Ed25519","kid":"k","value":"AA"}}`} {
		f.Add(seed)
	}
	srv := newFormServer(f)
	allowed := map[int]bool{200: true, 400: true, 402: true, 403: true, 413: true, 415: true, 429: true}
	f.Fuzz(func(t *testing.T, body string) {
		for _, c := range []struct{ path, ct string }{
			{"/precheck/page", "application/x-www-form-urlencoded"},
			{"/toll/rail-probe/precheck/page", "application/x-www-form-urlencoded"},
			{"/verify/page", "application/x-www-form-urlencoded"},
			{"/verify", "application/json"},
		} {
			req := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(body))
			req.Header.Set("Content-Type", c.ct)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if !allowed[rec.Code] {
				t.Fatalf("%s: status %d", c.path, rec.Code)
			}
			if rec.Code != 200 && len(body) > 8 && strings.Contains(rec.Body.String(), body) {
				t.Fatalf("%s: the refusal repeats the body", c.path)
			}
		}
	})
}
