package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/target"
)

func loopbackFetcher() *target.Client {
	return target.New(target.Options{AllowPrivate: true, UserAgent: "payability/test"})
}

// openSeller challenges unpaid GETs and serves any request with a payment
// header: it fails open.
func openSeller(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PAYMENT-SIGNATURE") != "" || r.Header.Get("X-PAYMENT") != "" {
			w.Write([]byte("paid content"))
			return
		}
		doc := `{"x402Version":2,"resource":{"url":"http://` + r.Host + `/"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111","maxTimeoutSeconds":60}]}`
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(doc)))
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPreflightExitStatuses(t *testing.T) {
	free := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("free")) }))
	defer free.Close()
	open := openSeller(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderrIn string
	}{
		{"a free endpoint is STOP not_402", []string{"preflight", free.URL}, ExitPreflightStop, []string{"STOP  do not pay", "not_402: the gated method never answered 402", "lint fetch     GET  (200)", "lint fetch     POST (200)"}, ""},
		{"a fail-open seller is STOP fail_open", []string{"preflight", open.URL}, ExitPreflightStop, []string{"STOP", "fail_open:"}, ""},
		{"bad --method", []string{"preflight", "--method", "PUT", open.URL}, exitUsage, nil, "--method must be GET or POST"},
		{"bad --network", []string{"preflight", "--network", "base", open.URL}, exitUsage, nil, "--network must be a CAIP-2 chain id"},
		{"bad --max-amount", []string{"preflight", "--max-amount", "1.5", open.URL}, exitUsage, nil, "--max-amount must be a decimal integer"},
		{"bad --body", []string{"preflight", "--body", "{nope", open.URL}, exitUsage, nil, "--body is not JSON"},
		{"bad --service-id", []string{"preflight", "--service-id", "../x", open.URL}, exitUsage, nil, "--service-id is not a CORTX service id"},
		{"no URL", []string{"preflight"}, exitUsage, nil, "give exactly one URL"},
		{"a refused URL", []string{"preflight", "ftp://seller.example/"}, ExitRefused, nil, "payability:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, loopbackFetcher(), false, nil, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, out, errOut)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if !strings.Contains(errOut, tt.stderrIn) {
				t.Errorf("stderr lacks %q: %s", tt.stderrIn, errOut)
			}
		})
	}
}

func TestPreflightSignedRecordVerifies(t *testing.T) {
	dir := t.TempDir()
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "key.pem")
	if err := report.SaveKeyFile(keyPath, key); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, loopbackFetcher(), false, nil, "preflight", "--json", "--sign-key", keyPath, openSeller(t).URL)
	if code != ExitPreflightStop {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["document"] != "x402-preflight/v1" || rec["decision"] != "STOP" || rec["signature"] == nil {
		t.Fatalf("record %v", rec)
	}
	recPath := filepath.Join(dir, "record.json")
	os.WriteFile(recPath, []byte(out), 0o600)
	vout, verr, vcode := runCLI(t, nil, false, nil, "verify", recPath, "--key", keyPath)
	if vcode != ExitOK || !strings.Contains(vout, "VERIFIED: signed by the current key (kid "+key.Kid+")") {
		t.Fatalf("verify exit %d: %s %s", vcode, vout, verr)
	}
	tampered := strings.Replace(out, `"STOP"`, `"GO"`, 1)
	os.WriteFile(recPath, []byte(tampered), 0o600)
	if _, _, vcode := runCLI(t, nil, false, nil, "verify", recPath, "--key", keyPath); vcode != ExitUnexpected {
		t.Errorf("a tampered record verified (exit %d)", vcode)
	}
	if _, _, vcode := runCLI(t, nil, false, nil, "verify", recPath); vcode != exitUsage {
		t.Errorf("verify with no key: exit %d", vcode)
	}
}

func TestTermsHashCommand(t *testing.T) {
	dir := t.TempDir()
	doc := `{"x402Version":2,"resource":{"url":"https://seller.example/api"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60},{"scheme":"exact","network":"eip155:8453"}]}`
	canon := `{"amount":"1","asset":"0xA","maxTimeoutSeconds":60,"network":"eip155:8453","payTo":"0xB","scheme":"exact","url":"https://seller.example/api"}`
	want := sha256Hex(canon)
	header := filepath.Join(dir, "header.txt")
	os.WriteFile(header, []byte(base64.StdEncoding.EncodeToString([]byte(doc))+"\n"), 0o600)
	body := filepath.Join(dir, "body.json")
	os.WriteFile(body, []byte(doc), 0o600)
	for _, f := range []string{header, body} {
		out, errOut, code := runCLI(t, nil, false, nil, "terms-hash", f)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || lines[0] != "header accepts[0] v2 exact eip155:8453  "+want || !strings.HasPrefix(lines[1], "header accepts[1] v2 exact eip155:8453  -") {
			t.Errorf("output:\n%s", out)
		}
	}
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, []byte("not a challenge"), 0o600)
	if _, errOut, code := runCLI(t, nil, false, nil, "terms-hash", garbage); code != exitUsage || strings.Contains(errOut, "not a challenge") {
		t.Errorf("garbage: exit %d, stderr %q", code, errOut)
	}
	incomplete := filepath.Join(dir, "incomplete")
	os.WriteFile(incomplete, []byte(`{"x402Version":1,"accepts":[{"scheme":"exact"}]}`), 0o600)
	if _, _, code := runCLI(t, nil, false, nil, "terms-hash", incomplete); code != ExitUnexpected {
		t.Errorf("incomplete: exit %d", code)
	}
}

func TestCriteriaX402Preflight(t *testing.T) {
	out, _, code := runCLI(t, nil, false, nil, "criteria", "x402-preflight")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var d struct {
		DocumentID string `json:"document_id"`
		Corpus     struct {
			SHA256 string `json:"sha256"`
		} `json:"corpus"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.DocumentID != "x402-preflight/v1" || len(d.Corpus.SHA256) != 64 || d.Corpus.SHA256 == strings.Repeat("0", 64) {
		t.Errorf("document %+v: %v", d, err)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// preflightScene builds a record from captures (the decision is preflight's;
// these goldens pin the rendering).
func preflightScene(decide func(in *preflight.Input)) ops.PreflightReport {
	doc := `{"x402Version":2,"error":"Payment required","resource":{"url":"https://seller.example/api/paid"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`
	unpaid := capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(doc))}}, Body: []byte("{}")}
	ok := func(status int, body string) capture.Capture {
		return capture.Capture{Outcome: capture.OK, Status: status, Header: capture.Header{}, Body: []byte(body)}
	}
	in := preflight.Input{
		Lint:       []preflight.Fetch{{Method: "GET", Capture: unpaid}},
		LintResult: lint.Result{Status: 402, Conforms: true, Findings: []lint.Finding{}, Entries: []lint.EntrySummary{{Index: 0, Leg: lint.LegHeader, X402Version: 2, Scheme: "exact", Network: "eip155:8453"}}},
		Second:     &unpaid,
		Answers: []preflight.Answer{
			{ID: preflight.ProbeP1, Method: "GET", Capture: ok(402, `{"error":"invalid_exact_evm_payload_signature"}`)},
			{ID: preflight.ProbeP2, Method: "GET", Capture: ok(400, "")},
			{ID: preflight.ProbeHead, Method: "HEAD", Capture: ok(402, "")},
			{ID: preflight.ProbeOther, Method: "POST", Capture: ok(405, "")},
		},
	}
	decide(&in)
	return ops.NewPreflightReport(goldenURL, fixedEnd, preflight.Evaluate(in))
}

func TestPreflightGoldens(t *testing.T) {
	tests := []struct {
		name string
		mut  func(in *preflight.Input)
	}{
		{"preflight-go", func(*preflight.Input) {}},
		{"preflight-hold", func(in *preflight.Input) {
			in.Answers[0].Capture = in.Lint[0].Capture
			in.Answers[2].Capture.Status = 200
			in.CORTX = &preflight.CORTX{Action: "unverified", Rule: "not_monitored"}
		}},
		{"preflight-stop", func(in *preflight.Input) { in.Answers[1].Capture.Status = 200 }},
		{"preflight-not-402", func(in *preflight.Input) {
			in.Lint = []preflight.Fetch{{Method: "GET", Capture: capture.Capture{Outcome: capture.Timeout}}, {Method: "POST", Capture: capture.Capture{Outcome: capture.OK, Status: 200}}}
		}},
		{"preflight-unreachable", func(in *preflight.Input) {
			dead := capture.Capture{Outcome: capture.Failed, Error: capture.DNSFailed}
			in.Lint = []preflight.Fetch{{Method: "GET", Capture: dead}, {Method: "POST", Capture: dead}}
		}},
		{"preflight-dual-dialect-stop", func(in *preflight.Input) {
			// A v2 header and a v1 body: the v2 leg refuses, the v1 leg serves
			// any X-PAYMENT.
			u := in.Lint[0].Capture
			u.Body = []byte(`{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"1000","resource":"https://seller.example/api/paid","description":"d","mimeType":"application/json","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60}]}`)
			in.Lint[0].Capture, in.Second = u, &u
			in.LintResult.Entries = append(in.LintResult.Entries, lint.EntrySummary{Index: 0, Leg: lint.LegBody, X402Version: 1, Scheme: "exact", Network: "base"})
			served := capture.Capture{Outcome: capture.OK, Status: 200, Header: capture.Header{}, Body: []byte("paid content")}
			in.Answers = append(in.Answers,
				preflight.Answer{ID: preflight.ProbeP1, Dialect: 1, Method: "GET", Capture: served},
				preflight.Answer{ID: preflight.ProbeP2, Dialect: 1, Method: "GET", Capture: served})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := preflightScene(tt.mut)
			var b bytes.Buffer
			RenderPreflight(&b, rep, false)
			golden(t, tt.name+".txt", b.String())
			js, err := PreflightJSON(rep, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".json", strings.ReplaceAll(string(js), corpus.PreflightRef().SHA256, "<corpus-pin>"))
		})
	}
}

// TestREADMEMainJobCommand: the quick start's main-job command parses and
// runs as written (against a fetcher that answers nothing, so no packet
// leaves the machine): STOP unreachable, exit 20.
func TestREADMEMainJobCommand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "go run ./cmd/payability "); ok {
			args = strings.Fields(rest)
			break
		}
	}
	if len(args) == 0 || args[0] != "preflight" {
		t.Fatalf("the README's main job is %v, want preflight", args)
	}
	out, errOut, code := runCLI(t, deadFetcher{}, false, nil, args...)
	if code != ExitPreflightStop || !strings.Contains(out, "unreachable") || !strings.Contains(out, "lint fetch     GET  (failed: dns_failed)") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// deadFetcher answers every request as a failed DNS look-up, sending nothing.
type deadFetcher struct{}

func (deadFetcher) Get(context.Context, string) capture.Capture {
	return capture.Capture{Outcome: capture.Failed, Error: capture.DNSFailed}
}
func (d deadFetcher) RunProbes(ctx context.Context, url string) []capture.Capture {
	return []capture.Capture{d.Get(ctx, url)}
}
func (d deadFetcher) Do(ctx context.Context, r target.Request) capture.Capture {
	return d.Get(ctx, r.URL)
}
