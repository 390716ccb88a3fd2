package format

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenRuns are one run per op, with passing, warning and failing
// endpoints.
func goldenRuns(t *testing.T) map[string]Run {
	unconf := populated()
	unconf.MemoPresent, unconf.HeaderBodyMemoEqual = bp(false), nil
	probe := FromReport(probeReport(func(r *verdict.ProbeResult) {
		r.Grades.Direct = verdict.RailGrade{Grade: verdict.PresentFailDirty, Reason: verdict.ReasonFailOpen2xx, Status: ip(200), FailOpen: true}
		r.Grades.Facilitator = verdict.RailGrade{Grade: verdict.Absent, Reason: verdict.ReasonPaymentNeverEvaluated, Status: ip(402)}
		r.Exposures = []string{"METHOD-UNPAID-2XX:HEAD", "FAIL-OPEN:direct"}
	}))
	e0 := 0
	lintRep := ops.LintReport{Op: ops.OpLint, URL: testURL, Method: "GET", Status: 402, Findings: []lint.Finding{
		{Rule: "pipe|rule", Severity: lint.Error, Leg: lint.LegHeader, Entry: &e0, Field: "accepts[0].amount", Message: "a message with | a pipe, 100% and a:colon"},
		{Rule: "other", Severity: lint.Info, Leg: lint.LegHTTP, Field: "Cache-Control", Message: "worth knowing"},
	}}
	pre, err := FromPreflightReport(ops.NewPreflightReport(testURL, testEnd, preflight.Result{Decision: preflight.Hold,
		Reasons: []preflight.Reason{preflight.ReasonChallengeStatic, preflight.ReasonMethodOpen}}))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Run{
		"check": {Op: "check", ToolVersion: "test", Rules: RulesOf("check"), Results: []Result{
			FromReport(checkReport(verdict.Unconfigured, unconf)), FromReport(checkReport(verdict.Populated, populated())),
			Refused("check", "ftp://x.example/", "url_scheme")},
			Artifact: NewArtifact("ci/urls.txt", "", []byte("# sellers\n  - "+testURL+"\r\nftp://x.example/\n"))},
		"probe":     {Op: "probe", ToolVersion: "test", Rules: RulesOf("probe"), Results: []Result{probe}},
		"lint":      {Op: "lint", ToolVersion: "test", Rules: RulesOf("lint")[:2], Results: []Result{FromLint(lintRep.URL, lint.Result{Findings: lintRep.Findings}, RulesOf("lint")[:2])}},
		"preflight": {Op: "preflight", ToolVersion: "test", Rules: RulesOf("preflight"), Results: []Result{pre}},
	}
}

// TestGoldenFormats pins every rendering of every op (go test -update
// rewrites them).
func TestGoldenFormats(t *testing.T) {
	for op, run := range goldenRuns(t) {
		for _, f := range []struct {
			ext    string
			render func(*bytes.Buffer) error
		}{
			{"github.txt", func(b *bytes.Buffer) error { return GitHub(b, run.Results) }},
			{"sarif", func(b *bytes.Buffer) error { return SARIF(b, run) }},
			{"junit.xml", func(b *bytes.Buffer) error { return JUnit(b, run, FailOnWarn) }},
			{"md", func(b *bytes.Buffer) error { return Markdown(b, run) }},
			{"lines.txt", func(b *bytes.Buffer) error { return Lines(b, run.Results) }},
		} {
			var b bytes.Buffer
			if err := f.render(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", op+"."+f.ext)
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./internal/format -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from its golden file:\n%s", path, b.String())
			}
		}
	}
}
