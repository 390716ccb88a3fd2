package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/format"
)

// formatCanary is in every fetched value the canary seller sends.
const formatCanary = "CANARY-f0rmat-5e11er"

// canarySeller answers a fleet-shaped challenge whose every fetched value
// (payTo, token account, memo, description, a header, rejection reasons)
// carries the canary; memos change per request.
func canarySeller(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		url := srv.URL + "/paid"
		memo := fmt.Sprintf("%s-memo-%d", formatCanary, n.Add(1))
		w.Header().Set("X-Seller-Note", formatCanary)
		if r.Method == http.MethodPost && (r.Header.Get("X-Payment") != "" || r.Header.Get("X-Payment-Tx") != "" || r.Header.Get("Payment-Signature") != "") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusPaymentRequired)
			fmt.Fprintf(w, `{"error":%q}`, formatCanary+"-rejected")
			return
		}
		body := fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":%q,"resource":%q,"description":%q,"extra":{"usdc_token_account":%q,"memo":%q}}]}`,
			formatCanary+"-payto", url, formatCanary+"-description", formatCanary+"-token", memo)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":%q,"extra":{"memo":%q}}]}`, url, formatCanary+"-payto", memo)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runReal runs payability with the real guarded target client.
func runReal(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	code = e.Run(context.Background(), args)
	return out.String(), errb.String(), code
}

var machineFormats = []string{"text", "json", "github", "sarif", "junit", "markdown", "overall"}

// TestFormatsCarryNoFetchedValue: every format of check, memo, probe, scan
// and render carries what the JSON carries and nothing more: the canary in
// every fetched value appears in none of them (and not in the JSON either).
func TestFormatsCarryNoFetchedValue(t *testing.T) {
	srv := canarySeller(t)
	url := srv.URL + "/paid"
	dir := t.TempDir()
	list := filepath.Join(dir, "urls.txt")
	os.WriteFile(list, []byte(url+"\n"+url+"?again=1\n"), 0o644)
	for _, op := range []string{"check", "memo", "probe", "lint", "scan"} {
		t.Run(op, func(t *testing.T) {
			args := []string{op, "--allow-private", "--fail-on", "never", "--format", "github"}
			for _, f := range machineFormats {
				args = append(args, "--format", f+"="+filepath.Join(dir, op+"."+f))
			}
			if op == "scan" {
				args = append(args, "--op", "probe", list)
			} else {
				args = append(args, url)
			}
			stdout, stderr, code := runReal(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			outputs := map[string]string{"stdout": stdout, "stderr": stderr}
			for _, f := range machineFormats {
				b, err := os.ReadFile(filepath.Join(dir, op+"."+f))
				if err != nil || len(b) == 0 && f != "github" { // github is empty when nothing was found
					t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
				}
				outputs[f] = string(b)
			}
			for name, s := range outputs {
				if strings.Contains(s, formatCanary) {
					t.Errorf("%s output carries a fetched value:\n%s", name, s)
				}
			}
			validSARIF(t, outputs["sarif"])
			// render of the JSON carries no more either.
			rendered, _, code := runReal(t, "render", "--format", "markdown", filepath.Join(dir, op+".json"))
			if code != ExitOK || strings.Contains(rendered, formatCanary) || !strings.Contains(rendered, "| `"+url+"`") {
				t.Errorf("render: exit %d\n%s", code, rendered)
			}
		})
	}
}

// validSARIF validates a log the CLI wrote against the vendored SARIF 2.1.0
// schema (internal/format/testdata/README.md says where it comes from).
func validSARIF(t *testing.T, log string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "format", "testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(log))
	if err != nil {
		t.Fatalf("the SARIF output is not JSON: %v", err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("the SARIF output is not valid SARIF 2.1.0: %v", err)
	}
}

// TestFormatFlags: --json is --format json; every format goes to stdout or
// a file; mistakes are usage errors.
func TestFormatFlags(t *testing.T) {
	get := func() *fakeFetcher { return &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}} }
	a, _, _ := runCLI(t, get(), false, nil, "check", "--json", goldenURL)
	b, _, _ := runCLI(t, get(), false, nil, "check", "--format", "json", goldenURL)
	c, _, _ := runCLI(t, get(), false, nil, "check", "--format=json", "--json", goldenURL)
	if a != b || a != c || !json.Valid([]byte(a)) {
		t.Errorf("--json and --format json differ:\n%s\n%s", a, b)
	}
	text, _, _ := runCLI(t, get(), false, nil, "check", goldenURL)
	text2, _, _ := runCLI(t, get(), false, nil, "check", "--format", "text", goldenURL)
	if text != text2 || !strings.HasPrefix(text, "PAYABILITY VERDICT") && !strings.Contains(text, "POPULATED") {
		t.Errorf("--format text is not the default text:\n%s", text2)
	}
	dir := t.TempDir()
	sarif := filepath.Join(dir, "out.sarif")
	out, stderr, code := runCLI(t, get(), false, nil, "check", "--format", "overall", "--format", "sarif="+sarif, goldenURL)
	if code != ExitOK || out != "pass\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if raw, _ := os.ReadFile(sarif); !json.Valid(raw) || !strings.Contains(string(raw), `"version": "2.1.0"`) {
		t.Errorf("sarif file:\n%s", raw)
	}
	for _, bad := range [][]string{
		{"--format", "yaml"},
		{"--format", "sarif", "--format", "junit"},
		{"--json", "--format", "markdown"},
		{"--format", "sarif="},
		{"--format", "sarif=" + sarif, "--format", "junit=" + sarif},
		{"--fail-on", "warning"},
	} {
		_, stderr, code := runCLI(t, get(), false, nil, append(append([]string{"check"}, bad...), goldenURL)...)
		if code != exitUsage || !strings.Contains(stderr, "usage: payability check") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}

// TestFailOnExitStatus: --fail-on decides the exit status from the overall,
// whatever the format; check, memo and probe default to never.
func TestFailOnExitStatus(t *testing.T) {
	unconfigured := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(`{"x402Version":1,"accepts":[{"amount":"1"}]}`)}
	absentRails := func() []capture.Capture {
		ps := closedProbes()
		plain := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(`{}`)}
		ps[3], ps[4] = plain, plain // direct, facilitator: ABSENT (notes)
		return ps
	}
	dirty := func() []capture.Capture {
		ps := closedProbes()
		ps[4] = capture.Capture{Outcome: capture.OK, Status: 500}
		return ps
	}
	tests := []struct {
		name    string
		f       *fakeFetcher
		args    []string
		overall string
		codes   map[string]int // --fail-on → exit
	}{
		{"populated check", &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, []string{"check"}, "pass",
			map[string]int{"": 0, "never": 0, "error": 0, "warn": 0}},
		{"unconfigured check", &fakeFetcher{get: []capture.Capture{unconfigured}}, []string{"check"}, "fail",
			map[string]int{"": 0, "never": 0, "error": 3, "warn": 3}},
		{"reused memo", &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, []string{"memo"}, "fail",
			map[string]int{"": 0, "error": 3}},
		{"dirty facilitator", &fakeFetcher{probes: dirty()}, []string{"probe"}, "warn",
			map[string]int{"": 0, "never": 0, "error": 0, "warn": 3}},
		{"absent rails", &fakeFetcher{probes: absentRails()}, []string{"probe"}, "pass",
			map[string]int{"warn": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for failOn, want := range tt.codes {
				for _, f := range []string{"text", "json", "github", "sarif", "junit", "markdown", "overall"} {
					tt.f.n = 0
					args := append(append([]string{}, tt.args...), "--format", f)
					if failOn != "" {
						args = append(args, "--fail-on", failOn)
					}
					out, stderr, code := runCLI(t, tt.f, false, nil, append(args, goldenURL)...)
					if code != want {
						t.Errorf("--fail-on %q --format %s: exit %d, want %d (%s)", failOn, f, code, want, stderr)
					}
					if f == "overall" && out != tt.overall+"\n" {
						t.Errorf("overall %q, want %s", out, tt.overall)
					}
				}
			}
		})
	}
}

// TestScanFormats: the scan writes one document per format over all
// entries, in input order, refusals included; --fail-on looks at them all.
func TestScanFormats(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "urls.txt")
	os.WriteFile(in, []byte(goldenURL+"\nftp://refused.example/\nhttps://other.example/\n"), 0o644)
	files := map[string]string{}
	args := []string{"--op", "check", "--format", "github"}
	for _, f := range []string{"json", "sarif", "junit", "markdown", "overall", "text"} {
		files[f] = filepath.Join(dir, "scan."+f)
		args = append(args, "--format", f+"="+files[f])
	}
	stdout, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, "", append(args, "--fail-on", "error", in)...)
	if code != ExitUnexpected {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "::error title=") {
			t.Errorf("github line %q", l)
		}
	}
	if !strings.Contains(stdout, "title=refused/url_scheme::ftp://refused.example/ url: refused by rule url_scheme") {
		t.Errorf("no refusal line:\n%s", stdout)
	}
	read := func(f string) string {
		b, err := os.ReadFile(files[f])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if n := strings.Count(read("json"), "\n"); n != 4 {
		t.Errorf("%d JSON lines, want the header and 3 records", n)
	}
	if got := read("overall"); got != "fail\n" {
		t.Errorf("overall %q", got)
	}
	text := read("text")
	want := "pass\t" + goldenURL + "\tPOPULATED\nfail\tftp://refused.example/\trefused: url_scheme\nfail\thttps://other.example/\tNOT-A-402\n"
	if text != want {
		t.Errorf("text:\n%s\nwant\n%s", text, want)
	}
	var doc format.JUnitSuites
	if err := xml.Unmarshal([]byte(read("junit")), &doc); err != nil || len(doc.Suites) != 3 {
		t.Fatalf("junit: %v, %d suites", err, len(doc.Suites))
	}
	if doc.Suites[0].Name != goldenURL || doc.Suites[0].Failures != 0 || doc.Suites[2].Failures == 0 {
		t.Errorf("junit suites %+v", doc.Suites)
	}
	md := read("markdown")
	if !strings.HasPrefix(md, "### payability check: fail") || strings.Count(md, "| `ftp://refused.example/` |") < 2 {
		t.Errorf("markdown:\n%s", md)
	}
	var sarif struct {
		Runs []struct {
			Results []sarifResultLoc `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(read("sarif")), &sarif); err != nil || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != len(lines) {
		t.Errorf("sarif: %v, %+v; want one run with %d results", err, sarif, len(lines))
	}
	// Every result sits in the scan's input file, at its URL's line.
	wantURI := format.NewArtifact(in, "", nil).URI()
	for _, r := range sarif.Runs[0].Results {
		pl := r.Locations[0].PhysicalLocation
		wantLine := map[string]int{goldenURL: 1, "ftp://refused.example/": 2, "https://other.example/": 3}[r.Properties.Endpoint]
		if pl.ArtifactLocation.URI != wantURI || pl.Region.StartLine != wantLine {
			t.Errorf("result of %s at %s line %d, want %s line %d", r.Properties.Endpoint, pl.ArtifactLocation.URI, pl.Region.StartLine, wantURI, wantLine)
		}
	}
	if _, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, "", "--op", "check", "--out", files["sarif"], "--format", "sarif="+files["sarif"], in); code != exitUsage {
		t.Errorf("--out and --format on one file: exit %d, %q", code, stderr)
	}
	// Without --fail-on the scan still exits 0, and stdout stays JSON Lines.
	out, _, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, "", "--op", "check", in)
	if code != ExitOK || strings.Count(out, "\n") != 4 || !json.Valid([]byte(strings.Split(out, "\n")[0])) {
		t.Errorf("default scan: exit %d\n%s", code, out)
	}
}

// TestRenderCommand: render turns saved JSON into the formats, refuses what
// is not payability's JSON, and --fail-on applies.
func TestRenderCommand(t *testing.T) {
	f := &fakeFetcher{get: []capture.Capture{{Outcome: capture.OK, Status: 404}}}
	rep, _, _ := runCLI(t, f, false, nil, "check", "--json", goldenURL)
	dir := t.TempDir()
	path := filepath.Join(dir, "reports.json")
	os.WriteFile(path, []byte(rep+rep), 0o644)
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(rep), Stdout: &out, Stderr: &errb}
	if code := e.Run(context.Background(), []string{"render", "--format", "github"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "::error title=check/NOT-A-402::" + goldenURL + " state: "; !strings.HasPrefix(out.String(), want) || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("render github:\n%s", out.String())
	}
	stdout, _, code := runCLI(t, f, false, nil, "render", "--format", "overall", "--fail-on", "error", path)
	if code != ExitUnexpected || stdout != "fail\n" {
		t.Errorf("render --fail-on error: exit %d, %q", code, stdout)
	}
	stdout, _, code = runCLI(t, f, false, nil, "render", path)
	if code != ExitOK || strings.Count(stdout, "\n") != 2 || !strings.HasPrefix(stdout, "fail\t"+goldenURL+"\tNOT-A-402") {
		t.Errorf("render text: exit %d\n%s", code, stdout)
	}
	os.WriteFile(path, []byte("{\"op\":\"check\",\"state\":\"SECRET\"}"), 0o644)
	_, stderr, code := runCLI(t, f, false, nil, "render", path)
	if code != ExitInternal || !strings.Contains(stderr, "input value 1:") || strings.Contains(stderr, "SECRET") {
		t.Errorf("bad input: exit %d, %q", code, stderr)
	}
	_, stderr, code = runCLI(t, f, false, nil, "render", "--format", "json", path)
	if code != exitUsage {
		t.Errorf("render --format json: exit %d, %q", code, stderr)
	}
}

// TestPreflightFormats: preflight renders every format without a fetched
// value, and --fail-on maps onto its decision statuses (warn: 10 HOLD and
// 20 STOP, as without the flag; error: only 20; never: 0).
func TestPreflightFormats(t *testing.T) {
	srv := canarySeller(t)
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seller-Note", formatCanary)
		fmt.Fprint(w, formatCanary)
	}))
	t.Cleanup(open.Close)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, url string
	}{{"challenge", srv.URL + "/paid"}, {"no 402", open.URL + "/free"}} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"preflight", "--allow-private", "--format", "github"}
			for _, f := range machineFormats {
				args = append(args, "--format", f+"="+filepath.Join(dir, tc.name+"."+f))
			}
			stdout, stderr, code := runReal(t, append(args, tc.url)...)
			raw, err := os.ReadFile(filepath.Join(dir, tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Decision string `json:"decision"`
			}
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			wantCode := map[string]int{"GO": 0, "HOLD": 10, "STOP": 20}[rec.Decision]
			if code != wantCode {
				t.Fatalf("%s: exit %d, want %d (%s)", rec.Decision, code, wantCode, stderr)
			}
			outputs := map[string]string{"stdout": stdout, "stderr": stderr}
			for _, f := range machineFormats {
				b, _ := os.ReadFile(filepath.Join(dir, tc.name+"."+f))
				outputs[f] = string(b)
			}
			for name, s := range outputs {
				if strings.Contains(s, formatCanary) {
					t.Errorf("%s output carries a fetched value:\n%s", name, s)
				}
			}
			validSARIF(t, outputs["sarif"])
			if rec.Decision != "GO" && !strings.Contains(stdout, "title=preflight/"+rec.Decision+"::"+tc.url+" decision:") {
				t.Errorf("github:\n%s", stdout)
			}
			for failOn, want := range map[string]int{
				"never": 0,
				"error": map[bool]int{true: 20, false: 0}[rec.Decision == "STOP"],
				"warn":  wantCode,
			} {
				_, _, code := runReal(t, "preflight", "--allow-private", "--format", "overall", "--fail-on", failOn, tc.url)
				if code != want {
					t.Errorf("%s --fail-on %s: exit %d, want %d", rec.Decision, failOn, code, want)
				}
			}
		})
	}
}

// TestScanFailOnAlone: with only --fail-on, stdout stays the JSON Lines and
// the exit status still sees every entry.
func TestScanFailOnAlone(t *testing.T) {
	in := goldenURL + "\nhttps://other.example/\n"
	out, _, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, in, "--op", "check", "--fail-on", "error")
	if code != ExitUnexpected || strings.Count(out, "\n") != 3 { // the header and 2 records
		t.Errorf("exit %d, want 3\n%s", code, out)
	}
	_, _, code = runScanCLI(t, context.Background(), &scanFetcher{}, false, goldenURL+"\n", "--op", "check", "--fail-on", "warn")
	if code != ExitOK {
		t.Errorf("all POPULATED: exit %d", code)
	}
}

// sarifResultLoc is the part of a SARIF result the CLI tests read.
type sarifResultLoc struct {
	Message struct {
		Text string `json:"text"`
	} `json:"message"`
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region struct {
				StartLine int `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	Properties struct {
		Endpoint string `json:"endpoint"`
	} `json:"properties"`
}

// TestRenderIsInertAndNamesTheArtifact is issue 21's finding end to end: a
// scan record whose URL (from a third-party list) carries Markdown, HTML
// and terminal bytes renders with none of them live; and --artifact names
// the file SARIF locates the results in (the placeholder without it).
func TestRenderIsInertAndNamesTheArtifact(t *testing.T) {
	dir := t.TempDir()
	hostile := "https://x/](http://evil)![a](http://evil/i.png)<img src=x>"
	rec := filepath.Join(dir, "report.jsonl")
	os.WriteFile(rec, []byte(`{"line":1,"url":"`+hostile+`\u001b[31m\u0000","refused":{"rule":"url_scheme"}}`+"\n"+
		`{"line":2,"url":"`+hostile+`","refused":{"rule":"url_scheme"}}`+"\n"), 0o644)
	list := filepath.Join(dir, "urls.txt")
	os.WriteFile(list, []byte("# from a directory\n"+hostile+"\n"), 0o644)
	md, stderr, code := runReal(t, "render", "--format", "markdown", rec)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(md, "\x1b") || strings.Contains(md, "\x00") || !strings.Contains(md, "| `"+hostile+"\ufffd[31m\ufffd` |") {
		t.Errorf("markdown:\n%q", md)
	}
	gh, _, _ := runReal(t, "render", "--format", "github", rec)
	if strings.ContainsAny(gh, "\x1b\x00\r") || strings.Count(gh, "\n") != 2 {
		t.Errorf("github:\n%q", gh)
	}
	for _, tt := range []struct {
		args  []string
		uri   string
		line2 int
	}{
		{nil, format.PlaceholderArtifact, 1},
		{[]string{"--artifact", list}, format.NewArtifact(list, "", nil).URI(), 2},
	} {
		out, stderr, code := runReal(t, append(append([]string{"render", "--format", "sarif"}, tt.args...), rec)...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		validSARIF(t, out)
		var doc struct {
			Runs []struct {
				Results []sarifResultLoc `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Runs[0].Results) != 2 {
			t.Fatalf("%v: %s", err, out)
		}
		for i, r := range doc.Runs[0].Results {
			pl := r.Locations[0].PhysicalLocation
			want := 1
			if i == 1 {
				want = tt.line2
			}
			if pl.ArtifactLocation.URI != tt.uri || pl.Region.StartLine != want || strings.Contains(r.Message.Text, "![a]") {
				t.Errorf("%v: result %d at %s:%d (want %s:%d), message %q", tt.args, i, pl.ArtifactLocation.URI, pl.Region.StartLine, tt.uri, want, r.Message.Text)
			}
		}
	}
}
