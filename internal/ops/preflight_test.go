package ops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/preflight"
)

// seen is one request a seller received.
type seen struct {
	Method, Signature, XPayment, ContentType, Body string
}

// seller is a loopback x402 seller: a v2 challenge on gated, a refusal of
// any payment header it cannot verify (mode decides how), 405 elsewhere.
type seller struct {
	mu    sync.Mutex
	seen  []seen
	gated string
	mode  string // "closed", "open" (serves any payment header), "deaf" (ignores payments)
	url   string
	n     int
}

func (s *seller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, seen{r.Method, r.Header.Get("PAYMENT-SIGNATURE"), r.Header.Get("X-PAYMENT"), r.Header.Get("Content-Type"), string(b)})
	s.n++
	n := s.n
	s.mu.Unlock()
	if r.Method != s.gated && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	sig := r.Header.Get("PAYMENT-SIGNATURE")
	switch {
	case sig != "" && s.mode == "open":
		w.WriteHeader(http.StatusOK)
		return
	case sig == "bogus-not-a-payment-header" && s.mode == "closed":
		w.WriteHeader(http.StatusBadRequest)
		return
	case sig != "" && s.mode == "closed":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{"error":"invalid_exact_svm_payload_transaction"}`))
		return
	}
	doc := map[string]any{"x402Version": 2, "resource": map[string]any{"url": s.url},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "1000",
			"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
			"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "memo": "memo-" + string(rune('a'+n%26))}}}}
	raw, _ := json.Marshal(doc)
	w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(raw))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write([]byte(`{"error":"Payment required"}`))
}

// cleanLint summarises every entry of both legs with no finding: the ops
// tests decide on the preflight's own rules, not on lint's.
func cleanLint(in lint.Input) lint.Result {
	ch := lint.Decode(in.Capture)
	r := lint.Result{Status: in.Capture.Status, Conforms: true, Findings: []lint.Finding{}}
	for _, d := range []*lint.Document{ch.Header, ch.Body} {
		if d != nil {
			for i := range d.Accepts {
				r.Entries = append(r.Entries, lint.EntrySummary{Index: i, Leg: d.Leg})
			}
		}
	}
	return r
}

func preflightRun(t *testing.T, s *seller, req PreflightRequest) PreflightReport {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/api"
	req.URL = s.url
	r := runner(t)
	r.lint = cleanLint
	rep, err := r.Preflight(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestPreflightGOAgainstAClosedSeller(t *testing.T) {
	s := &seller{gated: http.MethodGet, mode: "closed"}
	rep := preflightRun(t, s, PreflightRequest{})
	if rep.Decision != preflight.Go || len(rep.Reasons) != 0 {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
	if rep.ExitCode() != 0 || !strings.HasPrefix(rep.Summary, "GO: no red flag observed at 2026-11-29T01:02:03.004Z;") {
		t.Errorf("summary %q", rep.Summary)
	}
	methods := []string{}
	for _, q := range s.seen {
		methods = append(methods, q.Method)
	}
	if want := []string{"GET", "GET", "GET", "GET", "HEAD", "POST"}; !reflect.DeepEqual(methods, want) {
		t.Fatalf("methods %v, want %v", methods, want)
	}
	// P1 is exactly the published bytes for the challenge the seller sent.
	p1, err := base64.StdEncoding.DecodeString(s.seen[2].Signature)
	if err != nil || !strings.HasPrefix(string(p1), `{"x402Version":2,"resource":{"url":"`+s.url+`"},"accepted":{"amount":"1000",`) ||
		!strings.Contains(string(p1), `,"payload":{"transaction":"`) {
		t.Errorf("P1 %s", p1)
	}
	if s.seen[3].Signature != "bogus-not-a-payment-header" {
		t.Errorf("P2 %q", s.seen[3].Signature)
	}
	if s.seen[5].Body != "{}" || s.seen[5].ContentType != "application/json" {
		t.Errorf("POST body %q %q", s.seen[5].Body, s.seen[5].ContentType)
	}
	if rep.Challenge.Memo != preflight.FreshChanged || rep.TermsSHA256 == nil {
		t.Errorf("memo %s terms %v", rep.Challenge.Memo, rep.TermsSHA256)
	}
	b, _ := json.Marshal(rep)
	for _, v := range []string{"9xQeWvG816", "EPjFWdd5", "memo-", `"1000"`} {
		if strings.Contains(string(b), v) {
			t.Errorf("the record carries the fetched value %q", v)
		}
	}
}

func TestPreflightSTOPAgainstAFailOpenSeller(t *testing.T) {
	rep := preflightRun(t, &seller{gated: http.MethodGet, mode: "open"}, PreflightRequest{})
	if rep.Decision != preflight.Stop || !reflect.DeepEqual(rep.Reasons, []preflight.Reason{preflight.ReasonFailOpen}) || rep.ExitCode() != 20 {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
}

func TestPreflightHOLDAgainstASellerThatIgnoresPayments(t *testing.T) {
	rep := preflightRun(t, &seller{gated: http.MethodGet, mode: "deaf"}, PreflightRequest{})
	if rep.Decision != preflight.Hold || !reflect.DeepEqual(rep.Reasons, []preflight.Reason{preflight.ReasonPaymentNotVerified}) || rep.ExitCode() != 10 {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
	if g := *rep.Probes[0].Grade; g != preflight.NotEvaluated {
		t.Errorf("P1 graded %s: the unpaid error must not count as a refusal", g)
	}
}

func TestPreflightFindsAPOSTRouteAndCarriesTheBody(t *testing.T) {
	s := &seller{gated: http.MethodPost, mode: "closed"}
	rep := preflightRun(t, s, PreflightRequest{Body: []byte(`{"q":"weather"}`)})
	if rep.Method != http.MethodPost || rep.Decision != preflight.Go {
		t.Fatalf("method %s decision %s %v", rep.Method, rep.Decision, rep.Reasons)
	}
	methods := []string{}
	for _, q := range s.seen {
		methods = append(methods, q.Method)
		if q.Method == http.MethodPost && q.Body != `{"q":"weather"}` {
			t.Errorf("a POST carried %q", q.Body)
		}
	}
	if want := []string{"GET", "POST", "POST", "POST", "POST", "HEAD", "GET"}; !reflect.DeepEqual(methods, want) {
		t.Errorf("methods %v, want %v", methods, want)
	}
}

func TestPreflightNot402SendsNothingMore(t *testing.T) {
	s := &seller{gated: "PUT"}
	rep := preflightRun(t, s, PreflightRequest{Method: http.MethodGet})
	if rep.Decision != preflight.Stop || !reflect.DeepEqual(rep.Reasons, []preflight.Reason{preflight.ReasonNot402}) {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
	if len(s.seen) != 1 {
		t.Errorf("%d requests after a 405", len(s.seen))
	}
}

func TestPreflightRefusesAPolicyURL(t *testing.T) {
	_, err := runner(t).Preflight(context.Background(), PreflightRequest{URL: "ftp://seller.example/"})
	if err == nil {
		t.Fatal("no refusal")
	}
}

func TestPreflightCORTXThatCannotBindIsUnverified(t *testing.T) {
	// The loopback seller is http: CORTX binds https URLs only, so the check
	// is refused before any request and the preflight holds.
	rep := preflightRun(t, &seller{gated: http.MethodGet, mode: "closed"}, PreflightRequest{ServiceID: "svc-1"})
	if rep.Decision != preflight.Hold || !reflect.DeepEqual(rep.Reasons, []preflight.Reason{preflight.ReasonCortxUnverified}) {
		t.Fatalf("decision %s %v", rep.Decision, rep.Reasons)
	}
	if rep.CORTX == nil || rep.CORTX.Action != "" {
		t.Errorf("cortx %+v", rep.CORTX)
	}
}
