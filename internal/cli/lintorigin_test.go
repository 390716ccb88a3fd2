package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// The listed terms of every fixture resource: cleanV2's two entries.
const (
	fixtureBasePayTo  = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	fixtureOtherPayTo = "0x1111111111111111111111111111111111111111"
)

// originFixture is a loopback seller origin whose /.well-known/x402.json
// lists five resources: /r1 and /r2 answer the listed terms, /r3 pays
// another payTo on its Base entry, /r4 charges 20000 instead of the listed
// 10000 on its Solana entry, and /r5 answers 200. /.well-known/x402 is 404.
// It records the requests it gets.
func originFixture(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		origin := "http://" + r.Host
		switch r.URL.Path {
		case "/.well-known/x402.json":
			var items []string
			for i := 1; i <= 5; i++ {
				var doc map[string]any
				json.Unmarshal([]byte(cleanV2), &doc)
				acc, _ := json.Marshal(doc["accepts"])
				items = append(items, fmt.Sprintf(`{"resource":{"url":"%s/r%d"},"type":"http","accepts":%s,"input":{"method":"GET","routeTemplate":"/r%d"}}`, origin, i, acc, i))
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"x402Version":2,"lastUpdated":1781555511,"items":[`+strings.Join(items, ",")+`]}`)
		case "/r1", "/r2", "/r3", "/r4":
			doc := strings.ReplaceAll(cleanV2, "https://seller.example/api/paid", origin+r.URL.Path)
			switch r.URL.Path {
			case "/r3":
				doc = strings.ReplaceAll(doc, fixtureBasePayTo, fixtureOtherPayTo)
			case "/r4":
				doc = strings.Replace(doc, `"amount":"10000"`, `"amount":"20000"`, 1)
			}
			w.Header().Set("Payment-Required", base64.StdEncoding.EncodeToString([]byte(doc)))
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(402)
			io.WriteString(w, "{}")
		case "/r5":
			io.WriteString(w, "free")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// runOrigin runs lint --origin against a loopback origin with the real
// target client and the fixed clock; the origin's address in the output is
// replaced by http://origin.test so the goldens do not name a port.
func runOrigin(t *testing.T, srvURL string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Now: func() time.Time { return fixedEnd }, IsTerminal: func(io.Writer) bool { return false }}
	code := e.Run(context.Background(), append([]string{"lint", "--allow-private", "--origin", srvURL}, args...))
	host := strings.TrimPrefix(srvURL, "http://")
	norm := func(s string) string {
		s = strings.ReplaceAll(s, srvURL, "http://origin.test")
		return strings.ReplaceAll(s, host, "origin.test")
	}
	return norm(out.String()), norm(errb.String()), code
}

// TestLintOriginDoneWhen: the fixture gives exactly its findings —
// two drifts and one resource that is not a 402, nothing else — in every
// format, pinned by golden files.
func TestLintOriginDoneWhen(t *testing.T) {
	srv, got := originFixture(t)
	out, errOut, code := runOrigin(t, srv.URL, "--json")
	if code != ExitUnexpected || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep struct {
		Findings []struct {
			Rule, Leg, Field string
			Entry            *int
		}
		Resources []struct {
			URL      string
			Findings []struct{ Rule, Leg, Field string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range rep.Findings {
		all = append(all, f.Rule+"@"+f.Leg+":"+f.Field)
	}
	for _, r := range rep.Resources {
		for _, f := range r.Findings {
			all = append(all, strings.TrimPrefix(r.URL, "http://origin.test")+" "+f.Rule+"@"+f.Leg+":"+f.Field)
		}
	}
	want := []string{
		"listing_drift@manifest:items[2].accepts[1].payTo",
		"listing_price_mismatch@manifest:items[3].accepts[0].amount",
		"listed_not_402@manifest:items[4]",
		"/r5 status_not_402@http:status",
	}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
	if len(rep.Resources) != 5 {
		t.Errorf("%d resources linted", len(rep.Resources))
	}
	golden(t, "lint-origin.json", out)
	for _, f := range []string{"text", "github", "sarif", "junit", "markdown"} {
		out, _, code := runOrigin(t, srv.URL, "--format", f)
		if code != ExitUnexpected {
			t.Errorf("%s: exit %d", f, code)
		}
		if f == "sarif" {
			// Fingerprints hash the endpoint URL, which names the fixture's port.
			out = regexp.MustCompile(`("payabilityFinding/v2": "|"primaryLocationLineHash": ")[0-9a-f]+`).ReplaceAllString(out, "${1}<fingerprint>")
		}
		ext := map[string]string{"text": "txt", "github": "github.txt", "sarif": "sarif", "junit": "junit.xml", "markdown": "md"}[f]
		golden(t, "lint-origin."+ext, out)
	}
	// Each run reads both well-known documents and the five resources once.
	if n := len(*got); n != 6*7 {
		t.Errorf("%d requests for six runs", n)
	}
}

// TestLintOriginFormatsToFiles: several formats at once, each to its file,
// carry the same findings.
func TestLintOriginFormatsToFiles(t *testing.T) {
	srv, _ := originFixture(t)
	dir := t.TempDir()
	sarif := filepath.Join(dir, "o.sarif")
	_, _, code := runOrigin(t, srv.URL, "--format", "sarif="+sarif, "--format", "overall")
	if code != ExitUnexpected {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(sarif)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"listing_drift", "listing_price_mismatch", "listed_not_402", "status_not_402"} {
		if !bytes.Contains(b, []byte(`"ruleId": "`+id+`"`)) {
			t.Errorf("sarif lacks %s", id)
		}
	}
}

// TestLintOriginUsage: the origin flags' usage errors exit 2.
func TestLintOriginUsage(t *testing.T) {
	for _, args := range [][]string{
		{"lint", "--openapi", "https://a.example/openapi.json"},
		{"lint", "--origin", "https://a.example", "https://a.example/x"},
		{"lint", "--origin", "https://a.example", "--method", "POST"},
		{"lint", "--origin", "https://a.example/path"},
		{"lint", "--origin", "ftp://a.example"},
	} {
		_, _, code := runCLI(t, &fakeFetcher{}, false, nil, args...)
		if code != ExitRefused {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// withBazaar is cleanV2 with a bazaar extension whose info validates.
func withBazaar(url string) string {
	return strings.Replace(strings.ReplaceAll(cleanV2, "https://seller.example/api/paid", url), `"accepts":`,
		`"extensions":{"bazaar":{"info":{"input":{"type":"http","method":"GET"}},"schema":{"type":"object","required":["input"]}}},"accepts":`, 1)
}

// TestLintProfileX402scan: --profile x402scan flags an http resource and a
// missing input schema, and nothing on a compliant one; without the flag
// the same challenge exits 0 and the x402-lint verdict is the same.
func TestLintProfileX402scan(t *testing.T) {
	const httpURL = "http://seller.example/api/paid"
	plain := capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(strings.ReplaceAll(cleanV2, "https://seller.example/api/paid", httpURL)), Body: []byte("{}")}
	compliant := capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(withBazaar(lintURL)), Body: []byte("{}")}
	type rep struct {
		Conforms        bool
		Profile         string
		ProfileFindings []struct{ Rule, Field string } `json:"profile_findings"`
	}
	run := func(c capture.Capture, url string, args ...string) (rep, int, string) {
		out, errOut, code := runCLI(t, &fakeFetcher{get: []capture.Capture{c}}, false, nil, append(append([]string{"lint", "--json"}, args...), url)...)
		var r rep
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s %s", err, out, errOut)
		}
		return r, code, out
	}
	r, code, _ := run(plain, httpURL, "--profile", "x402scan")
	var got []string
	for _, f := range r.ProfileFindings {
		got = append(got, f.Rule+":"+f.Field)
	}
	if !r.Conforms || code != ExitUnexpected || r.Profile != "x402scan" ||
		strings.Join(got, " ") != "x402scan_https_required:url x402scan_input_schema_missing:extensions.bazaar.info.input" {
		t.Errorf("http, no schema: conforms %v exit %d findings %v", r.Conforms, code, got)
	}
	without, code, out := run(plain, httpURL)
	if !without.Conforms || code != ExitOK || strings.Contains(out, "profile") {
		t.Errorf("without the flag: conforms %v exit %d\n%s", without.Conforms, code, out)
	}
	r, code, _ = run(compliant, lintURL, "--profile", "x402scan")
	if !r.Conforms || code != ExitOK || len(r.ProfileFindings) != 0 || r.Profile != "x402scan" {
		t.Errorf("compliant: %+v exit %d", r, code)
	}
	r, code, _ = run(compliant, lintURL, "--profile", "bazaar")
	if code != ExitOK || len(r.ProfileFindings) != 0 {
		t.Errorf("bazaar compliant: %+v exit %d", r, code)
	}
	// Text and SARIF carry the profile's findings under their own rule ids.
	f := &fakeFetcher{get: []capture.Capture{plain}}
	text, _, _ := runCLI(t, f, false, nil, "lint", "--profile", "x402scan", httpURL)
	golden(t, "lint-profile-x402scan.txt", text)
	sarif, _, _ := runCLI(t, f, false, nil, "lint", "--profile", "x402scan", "--format", "sarif", httpURL)
	for _, id := range []string{`"ruleId": "x402scan_https_required"`, `"ruleId": "x402scan_input_schema_missing"`, `"id": "x402scan_network_unsupported"`} {
		if !strings.Contains(sarif, id) {
			t.Errorf("sarif lacks %s", id)
		}
	}
	if _, _, code := runCLI(t, f, false, nil, "lint", "--profile", "nope", httpURL); code != ExitRefused {
		t.Errorf("unknown profile: exit %d", code)
	}
}

// TestScanLintOrigin: scan --op lint --origin lints every origin of its
// input as lint --origin does, one record per origin; an entry that is not
// an origin is refused (not_an_origin); the machine formats carry the
// resources' findings under the origin, the field prefixed by the path.
func TestScanLintOrigin(t *testing.T) {
	srv, _ := originFixture(t)
	in := filepath.Join(t.TempDir(), "origins.txt")
	os.WriteFile(in, []byte(srv.URL+"\n"+srv.URL+"/not-an-origin\n"), 0o644)
	gh := filepath.Join(t.TempDir(), "gh.txt")
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Now: func() time.Time { return fixedEnd }, IsTerminal: func(io.Writer) bool { return false }}
	code := e.Run(context.Background(), []string{"scan", "--op", "lint", "--origin", "--allow-private", "--quiet", "--fail-on", "error", "--format", "github=" + gh, in})
	if code != ExitUnexpected {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	var origins, refused int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec struct {
			Refused *struct{ Rule string }
			Report  *struct {
				Mode      string
				Findings  []struct{ Rule string }
				Resources []json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Report != nil:
			origins++
			if rec.Report.Mode != "origin" || len(rec.Report.Findings) != 3 || len(rec.Report.Resources) != 5 {
				t.Errorf("record %s", line)
			}
		case rec.Refused != nil:
			refused++
			if rec.Refused.Rule != "not_an_origin" {
				t.Errorf("refusal %s", line)
			}
		}
	}
	if origins != 1 || refused != 1 {
		t.Errorf("%d origins, %d refused\n%s", origins, refused, out.String())
	}
	b, _ := os.ReadFile(gh)
	for _, s := range []string{"listing_drift", "listing_price_mismatch", "listed_not_402", "/r5 http:status"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("github output lacks %s:\n%s", s, b)
		}
	}
	_, _, code = runCLI(t, &fakeFetcher{}, false, nil, "scan", "--op", "check", "--origin", in)
	if code != ExitRefused {
		t.Errorf("--origin with --op check: exit %d", code)
	}
}

// TestLintOriginProfile: with --profile, each listed resource that answers
// 402 gets the directory's findings (the fixture's challenges declare no
// bazaar extension; its loopback http is allowed by x402scan), /r5 none, and
// the document findings are unchanged.
func TestLintOriginProfile(t *testing.T) {
	srv, _ := originFixture(t)
	out, _, code := runOrigin(t, srv.URL, "--json", "--profile", "x402scan")
	if code != ExitUnexpected {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Findings  []struct{ Rule string }
		Resources []struct {
			URL             string
			Conforms        bool
			Profile         string
			ProfileFindings []struct{ Rule, Field string } `json:"profile_findings"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 3 || len(rep.Resources) != 5 {
		t.Fatalf("report %s", out)
	}
	for _, r := range rep.Resources {
		want := "x402scan_input_schema_missing:extensions.bazaar.info.input"
		if strings.HasSuffix(r.URL, "/r5") {
			want = ""
		}
		var got []string
		for _, f := range r.ProfileFindings {
			got = append(got, f.Rule+":"+f.Field)
		}
		if strings.Join(got, " ") != want || r.Profile != "x402scan" {
			t.Errorf("%s: %v", r.URL, got)
		}
	}
}

// TestLintOriginSuppressions: lint --origin honours the repository's
// suppressions as lint URL does: the documents' findings and every
// resource's are marked (text counts them, JSON lists them with their
// reason, SARIF carries them as suppressions) and no longer trip the exit;
// a baseline written by --write-baseline makes the same run pass.
func TestLintOriginSuppressions(t *testing.T) {
	srv, _ := originFixture(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.json", `{"ignore": [
  {"rule": "listing_drift", "reason": "payTo moves this week"},
  {"rule": "listing_price_mismatch", "reason": "price change rolling out"},
  {"rule": "listed_not_402", "reason": "r4 is being retired"},
  {"rule": "status_not_402", "field": "http:status", "reason": "r5 is free on purpose"}]}`)
	out, _, code := runOrigin(t, srv.URL, "--config", cfg)
	if code != ExitOK {
		t.Fatalf("every finding suppressed: exit %d\n%s", code, out)
	}
	for _, want := range []string{"[suppressed: payTo moves this week]", "[suppressed: r5 is free on purpose]",
		"suppressions: 4 findings suppressed", "0 errors, 0 warnings — 4 suppressed"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	js, _, _ := runOrigin(t, srv.URL, "--config", cfg, "--json")
	var rep struct {
		Findings   []struct{ Rule string }
		Suppressed []struct {
			URL, Rule, Field string
			Suppressed       struct{ Kind, Reason string }
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 3 || len(rep.Suppressed) != 4 {
		t.Errorf("JSON: %d document findings (want all 3 kept), %d suppressed (want 4)", len(rep.Findings), len(rep.Suppressed))
	}
	for _, s := range rep.Suppressed {
		if s.Suppressed.Reason == "" || s.Rule == "" {
			t.Errorf("a suppressed finding without its rule or reason: %+v", s)
		}
	}
	sarif := filepath.Join(dir, "o.sarif")
	runOrigin(t, srv.URL, "--config", cfg, "--format", "sarif="+sarif)
	sup := suppressedSARIF(readSARIF(t, sarif))
	if sup["listing_drift"] != "external: payTo moves this week" && sup["listing_drift"] != "inSource: payTo moves this week" {
		t.Errorf("SARIF suppressions %v", sup)
	}

	// A baseline of today's findings: the run passes, and without it fails.
	base := filepath.Join(dir, "baseline.json")
	if _, errOut, code := runOrigin(t, srv.URL, "--write-baseline", base); code != ExitOK {
		t.Fatalf("--write-baseline: exit %d, %s", code, errOut)
	}
	cfg2 := writeFile(t, dir, "b.json", `{"baseline": "baseline.json"}`)
	if out, _, code := runOrigin(t, srv.URL, "--config", cfg2); code != ExitOK || !strings.Contains(out, "4 suppressed") {
		t.Errorf("with the baseline: exit %d\n%s", code, out)
	}
	if _, _, code := runOrigin(t, srv.URL); code != ExitUnexpected {
		t.Errorf("without suppressions: exit %d, want %d", code, ExitUnexpected)
	}
}
