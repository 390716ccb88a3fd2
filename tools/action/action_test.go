// Package action tests the GitHub Action's script (run.sh) as the runner
// runs it: bash, the INPUT_* variables action.yml sets, fake GITHUB_OUTPUT
// and GITHUB_STEP_SUMMARY files, a freshly built payability on PATH, and
// loopback sellers.
package action

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/format"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// binDir holds the payability this test built (once per test binary).
var binDir string

func buildPayability(t *testing.T) string {
	t.Helper()
	if binDir != "" {
		return binDir
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is not on PATH: %v", err)
	}
	dir, err := os.MkdirTemp("", "payability-action-bin-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-o", filepath.Join(dir, "payability"), "../../cmd/payability")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	binDir = dir
	return dir
}

// seller is a loopback seller of the fleet's challenge shape; a fresh memo
// per request; invalid payments rejected with a reason, unless dirty, when
// the facilitator probe gets a 500.
func seller(t *testing.T, dirty bool) string {
	t.Helper()
	var n atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		url := srv.URL + "/paid"
		if r.Header.Get("Payment-Signature") != "" && dirty {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Payment") != "" || r.Header.Get("X-Payment-Tx") != "" || r.Header.Get("Payment-Signature") != "" {
			w.WriteHeader(http.StatusPaymentRequired)
			fmt.Fprint(w, `{"error":"invalid_payment"}`)
			return
		}
		memo := fmt.Sprintf("pv-%010d", n.Add(1))
		body := fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111","resource":%q,"description":"one call","extra":{"usdc_token_account":"Token111","memo":%q}}]}`, url, memo)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111","extra":{"memo":%q}}]}`, url, memo)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/paid"
}

// freeSite answers 200 to everything: not a 402.
func freeSite(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "free") }))
	t.Cleanup(srv.Close)
	return srv.URL + "/free"
}

// workflowPath is the workflow file the fake runner names: the file whose
// urls input lists the URLs, so SARIF locates the results there.
const workflowPath = ".github/workflows/payability.yml"

type runResult struct {
	code    int
	stdout  string
	outputs map[string]string
	summary string
}

// runAction runs run.sh with inputs (name → value, as action.yml maps them
// to INPUT_*).
func runAction(t *testing.T, inputs map[string]string) runResult {
	t.Helper()
	bin := buildPayability(t)
	dir := t.TempDir()
	outFile := filepath.Join(dir, "github_output")
	sumFile := filepath.Join(dir, "step_summary")
	os.WriteFile(outFile, []byte("earlier=1\n"), 0o644)
	os.WriteFile(sumFile, []byte("earlier summary\n"), 0o644)
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir,
		"GITHUB_OUTPUT=" + outFile,
		"GITHUB_STEP_SUMMARY=" + sumFile,
		"RUNNER_TEMP=" + dir,
		"GITHUB_REPOSITORY=acme/shop",
		"GITHUB_WORKFLOW_REF=acme/shop/" + workflowPath + "@refs/heads/main",
	}
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, "INPUT_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(outFile)
	outputs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			outputs[k] = v
		}
	}
	sum, _ := os.ReadFile(sumFile)
	if outputs["earlier"] != "1" || !strings.HasPrefix(string(sum), "earlier summary\n") {
		t.Errorf("the script overwrote GITHUB_OUTPUT or GITHUB_STEP_SUMMARY instead of appending")
	}
	t.Logf("stderr:\n%s", stderr.String())
	return runResult{code, stdout.String(), outputs, strings.TrimPrefix(string(sum), "earlier summary\n")}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	if path == "" {
		t.Fatal("no such output")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestActionCheckScan: several URLs of check run as one scan; the outputs,
// annotations, summary, SARIF and JUnit cover all of them, and fail-on
// error fails the step when one is not POPULATED.
func TestActionCheckScan(t *testing.T) {
	good, bad := seller(t, false), freeSite(t)
	r := runAction(t, map[string]string{
		"urls": good + "\r\n\n   " + bad + "  \n# a comment\n", "op": "check", "fail-on": "error", "allow-private": "true",
	})
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (fail-on error, one NOT-A-402)\n%s", r.code, r.stdout)
	}
	if r.outputs["overall"] != "fail" {
		t.Errorf("overall %q", r.outputs["overall"])
	}
	report := readFile(t, r.outputs["report"])
	if n := strings.Count(report, "\n"); n != 3 || !strings.HasPrefix(report, `{"header":{"op":"check"`) {
		t.Errorf("report has %d lines, want the scan's header and 2 records", n)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := []string{
		"::error title=check/NOT-A-402::" + bad + " state: ",
		"::error title=check/NOT-A-402::" + bad + " reason: reason status_not_402 (status 200)",
	}
	if len(lines) != len(want) {
		t.Fatalf("annotations:\n%s", r.stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("annotation %d: %q, want prefix %q", i, lines[i], w)
		}
	}
	for _, s := range []string{"### payability check: fail", "| `" + good + "` | ✅ pass | `POPULATED` |", "| `" + bad + "` | ❌ fail | `NOT-A-402` |"} {
		if !strings.Contains(r.summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, r.summary)
		}
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(readFile(t, r.outputs["sarif"])), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != 2 {
		t.Fatalf("sarif: %v %+v", err, sarif)
	}
	for _, res := range sarif.Runs[0].Results {
		if uri := res.Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != workflowPath {
			t.Errorf("a result located at %q, want the workflow file %s", uri, workflowPath)
		}
	}
	var junit format.JUnitSuites
	if err := xml.Unmarshal([]byte(readFile(t, r.outputs["junit"])), &junit); err != nil || len(junit.Suites) != 2 || junit.Suites[0].Name != good {
		t.Errorf("junit: %v %+v", err, junit.Suites)
	}
	if readFile(t, r.outputs["summary"]) != r.summary {
		t.Error("the summary output is not what the job summary got")
	}
}

// TestActionPassAndWarn: a clean endpoint passes; a dirty facilitator rail
// is a warning, which fails the step only with fail-on warn.
func TestActionPassAndWarn(t *testing.T) {
	good, dirty := seller(t, false), seller(t, true)
	r := runAction(t, map[string]string{"urls": good, "op": "memo", "allow-private": "true"})
	if r.code != 0 || r.outputs["overall"] != "pass" || r.stdout != "" {
		t.Errorf("memo: exit %d, overall %q, annotations %q", r.code, r.outputs["overall"], r.stdout)
	}
	for failOn, code := range map[string]int{"error": 0, "warn": 3, "never": 0} {
		r := runAction(t, map[string]string{"urls": dirty + "\n" + good, "op": "probe", "allow-private": "true", "fail-on": failOn})
		if r.code != code || r.outputs["overall"] != "warn" {
			t.Errorf("probe fail-on %s: exit %d (want %d), overall %q", failOn, r.code, code, r.outputs["overall"])
		}
		if !strings.HasPrefix(r.stdout, "::warning title=probe/PRESENT-FAIL-DIRTY::"+dirty+" grades.facilitator: ") {
			t.Errorf("probe annotations:\n%s", r.stdout)
		}
	}
}

// TestActionPreflightLoop: preflight (the default op) runs once per URL; a
// URL the policy refuses still counts, as an error.
func TestActionPreflightLoop(t *testing.T) {
	free := freeSite(t)
	r := runAction(t, map[string]string{"urls": free + "\nftp://refused.example/x", "allow-private": "true", "fail-on": "never", "method": "GET"})
	if r.code != 0 || r.outputs["overall"] != "fail" {
		t.Fatalf("exit %d, overall %q\n%s", r.code, r.outputs["overall"], r.stdout)
	}
	for _, s := range []string{
		"::error title=preflight/STOP::" + free + " decision: decision STOP",
		"::error title=preflight/not_402::" + free + " reasons: reason not_402 (STOP)",
		"::error title=error/refused_or_bad_usage::ftp://refused.example/x op: ",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("annotations lack %q:\n%s", s, r.stdout)
		}
	}
	if !strings.Contains(r.summary, "### payability preflight: fail") || strings.Count(readFile(t, r.outputs["report"]), "\n") < 2 {
		t.Errorf("summary:\n%s", r.summary)
	}
}

// TestActionLintLoop: lint runs once per URL with the method given (else as
// a scan); its findings keep their severity.
func TestActionLintLoop(t *testing.T) {
	free := freeSite(t)
	r := runAction(t, map[string]string{"urls": free, "op": "lint", "method": "POST", "allow-private": "true"})
	if r.code != 3 || r.outputs["overall"] != "fail" || !strings.HasPrefix(r.stdout, "::error title=") || !strings.Contains(r.stdout, free+" http:status: ") {
		t.Fatalf("exit %d, overall %q\n%s", r.code, r.outputs["overall"], r.stdout)
	}
	if !strings.Contains(r.summary, "### payability lint: fail") || !strings.Contains(readFile(t, r.outputs["report"]), `"method": "POST"`) {
		t.Errorf("summary:\n%s", r.summary)
	}
	// Without a method, lint runs as one scan (JSON Lines records).
	r = runAction(t, map[string]string{"urls": free + "\n" + free + "?b=1", "op": "lint", "allow-private": "true", "fail-on": "never"})
	report := readFile(t, r.outputs["report"])
	if r.code != 0 || r.outputs["overall"] != "fail" || strings.Count(report, "\n") != 3 || !strings.HasPrefix(report, `{"header":{"op":"lint"`) {
		t.Errorf("lint scan: exit %d, overall %q\n%s", r.code, r.outputs["overall"], report)
	}
}

// TestActionSuppressions: the config input's ignore entry suppresses the
// free site's error: the step passes, the summary and SARIF still list it.
func TestActionSuppressions(t *testing.T) {
	free := freeSite(t)
	cfg := filepath.Join(t.TempDir(), "payability.json")
	os.WriteFile(cfg, []byte(`{"ignore": [{"rule": "status_not_402", "reason": "free on purpose"}]}`), 0o644)
	r := runAction(t, map[string]string{"urls": free, "op": "lint", "allow-private": "true", "config": cfg})
	if r.code != 0 || r.outputs["overall"] != "pass" {
		t.Fatalf("exit %d, overall %q\n%s", r.code, r.outputs["overall"], r.stdout)
	}
	if !strings.Contains(r.summary, "| error (suppressed) |") || !strings.Contains(r.stdout, "::notice title=status_not_402::") ||
		!strings.Contains(readFile(t, r.outputs["sarif"]), `"justification": "free on purpose"`) {
		t.Errorf("summary:\n%s\nstdout:\n%s", r.summary, r.stdout)
	}
}

// TestActionRefusesBadInputs: a bad input stops before anything is fetched,
// with an annotation and exit 2.
func TestActionRefusesBadInputs(t *testing.T) {
	for name, in := range map[string]map[string]string{
		"unknown op":        {"urls": "https://x.example/", "op": "lint-everything"},
		"bad fail-on":       {"urls": "https://x.example/", "fail-on": "sometimes"},
		"bad allow-private": {"urls": "https://x.example/", "allow-private": "yes"},
		"method with check": {"urls": "https://x.example/", "op": "check", "method": "POST"},
		"bad method":        {"urls": "https://x.example/", "method": "DELETE"},
		"no url":            {"urls": "\n  \n# only a comment\n"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runAction(t, in)
			if r.code != 2 || !strings.HasPrefix(r.stdout, "::error title=payability::") || len(r.outputs) != 1 {
				t.Errorf("exit %d, stdout %q, outputs %v", r.code, r.stdout, r.outputs)
			}
		})
	}
}

// TestActionYAMLMatchesTheScript: every input reaches the script as its
// INPUT_* variable, and every output is one the script writes.
func TestActionYAMLMatchesTheScript(t *testing.T) {
	yml := readFile(t, "../../action.yml")
	script := readFile(t, "run.sh")
	for _, in := range []string{"urls", "op", "fail-on", "method", "allow-private"} {
		env := "INPUT_" + strings.ToUpper(strings.ReplaceAll(in, "-", "_"))
		if !strings.Contains(yml, env+": ${{ inputs."+in+" }}") || !strings.Contains(script, env) {
			t.Errorf("input %s does not reach the script as %s", in, env)
		}
	}
	if !strings.Contains(yml, "PAYABILITY_VERSION: ${{ inputs.version }}") || !strings.Contains(yml, `tools/action/install.sh" resolve`) ||
		!strings.Contains(readFile(t, "install.sh"), "PAYABILITY_VERSION") {
		t.Error("version does not reach install.sh")
	}
	outputs := regexp.MustCompile(`value: \$\{\{ steps\.run\.outputs\.([a-z]+) \}\}`).FindAllStringSubmatch(yml, -1)
	if len(outputs) != 5 {
		t.Fatalf("%d outputs", len(outputs))
	}
	for _, o := range outputs {
		if !strings.Contains(script, `echo "`+o[1]+`=`) {
			t.Errorf("output %s is never written by the script", o[1])
		}
	}
	if strings.Contains(yml, "${{ inputs.urls }}\"") || regexp.MustCompile(`run: .*\$\{\{ inputs\.`).MatchString(yml) {
		t.Error("an input is expanded into a shell command line (use env)")
	}
}

// TestActionSummaryIsInert: a URL carrying Markdown, an image and HTML (as a
// third-party list may) reaches the job summary as one code span and the
// annotations as one line each.
func TestActionSummaryIsInert(t *testing.T) {
	bad := freeSite(t) + "/](http://evil)![a](http://evil/i.png)<img src=x>"
	r := runAction(t, map[string]string{"urls": bad, "op": "check", "fail-on": "never", "allow-private": "true"})
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.summary, "| `"+bad+"` |") || strings.Contains(strings.ReplaceAll(r.summary, "`"+bad+"`", ""), "![a]") {
		t.Errorf("summary:\n%s", r.summary)
	}
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if !strings.HasPrefix(l, "::error title=") || strings.ContainsAny(l, "\r\x00\x1b") {
			t.Errorf("annotation %q", l)
		}
	}
}
