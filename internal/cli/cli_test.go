package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var fixedEnd = time.Date(2026, 11, 29, 12, 0, 0, 123e6, time.UTC)

// fakeFetcher answers every request from canned captures.
type fakeFetcher struct {
	get    []capture.Capture
	probes []capture.Capture
	n      int
}

func (f *fakeFetcher) Get(context.Context, string) capture.Capture {
	c := f.get[f.n%len(f.get)]
	f.n++
	return c
}

func (f *fakeFetcher) RunProbes(context.Context, string) []capture.Capture { return f.probes }

func (f *fakeFetcher) Do(ctx context.Context, r target.Request) capture.Capture {
	return f.Get(ctx, r.URL)
}

const goldenURL = "https://seller.example/api/paid"

func fleetCapture(memo string) capture.Capture {
	body := fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111","resource":%q,"description":"one call","extra":{"usdc_token_account":"Token111","memo":%q}}]}`, goldenURL, memo)
	hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111","extra":{"memo":%q}}]}`, goldenURL, memo)
	return capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(body),
		Header: capture.Header{"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(hdr))}}}
}

// headerOnlyCapture is a header-only x402 v2 challenge: body {}, every field
// in the PAYMENT-REQUIRED header.
func headerOnlyCapture() capture.Capture {
	c := fleetCapture("pv-0000000001")
	c.Body = []byte(`{}`)
	return c
}

func runCLI(t *testing.T, f ops.Fetcher, terminal bool, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{
		Getenv:     func(k string) string { return env[k] },
		Stdin:      strings.NewReader(""),
		Stdout:     &out,
		Stderr:     &errb,
		NewFetcher: func(bool) ops.Fetcher { return f },
		Now:        func() time.Time { return fixedEnd },
		IsTerminal: func(io.Writer) bool { return terminal },
	}
	code = e.Run(context.Background(), args)
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	// The pins change whenever the corpus grows; the goldens pin the rendering.
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		got = strings.ReplaceAll(got, corpus.RefOf(svc).SHA256, "<corpus-pin>")
	}
	got = strings.ReplaceAll(got, corpus.LintRef().SHA256, "<corpus-pin>")
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden:\n%s", name, got)
	}
}

func closedProbes() []capture.Capture {
	challenge := fleetCapture("pv-0000000001")
	reject := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(`{"error":"invalid_payment"}`)}
	return []capture.Capture{challenge, {Outcome: capture.OK, Status: 402}, challenge, reject, reject, reject, reject}
}

func TestGoldenReports(t *testing.T) {
	tests := []struct {
		name string
		f    *fakeFetcher
		args []string
	}{
		{"check-populated", &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, []string{"check", goldenURL}},
		{"check-timeout", &fakeFetcher{get: []capture.Capture{{Outcome: capture.Timeout}}}, []string{"check", goldenURL}},
		{"memo-bound", &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001"), fleetCapture("pv-0000000002")}}, []string{"memo", goldenURL}},
		{"probe-closed", &fakeFetcher{probes: closedProbes()}, []string{"probe", goldenURL}},
		{"probe-not-probed", &fakeFetcher{probes: []capture.Capture{{Outcome: capture.Failed}}}, []string{"probe", goldenURL}},
		{"check-address-refused", &fakeFetcher{get: []capture.Capture{{Outcome: capture.Failed, Error: capture.AddressRefused}}}, []string{"check", goldenURL}},
		{"check-header-only-v2", &fakeFetcher{get: []capture.Capture{headerOnlyCapture()}}, []string{"check", goldenURL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.f, false, nil, tt.args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, tt.name+".txt", out)
			tt.f.n = 0
			out, _, _ = runCLI(t, tt.f, false, nil, append(tt.args, "--json")...)
			golden(t, tt.name+".json", out)
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("--json output does not parse: %v", err)
			}
		})
	}
}

func TestColourOnlyOnATerminalWithoutNoColor(t *testing.T) {
	f := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}
	out, _, _ := runCLI(t, f, true, nil, "check", goldenURL)
	if !strings.Contains(out, "\x1b[32mPOPULATED") {
		t.Errorf("no colour on a terminal: %q", out[:80])
	}
	out, _, _ = runCLI(t, f, true, map[string]string{"NO_COLOR": "1"}, "check", goldenURL)
	if strings.Contains(out, "\x1b[") {
		t.Error("colour despite NO_COLOR")
	}
	out, _, _ = runCLI(t, f, false, nil, "check", goldenURL)
	if strings.Contains(out, "\x1b[") {
		t.Error("colour when not a terminal")
	}
}

func TestExitStatuses(t *testing.T) {
	populated := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}
	reused := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}
	dirty := closedProbes()
	dirty[1] = capture.Capture{Outcome: capture.OK, Status: 200}
	tests := []struct {
		name string
		f    ops.Fetcher
		args []string
		want int
	}{
		{"verdict produced", populated, []string{"check", goldenURL}, ExitOK},
		{"expectation holds", populated, []string{"check", "--expect", "POPULATED", goldenURL}, ExitOK},
		{"expectation fails", populated, []string{"check", goldenURL, "--expect", "NOT-A-402"}, ExitUnexpected},
		{"unknown expected state", populated, []string{"check", "--expect", "GOOD", goldenURL}, ExitRefused},
		{"memo expectation fails", reused, []string{"memo", "--expect", "BOUND", goldenURL}, ExitUnexpected},
		{"probe closed", &fakeFetcher{probes: closedProbes()}, []string{"probe", "--expect-closed", goldenURL}, ExitOK},
		{"probe exposure", &fakeFetcher{probes: dirty}, []string{"probe", "--expect-closed", goldenURL}, ExitUnexpected},
		{"userinfo refused", populated, []string{"check", "https://u:p@seller.example/"}, ExitRefused},
		{"scheme refused", populated, []string{"memo", "ftp://seller.example/"}, ExitRefused},
		{"missing URL", populated, []string{"check"}, ExitRefused},
		{"unknown command", populated, []string{"frobnicate"}, ExitRefused},
		{"criteria", populated, []string{"criteria", "rail-probe"}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.f, false, nil, tt.args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.want, stderr)
			}
		})
	}
}

func TestRefusalNamesTheRule(t *testing.T) {
	_, stderr, _ := runCLI(t, &fakeFetcher{}, false, nil, "check", "https://@seller.example/")
	if !strings.Contains(stderr, "url_userinfo") {
		t.Errorf("stderr %q does not name the rule", stderr)
	}
}

// TestEndToEndOnLoopback runs the real guarded client against a loopback
// target: refused by the address guard by default, graded with --allow-private.
func TestEndToEndOnLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, "<html>pay me</html>")
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb}
	if code := e.Run(context.Background(), []string{"check", "--json", srv.URL}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		State   string `json:"state"`
		Factors struct {
			Reason *string `json:"reason"`
		} `json:"factors"`
	}
	json.Unmarshal(out.Bytes(), &rep)
	if rep.State != "NOT-A-402" || rep.Factors.Reason == nil || *rep.Factors.Reason != "fetch_failed" {
		t.Errorf("default guard: state %s reason %v", rep.State, rep.Factors.Reason)
	}
	if !strings.Contains(errb.String(), "--allow-private") {
		t.Errorf("no hint about --allow-private: %q", errb.String())
	}
	out.Reset()
	if code := e.Run(context.Background(), []string{"check", "--json", "--allow-private", srv.URL}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	json.Unmarshal(out.Bytes(), &rep)
	if rep.State != "HEADER-MISSING" {
		t.Errorf("--allow-private: state %s, want HEADER-MISSING", rep.State)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
