package ops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

func challengeFor(u string) string {
	doc := `{"x402Version":2,"resource":{"url":"` + u + `"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`
	return base64.StdEncoding.EncodeToString([]byte(doc))
}

func TestLintOneRequestPerMethod(t *testing.T) {
	var n atomic.Int64
	var last atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, _ := io.ReadAll(r.Body)
		last.Store(r.Method + " " + r.Header.Get("Content-Type") + " " + string(b))
		w.Header().Set("PAYMENT-REQUIRED", challengeFor("http://"+r.Host+r.URL.Path))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(402)
	}))
	defer srv.Close()
	r := runner(t)
	ctx := context.Background()
	rep, err := r.Lint(ctx, srv.URL+"/paid", "", nil)
	if err != nil || !rep.Conforms || rep.Method != "GET" || n.Load() != 1 || rep.Status != 402 {
		t.Fatalf("GET: %v %+v (%d requests)", err, rep, n.Load())
	}
	if rep.Op != OpLint || rep.Rules != LintRulesRef() || rep.Rules.CorpusSHA256 != corpus.LintRef().SHA256 ||
		rep.CheckedAt != "2026-11-29T01:02:03.004Z" || rep.Outcome() != LintConforms || rep.Common().Op != OpLint {
		t.Errorf("report %+v", rep)
	}
	if _, err := r.Lint(ctx, srv.URL+"/paid", "POST", nil); err != nil || last.Load() != "POST application/json {}" || n.Load() != 2 {
		t.Errorf("POST default body: %v %v", err, last.Load())
	}
	if _, err := r.Lint(ctx, srv.URL+"/paid", "POST", []byte(`{"a":1}`)); err != nil || last.Load() != `POST application/json {"a":1}` {
		t.Errorf("POST body: %v %v", err, last.Load())
	}
	if _, err := r.Lint(ctx, srv.URL, "DELETE", nil); !errors.Is(err, ErrLintMethod) {
		t.Errorf("DELETE: %v", err)
	}
	var pe *target.PolicyError
	if _, err := r.Lint(ctx, strings.Replace(srv.URL, "http://", "http://u@", 1), "GET", nil); !errors.As(err, &pe) {
		t.Errorf("policy: %v", err)
	}
	if n.Load() != 3 {
		t.Errorf("%d requests in all, want 3", n.Load())
	}
	b, _ := json.Marshal(rep)
	for _, k := range []string{`"op":"lint"`, `"rules":{"id":"x402-lint/v1"`, `"corpus_sha256"`, `"dialect":{"v1_body":false,"v2_header":true}`, `"checked_at"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("report JSON lacks %s: %s", k, b)
		}
	}
	if rep2, err := r.Run(ctx, OpLint, srv.URL+"/paid"); err != nil || rep2.Outcome() != LintConforms {
		t.Errorf("Run(lint): %v", err)
	}
}

// getOnly is a Fetcher that cannot send POST.
type getOnly struct{}

func (getOnly) Get(context.Context, string) capture.Capture {
	return capture.Capture{Outcome: capture.Failed}
}
func (getOnly) RunProbes(context.Context, string) []capture.Capture { return nil }

func TestLintPOSTNeedsARequester(t *testing.T) {
	_, err := Runner{Fetcher: getOnly{}}.Lint(context.Background(), "https://seller.example/x", "POST", nil)
	if !errors.Is(err, ErrNoRequester) {
		t.Errorf("%v", err)
	}
}

// fakeChain records the queries and answers with one observation each.
type fakeChain struct{ qs []lint.ChainQuery }

func (f *fakeChain) Observe(_ context.Context, qs []lint.ChainQuery) lint.ChainFacts {
	f.qs = qs
	var facts lint.ChainFacts
	for _, q := range qs {
		facts.Observations = append(facts.Observations, lint.ChainObservation{Leg: q.Leg, Entry: q.Entry, Family: q.Family, Name: "USDC", NameRead: true, Version: "2", VersionRead: true})
	}
	return facts
}

func TestLintChainThroughTheReader(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("PAYMENT-REQUIRED", challengeFor("http://"+r.Host+r.URL.Path))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(402)
	}))
	defer srv.Close()
	fc := &fakeChain{}
	r := runner(t)
	r.Chain = fc
	rep, err := r.Lint(context.Background(), srv.URL+"/p", "GET", nil)
	if err != nil || len(fc.qs) != 1 || fc.qs[0].Family != lint.FamilyEVM {
		t.Fatalf("%v %+v", err, fc.qs)
	}
	if rep.Conforms || len(rep.Findings) != 1 || rep.Findings[0].Rule != "evm_domain_mismatch" || rep.Findings[0].Field != "accepts[0].extra.name" {
		t.Errorf("findings %+v", rep.Findings)
	}
	if errs, warns := rep.Counts(); errs != 1 || warns != 0 || rep.Outcome() != LintDoesNotConform {
		t.Errorf("counts %d %d", errs, warns)
	}
}
