package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

// findingsCapture gives lint-findings' four findings: legs_entry_count
// (error), max_timeout_long and resource_url_query (warn), legs_mismatch
// (error, body accepts[0].maxAmountRequired).
func findingsCapture() capture.Capture {
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: v2Header(cleanV2), Body: []byte(messyV1)}
}

// newFindingCapture adds one finding: the body's entry has no payTo.
func newFindingCapture() capture.Capture {
	c := findingsCapture()
	c.Body = []byte(strings.Replace(messyV1, `"payTo":"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",`, "", 1))
	return c
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type sarifDoc struct {
	Runs []struct {
		Results []struct {
			RuleID       string `json:"ruleId"`
			Suppressions []struct {
				Kind          string `json:"kind"`
				Justification string `json:"justification"`
			} `json:"suppressions"`
			BaselineState string `json:"baselineState"`
		} `json:"results"`
	} `json:"runs"`
}

func readSARIF(t *testing.T, path string) sarifDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d sarifDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// suppressedSARIF maps each result's rule to its justification ("" when
// not suppressed).
func suppressedSARIF(d sarifDoc) map[string]string {
	out := map[string]string{}
	for _, r := range d.Runs[0].Results {
		j := ""
		if len(r.Suppressions) > 0 {
			j = r.Suppressions[0].Kind + ": " + r.Suppressions[0].Justification
		}
		out[r.RuleID] = j
	}
	return out
}

const futureIgnore = `{"ignore": [{"rule": "legs_mismatch", "url": "https://seller.example/api/paid", "field": "accepts[0].maxAmountRequired",
  "reason": "v1 clients are retired", "until": "2027-01-31"}]}`

// A suppression with a reason and a future until suppresses its one
// finding in text, JSON and SARIF; the other findings still count.
func TestLintSuppressionWithReasonAndFutureUntil(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.json", futureIgnore)
	f := &fakeFetcher{get: []capture.Capture{findingsCapture()}}

	out, errOut, code := runCLI(t, f, false, nil, "lint", "--config", cfg, lintURL)
	if code != ExitUnexpected || errOut != "" {
		t.Fatalf("exit %d (want 3: legs_entry_count still counts), stderr %q", code, errOut)
	}
	golden(t, "lint-suppressed.txt", strings.ReplaceAll(out, cfg, "CONFIG"))

	out, _, _ = runCLI(t, f, false, nil, "lint", "--config", cfg, "--json", lintURL)
	var rep struct {
		Findings []struct {
			Rule       string `json:"rule"`
			Suppressed *struct {
				Kind, Reason, Until string
			} `json:"suppressed"`
		} `json:"findings"`
		Suppressions struct {
			Config     string `json:"config"`
			Suppressed int    `json:"suppressed"`
			ByIgnore   int    `json:"by_ignore"`
			Ignores    []struct {
				Expired bool `json:"expired"`
				Matched int  `json:"matched"`
			} `json:"ignores"`
		} `json:"suppressions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 4 {
		t.Fatalf("%d findings in the JSON, want all 4", len(rep.Findings))
	}
	for _, fd := range rep.Findings {
		suppressed := fd.Suppressed != nil
		if suppressed != (fd.Rule == "legs_mismatch") {
			t.Errorf("%s: suppressed %v", fd.Rule, suppressed)
		}
		if suppressed && (fd.Suppressed.Kind != "ignore" || fd.Suppressed.Reason != "v1 clients are retired" || fd.Suppressed.Until != "2027-01-31") {
			t.Errorf("the suppression: %+v", *fd.Suppressed)
		}
	}
	if s := rep.Suppressions; s.Config != cfg || s.Suppressed != 1 || s.ByIgnore != 1 || len(s.Ignores) != 1 || s.Ignores[0].Expired || s.Ignores[0].Matched != 1 {
		t.Errorf("summary %+v", s)
	}

	sarifPath := filepath.Join(dir, "out.sarif")
	_, errOut, _ = runCLI(t, f, false, nil, "lint", "--config", cfg, "--format", "sarif="+sarifPath, "--format", "overall", lintURL)
	got := suppressedSARIF(readSARIF(t, sarifPath))
	want := map[string]string{"legs_entry_count": "", "max_timeout_long": "", "resource_url_query": "", "legs_mismatch": "external: v1 clients are retired (until 2027-01-31)"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("SARIF %s: %q, want %q", k, got[k], v)
		}
	}
	if !strings.Contains(errOut, "payability: suppressions: 1 findings suppressed (1 by ignore entries, 0 by the baseline)") {
		t.Errorf("stderr does not count them: %q", errOut)
	}

	// Suppressing the other error too: --fail-on error passes.
	both := writeFile(t, dir, "both.json", `{"ignore": [
		{"rule": "legs_mismatch", "reason": "v1 clients are retired", "until": "2027-01-31"},
		{"rule": "legs_entry_count", "reason": "the v1 body lists Solana only"}]}`)
	if _, _, code := runCLI(t, f, false, nil, "lint", "--config", both, "--format", "overall", lintURL); code != ExitOK {
		t.Errorf("every error suppressed: exit %d, want 0", code)
	}
	if _, _, code := runCLI(t, f, false, nil, "lint", "--config", both, "--fail-on", "warn", "--format", "overall", lintURL); code != ExitUnexpected {
		t.Errorf("--fail-on warn with two warnings: exit %d, want 3", code)
	}
}

// An expired until stops suppressing, and every output says so.
func TestLintExpiredSuppressionCountsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.json", strings.Replace(futureIgnore, "2027-01-31", "2026-11-28", 1)) // the clock is 2026-11-29
	f := &fakeFetcher{get: []capture.Capture{findingsCapture()}}

	out, _, code := runCLI(t, f, false, nil, "lint", "--config", cfg, lintURL)
	if code != ExitUnexpected {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"ignore[0] (rule legs_mismatch) expired after 2026-11-28: it no longer suppresses (1 findings it names count)",
		"X402 LINT — conforms: no — 2 errors, 2 warnings — 2026-11-29",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[suppressed") {
		t.Errorf("an expired entry still marks a finding:\n%s", out)
	}

	out, errOut, _ := runCLI(t, f, false, nil, "lint", "--config", cfg, "--json", lintURL)
	if strings.Contains(out, `"suppressed": {`) || !strings.Contains(out, `"expired": true`) {
		t.Errorf("json:\n%s", out)
	}
	if !strings.Contains(errOut, "ignore[0] (rule legs_mismatch) expired after 2026-11-28") {
		t.Errorf("stderr does not say it expired: %q", errOut)
	}
	sarifPath := filepath.Join(dir, "out.sarif")
	runCLI(t, f, false, nil, "lint", "--config", cfg, "--format", "sarif="+sarifPath, lintURL)
	if got := suppressedSARIF(readSARIF(t, sarifPath)); got["legs_mismatch"] != "" {
		t.Errorf("SARIF still suppresses it: %q", got["legs_mismatch"])
	}
}

// A baseline makes CI pass on today's findings and fail on a new one.
func TestLintBaselinePassesOldFindingsFailsNewOnes(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "payability-baseline.json")
	old := &fakeFetcher{get: []capture.Capture{findingsCapture()}}

	out, errOut, code := runCLI(t, old, false, nil, "lint", "--write-baseline", base, lintURL)
	if code != ExitOK {
		t.Fatalf("--write-baseline: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "— 0 errors, 0 warnings — 4 suppressed —") {
		t.Errorf("the findings just recorded are not baselined:\n%s", out)
	}
	raw, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"fingerprint"`); n != 4 {
		t.Errorf("%d findings recorded, want 4:\n%s", n, raw)
	}

	cfg := writeFile(t, dir, ".payability.json", `{"baseline": "payability-baseline.json"}`)
	if _, errOut, code := runCLI(t, old, false, nil, "lint", "--config", cfg, "--format", "overall", "--fail-on", "warn", lintURL); code != ExitOK {
		t.Errorf("old findings only: exit %d, want 0 (stderr %q)", code, errOut)
	}
	sarifPath := filepath.Join(dir, "new.sarif")
	nu := &fakeFetcher{get: []capture.Capture{newFindingCapture()}}
	out, _, code = runCLI(t, nu, false, nil, "lint", "--config", cfg, "--format", "sarif="+sarifPath, lintURL)
	if code != ExitUnexpected {
		t.Errorf("a new finding: exit %d, want 3\n%s", code, out)
	}
	var fresh []string
	for _, r := range readSARIF(t, sarifPath).Runs[0].Results {
		if r.BaselineState == "new" {
			fresh = append(fresh, r.RuleID)
			if len(r.Suppressions) != 0 {
				t.Errorf("a new finding is suppressed: %s", r.RuleID)
			}
		} else if r.BaselineState != "unchanged" || len(r.Suppressions) != 1 || r.Suppressions[0].Justification != "in the baseline" {
			t.Errorf("an old finding: %+v", r)
		}
	}
	if len(fresh) == 0 {
		t.Error("no result is new")
	}
}

// .payability.json is found from the working directory up to the
// repository's root, never above it; --config overrides it.
func TestConfigIsFoundUpToTheRepositoryRoot(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	sub := filepath.Join(repo, "services", "api")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	above := writeFile(t, top, ".payability.json", `{"ignore": [{"rule": "legs_entry_count", "reason": "above the repository"}]}`)
	f := &fakeFetcher{get: []capture.Capture{findingsCapture()}}

	t.Chdir(sub)
	out, _, _ := runCLI(t, f, false, nil, "lint", lintURL)
	if strings.Contains(out, "suppress") {
		t.Errorf("a file above the repository's root was read:\n%s", out)
	}
	writeFile(t, repo, ".payability.json", futureIgnore)
	out, _, _ = runCLI(t, f, false, nil, "lint", lintURL)
	if !strings.Contains(out, "[suppressed until 2027-01-31: v1 clients are retired]") || !strings.Contains(out, filepath.Join(repo, ".payability.json")) {
		t.Errorf("the repository's file was not used:\n%s", out)
	}
	out, _, _ = runCLI(t, f, false, nil, "lint", "--config", above, lintURL)
	if !strings.Contains(out, "[suppressed: above the repository]") {
		t.Errorf("--config was not used:\n%s", out)
	}
	if got := findConfig(top); got != above {
		t.Errorf("outside a repository: %q, want the working directory's file", got)
	}
}

func TestBadConfigIsAUsageErrorNamingTheField(t *testing.T) {
	dir := t.TempDir()
	f := &fakeFetcher{get: []capture.Capture{findingsCapture()}}
	for _, tc := range []struct{ doc, want string }{
		{`{"ignore": [{"rule": "legs_mismatch"}]}`, "p.json:1:13: ignore[0].reason: a reason is required"},
		{`{"baseline": "missing.json"}`, "p.json: the baseline file " + filepath.Join(dir, "missing.json") + " cannot be read"},
		{`{"ignore": []} trailing`, "p.json:1:16: trailing data after the document"},
	} {
		cfg := writeFile(t, dir, "p.json", tc.doc)
		_, errOut, code := runCLI(t, f, false, nil, "lint", "--config", cfg, lintURL)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.doc, code, errOut, tc.want)
		}
		if f.n != 0 {
			t.Fatal("a request was sent with a bad configuration")
		}
	}
	_, errOut, code := runCLI(t, f, false, nil, "lint", "--config", filepath.Join(dir, "none.json"), lintURL)
	if code != exitUsage || !strings.Contains(errOut, "--config: the file cannot be read") {
		t.Errorf("a missing --config: exit %d, %q", code, errOut)
	}
}

// scan --op lint and render apply the same suppressions.
func TestScanAndRenderApplySuppressions(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.json", futureIgnore)
	urls := writeFile(t, dir, "urls.txt", lintURL+"\n")
	f := &fakeFetcher{get: []capture.Capture{findingsCapture()}}
	sarifPath := filepath.Join(dir, "scan.sarif")
	_, errOut, code := runScanCLI(t, context.Background(), f, false, "", "--op", "lint", "--concurrency", "1", "--config", cfg,
		"--format", "sarif="+sarifPath, "--quiet", urls)
	if code != ExitOK {
		t.Fatalf("scan: exit %d, %s", code, errOut)
	}
	if got := suppressedSARIF(readSARIF(t, sarifPath)); got["legs_mismatch"] != "external: v1 clients are retired (until 2027-01-31)" || got["legs_entry_count"] != "" {
		t.Errorf("scan SARIF: %v", got)
	}
	if !strings.Contains(errOut, "suppressions: 1 findings suppressed") {
		t.Errorf("scan stderr: %q", errOut)
	}

	report, _, _ := runCLI(t, f, false, nil, "lint", "--json", lintURL)
	saved := writeFile(t, dir, "report.json", report)
	out, _, code := runCLI(t, f, false, nil, "render", "--config", cfg, "--format", "markdown", "--fail-on", "error", saved)
	if code != ExitUnexpected || !strings.Contains(out, "| error (suppressed) |") || !strings.Contains(out, "1 findings are suppressed") {
		t.Errorf("render: exit %d\n%s", code, out)
	}
	// A baseline written from saved reports holds them all.
	base := filepath.Join(dir, "b.json")
	if _, errOut, code := runCLI(t, f, false, nil, "render", "--write-baseline", base, "--format", "overall", "--fail-on", "warn", saved); code != ExitOK {
		t.Errorf("render --write-baseline: exit %d, %s", code, errOut)
	}
	writeFile(t, dir, "withbase.json", `{"baseline": "b.json"}`)
	if out, _, code := runCLI(t, f, false, nil, "render", "--config", filepath.Join(dir, "withbase.json"), "--format", "overall", "--fail-on", "warn", saved); code != ExitOK || out != "pass\n" {
		t.Errorf("render against the baseline: exit %d, %q", code, out)
	}
}
