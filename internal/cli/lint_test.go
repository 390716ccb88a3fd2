package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

const lintURL = "https://seller.example/api/paid"

func v2Header(doc string) capture.Header {
	return capture.Header{"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(doc))}, "Cache-Control": {"no-store"}}
}

const cleanV2 = `{"x402Version":2,"resource":{"url":"https://seller.example/api/paid"},"accepts":[` +
	`{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000","asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4","maxTimeoutSeconds":60,"extra":{"feePayer":"EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"}},` +
	`{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`

// messyV1 differs from cleanV2: one entry, another amount, a CAIP-2 network.
const messyV1 = `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"20000","asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","payTo":"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4","resource":"https://seller.example/api/paid?x=1","maxTimeoutSeconds":7200,"extra":{"feePayer":"EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"}}]}`

func TestLintGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    capture.Capture
		code int
	}{
		{"lint-clean", capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(cleanV2), Body: []byte("{}")}, ExitOK},
		{"lint-findings", capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(cleanV2), Body: []byte(messyV1)}, ExitUnexpected},
		{"lint-not-402", capture.Capture{Outcome: capture.OK, Status: 200, Body: []byte("ok")}, ExitUnexpected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeFetcher{get: []capture.Capture{tc.c}}
			out, errOut, code := runCLI(t, f, false, nil, "lint", lintURL)
			if code != tc.code || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, tc.name+".txt", out)
			out, _, _ = runCLI(t, f, false, nil, "lint", "--json", lintURL)
			golden(t, tc.name+".json", out)
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"op", "rules", "url", "method", "status", "dialect", "entries", "findings", "conforms", "checked_at"} {
				if _, ok := m[k]; !ok {
					t.Errorf("report lacks %s", k)
				}
			}
			if f.n != 2 {
				t.Errorf("%d fetches for two runs", f.n)
			}
		})
	}
}

func TestLintExitStatuses(t *testing.T) {
	warnOnly := capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(cleanV2), Body: []byte("{}")}
	delete(warnOnly.Header, "Cache-Control")
	withErr := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte("{}")}
	for _, tc := range []struct {
		name string
		c    capture.Capture
		args []string
		code int
	}{
		{"warn only, default fail-on error", warnOnly, nil, ExitOK},
		{"warn only, fail-on warn", warnOnly, []string{"--fail-on", "warn"}, ExitUnexpected},
		{"error, fail-on never", withErr, []string{"--fail-on", "never"}, ExitOK},
		{"error, default", withErr, nil, ExitUnexpected},
		{"bad fail-on", warnOnly, []string{"--fail-on", "info"}, ExitRefused},
		{"bad method", warnOnly, []string{"--method", "PUT"}, ExitRefused},
		{"body without POST", warnOnly, []string{"--body", "{}"}, ExitRefused},
		{"body not JSON", warnOnly, []string{"--method", "POST", "--body", "{"}, ExitRefused},
		{"body file missing", warnOnly, []string{"--method", "POST", "--body", "@/nonexistent/body.json"}, ExitRefused},
		{"bad rpc URL", warnOnly, []string{"--solana-rpc", "ftp://node"}, ExitRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, &fakeFetcher{get: []capture.Capture{tc.c}}, false, nil, append(append([]string{"lint"}, tc.args...), lintURL)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
		})
	}
	_, errOut, code := runCLI(t, &fakeFetcher{}, false, nil, "lint", "https://user@seller.example/x")
	if code != ExitRefused || !strings.Contains(errOut, "userinfo") {
		t.Errorf("refused URL: exit %d, %q", code, errOut)
	}
}

// TestLintPOST: --method POST sends --body (inline or @FILE, default {}) as
// application/json in one request, through the guarded client.
func TestLintPOST(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
		w.Header().Set("Payment-Required", base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(cleanV2, "https://seller.example/api/paid", "http://"+r.Host+"/api/paid"))))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(402)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(file, []byte(`{"city":"lisbon"}`), 0o644)
	var out strings.Builder
	for _, args := range [][]string{
		{"lint", "--allow-private", "--method", "POST", srv.URL + "/api/paid"},
		{"lint", "--allow-private", "--method", "post", "--body", `{"q":1}`, srv.URL + "/api/paid"},
		{"lint", "--allow-private", "--method", "POST", "--body", "@" + file, "--json", srv.URL + "/api/paid"},
	} {
		out.Reset()
		e := Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: io.Discard}
		if code := e.Run(context.Background(), args); code != ExitOK {
			t.Errorf("%v: exit %d\n%s", args, code, out.String())
		}
	}
	want := []string{`POST application/json {}`, `POST application/json {"q":1}`, `POST application/json {"city":"lisbon"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q", got)
	}
	if !strings.Contains(out.String(), `"method": "POST"`) {
		t.Errorf("report %s", out.String())
	}
}

// TestLintChain: --solana-rpc with a loopback fake node adds the chain
// findings; a node that fails is an info finding and exit 0.
func TestLintChain(t *testing.T) {
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Method string }
		json.NewDecoder(r.Body).Decode(&req)
		switch req.Method {
		case "getGenesisHash":
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"}`)
		default: // no account anywhere: the asset is not a mint
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1},"value":null}}`)
		}
	}))
	defer node.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	c := capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(cleanV2), Body: []byte("{}")}
	out, _, code := runCLI(t, &fakeFetcher{get: []capture.Capture{c}}, false, nil, "lint", "--allow-private", "--json", "--solana-rpc", node.URL, lintURL)
	if code != ExitUnexpected || !strings.Contains(out, `"svm_asset_not_mint"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, &fakeFetcher{get: []capture.Capture{c}}, false, nil, "lint", "--allow-private", "--json", "--solana-rpc", down.URL, "--evm-rpc", down.URL, lintURL)
	if code != ExitOK || strings.Count(out, `"chain_unavailable"`) != 2 || strings.Contains(out, down.URL) {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestCriteriaX402Lint(t *testing.T) {
	out, errOut, code := runCLI(t, &fakeFetcher{}, false, nil, "criteria", "x402-lint")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	var doc struct {
		ID     string                  `json:"id"`
		Corpus struct{ SHA256 string } `json:"corpus"`
		Rules  []struct{ ID, Severity string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.ID != "x402-lint/v1" || len(doc.Corpus.SHA256) != 64 || len(doc.Rules) < 50 {
		t.Errorf("%v %+v", err, doc)
	}
}

// TestCriteriaX402LintOrigin: the document rules are published with their
// citations (the discovery draft, x402scan's DISCOVERY.md); the profiles
// document prints with every profile rule's dated source.
func TestCriteriaX402LintOrigin(t *testing.T) {
	out, _, code := runCLI(t, &fakeFetcher{}, false, nil, "criteria", "x402-lint")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{`"id": "listing_drift"`, `"id": "listed_not_402"`, `"id": "listing_price_mismatch"`, `"id": "discovery_missing"`,
		"specs/extensions/well-known-discovery.md", "x402scan docs/DISCOVERY.md"} {
		if !strings.Contains(out, s) {
			t.Errorf("criteria x402-lint lacks %s", s)
		}
	}
	out, _, code = runCLI(t, &fakeFetcher{}, false, nil, "criteria", "x402-lint-profiles")
	var doc struct {
		ID       string
		Profiles []struct {
			Name  string
			Rules []struct{ ID string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || doc.ID != "x402-lint-profiles/v1" || len(doc.Profiles) != 2 {
		t.Errorf("profiles: %v exit %d %+v", err, code, doc)
	}
}
