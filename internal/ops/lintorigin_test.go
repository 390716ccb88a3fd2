package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

// fanOut is a loopback origin whose /.well-known/x402 lists n resources
// (/r0 ... /r{n-1}); each answers a clean 402 to POST and 405 to GET, so
// every listing is reached by the method fallback. It counts the requests
// by method and path.
func fanOut(t *testing.T, n int) (*httptest.Server, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/.well-known/x402" {
			var urls []string
			for i := 0; i < n; i++ {
				urls = append(urls, fmt.Sprintf("http://%s/r%d", r.Host, i))
			}
			b, _ := json.Marshal(map[string]any{"version": 1, "resources": urls})
			w.Write(b)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/r") {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("PAYMENT-REQUIRED", challengeFor("http://"+r.Host+r.URL.Path))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(402)
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

// TestLintOriginCapIsTheEdge: 32 listed resources are all linted, with no
// cap finding; 33 cost the origin exactly 32 resources' requests and name
// the 33rd. Every resource is reached by GET then POST (the fallback).
func TestLintOriginCapIsTheEdge(t *testing.T) {
	for _, n := range []int{lint.MaxOriginResources, lint.MaxOriginResources + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			srv, counts := fanOut(t, n)
			rep, err := runner(t).LintOrigin(context.Background(), srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Resources) != lint.MaxOriginResources || !rep.Conforms {
				t.Fatalf("%d resources, conforms %v, findings %+v", len(rep.Resources), rep.Conforms, rep.Findings)
			}
			c := counts()
			gets, posts := 0, 0
			for k, v := range c {
				switch {
				case strings.HasPrefix(k, "GET /r"):
					gets += v
				case strings.HasPrefix(k, "POST /r"):
					posts += v
				}
			}
			if gets != lint.MaxOriginResources || posts != lint.MaxOriginResources || c["GET /.well-known/x402"] != 1 || c["GET /.well-known/x402.json"] != 1 {
				t.Errorf("requests %v", c)
			}
			capped := 0
			for _, f := range rep.Findings {
				if f.Rule == "discovery_resources_capped" {
					capped++
					if f.Field != fmt.Sprintf("resources[%d]", lint.MaxOriginResources) {
						t.Errorf("capped at %s", f.Field)
					}
				}
			}
			if want := n - lint.MaxOriginResources; capped != want {
				t.Errorf("%d capped findings, want %d", capped, want)
			}
			for _, r := range rep.Resources {
				if r.Method != http.MethodPost || len(r.Listed) != 1 || r.Listed[0].Leg != lint.LegWellKnown {
					t.Errorf("resource %s %s listed %+v", r.URL, r.Method, r.Listed)
				}
			}
		})
	}
}

// TestLintOriginOpenAPI: --openapi names a document whose paid operations
// are linted with their methods and example bodies; a refused --openapi URL
// and a non-origin are errors, before any request.
func TestLintOriginOpenAPI(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.json":
			w.Write([]byte(`{"openapi":"3.1.0","paths":{"/search":{"post":{"x-payment-info":{"price":{"mode":"fixed","currency":"USD","amount":"0.000001"}},` +
				`"requestBody":{"content":{"application/json":{"example":{"q":"x"}}}}}},"/free":{"get":{}}}}`))
		case "/search":
			var b strings.Builder
			buf := make([]byte, 512)
			n, _ := r.Body.Read(buf)
			b.Write(buf[:n])
			mu.Lock()
			bodies = append(bodies, r.Method+" "+b.String())
			mu.Unlock()
			w.Header().Set("PAYMENT-REQUIRED", challengeFor("http://"+r.Host+r.URL.Path))
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(402)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := runner(t).LintOrigin(context.Background(), srv.URL+"/", srv.URL+"/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Conforms || len(rep.Resources) != 1 || len(rep.Findings) != 0 || rep.Origin != srv.URL {
		t.Fatalf("report %+v", rep)
	}
	if strings.Join(bodies, "|") != `POST {"q":"x"}` {
		t.Errorf("requests %q", bodies)
	}
	if rep.Outcome() != LintConforms || rep.Common().URL != srv.URL || rep.Mode != ModeOrigin {
		t.Errorf("envelope %+v", rep.Common())
	}
	var pe *target.PolicyError
	if _, err := runner(t).LintOrigin(context.Background(), srv.URL, "ftp://x.example/o.json"); !errors.As(err, &pe) {
		t.Errorf("openapi policy: %v", err)
	}
	for _, o := range []string{srv.URL + "/path", srv.URL + "?q", srv.URL + "#f"} {
		if _, err := runner(t).LintOrigin(context.Background(), o, ""); !errors.Is(err, ErrNotAnOrigin) {
			t.Errorf("%s: %v", o, err)
		}
	}
}

// TestLintOriginCustody: the report carries no fetched value: a listed
// description, a price and a payTo that only the documents hold never reach
// its JSON; the resource URL is reported as the endpoint linted.
func TestLintOriginCustody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/x402.json":
			fmt.Fprintf(w, `{"x402Version":2,"items":[{"resource":{"url":"http://%s/r","description":"SECRET-DESCRIPTION"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"987654321","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x00000000000000000000000000000000DeaDBeef"}]}]}`, r.Host)
		case "/r":
			w.Header().Set("PAYMENT-REQUIRED", challengeFor("http://"+r.Host+r.URL.Path))
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(402)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := runner(t).LintOrigin(context.Background(), srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	for _, s := range []string{"SECRET-DESCRIPTION", "987654321", "DeaDBeef", "deadbeef"} {
		if strings.Contains(string(b), s) {
			t.Errorf("report carries %s", s)
		}
	}
	if !strings.Contains(string(b), `"rule":"listing_drift"`) || !strings.Contains(string(b), `"rule":"listing_price_mismatch"`) {
		t.Errorf("report %s", b)
	}
}

// TestLintOriginGuard: without --allow-private the address guard refuses
// the loopback origin at dial time: nothing is read, discovery_missing.
func TestLintOriginGuard(t *testing.T) {
	srv, counts := fanOut(t, 1)
	r := Runner{Fetcher: target.New(target.Options{}), Now: runner(t).Now}
	rep, err := r.LintOrigin(context.Background(), srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(counts()) != 0 || len(rep.Findings) != 1 || rep.Findings[0].Rule != "discovery_missing" || rep.Conforms {
		t.Errorf("report %+v, requests %v", rep, counts())
	}
}
