package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/verdict"
)

// schemaSHA256 pins the vendored schema (testdata/README.md says where it
// comes from).
const schemaSHA256 = "1c49a0f2b60444c71bb14878e21e0d882198eff4c539861b133093ad89ed798c"

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join("testdata", "sarif-schema-2.1.0.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != schemaSHA256 {
		t.Fatalf("the vendored SARIF schema changed (sha256 %x)", sum)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, raw []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the log is not JSON: %v", err)
	}
	return s.Validate(v)
}

// sarifRuns is a run of every op and shape the renderer meets.
func sarifRuns() []Run {
	e0 := 0
	lintRes := lint.Result{Status: 402, Findings: []lint.Finding{
		{Rule: "amount-digits", Severity: lint.Error, Leg: lint.LegHeader, Entry: &e0, Field: "accepts[0].amount", Message: "amount is not a string of digits"},
		{Rule: "cache-no-store", Severity: lint.Warn, Leg: lint.LegHTTP, Field: "Cache-Control", Message: "no Cache-Control: no-store"},
	}}
	pre, _ := FromPreflight(Preflight{URL: testURL, Decision: DecisionHold, Reasons: []PreflightReason{{Code: "method_open", Decision: DecisionHold}}})
	probe := FromReport(probeReport(func(r *verdict.ProbeResult) {
		r.Grades.Direct = verdict.RailGrade{Grade: verdict.PresentFailDirty, Reason: verdict.ReasonFailOpen2xx, Status: ip(200), FailOpen: true}
		r.Exposures = []string{"METHOD-UNPAID-2XX:GET", "FAIL-OPEN:direct"}
	}))
	return []Run{
		sampleRun(),
		{Op: "check", ToolVersion: "test", Rules: CriteriaRules("check")}, // no endpoint at all
		{Op: "check", Rules: CriteriaRules("check"), Results: []Result{Refused("check", "not a url", "unparseable"), Problem("check", testURL, "cancelled")}},
		{Op: "memo", ToolVersion: "test", Rules: CriteriaRules("memo"), Results: []Result{FromReport(memoReport(verdict.MemoReused, nil, bound()))}},
		{Op: "probe", ToolVersion: "test", Rules: CriteriaRules("probe"), Results: []Result{probe}},
		{Op: "lint", ToolVersion: "test", Rules: []Rule{{ID: "amount-digits", Level: LevelError, Description: "amounts are digits"}}, Results: []Result{FromLint(testURL, lintRes, nil)}},
		{Op: "preflight", ToolVersion: "test", Rules: PreflightRules([]PreflightReason{{Code: "method_open", Decision: DecisionHold}}), Results: []Result{pre}},
		{Op: "preflight", ToolVersion: "test", Rules: RulesOf("preflight"), Results: []Result{pre}},
		{Op: "lint", ToolVersion: "test", Rules: RulesOf("lint"), Results: []Result{FromLint(testURL, lintRes, RulesOf("lint"))}},
	}
}

type sarifDoc struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Properties struct {
				Endpoint string `json:"endpoint"`
			} `json:"properties"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIFValidatesAgainstTheSchema: every run is a valid SARIF 2.1.0 log
// with one run, the op's rules, one result per finding at the endpoint URL,
// and each result's ruleIndex names its rule.
func TestSARIFValidatesAgainstTheSchema(t *testing.T) {
	schema := sarifSchema(t)
	for _, run := range sarifRuns() {
		t.Run(run.Op, func(t *testing.T) {
			var b bytes.Buffer
			if err := SARIF(&b, run); err != nil {
				t.Fatal(err)
			}
			if err := validate(t, schema, b.Bytes()); err != nil {
				t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, b.String())
			}
			var doc sarifDoc
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Version != "2.1.0" || len(doc.Runs) != 1 || doc.Runs[0].Tool.Driver.Name != "payability" {
				t.Fatalf("version %q, %d runs", doc.Version, len(doc.Runs))
			}
			r := doc.Runs[0]
			var findings []Finding
			var urls []string
			for _, res := range run.Results {
				for _, f := range res.Findings() {
					findings = append(findings, f)
					urls = append(urls, res.URL)
				}
			}
			if len(r.Results) != len(findings) {
				t.Fatalf("%d results, want %d", len(r.Results), len(findings))
			}
			if len(r.Tool.Driver.Rules) < len(run.Rules) {
				t.Fatalf("%d rules, want at least the %d of the set", len(r.Tool.Driver.Rules), len(run.Rules))
			}
			for i, want := range run.Rules {
				if r.Tool.Driver.Rules[i].ID != want.ID {
					t.Errorf("rule %d is %s, want %s", i, r.Tool.Driver.Rules[i].ID, want.ID)
				}
			}
			for i, res := range r.Results {
				if res.RuleID != findings[i].Rule || res.Level != string(findings[i].Level) {
					t.Errorf("result %d: %s %s, want %s %s", i, res.RuleID, res.Level, findings[i].Rule, findings[i].Level)
				}
				if r.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
					t.Errorf("result %d: ruleIndex %d names %s", i, res.RuleIndex, r.Tool.Driver.Rules[res.RuleIndex].ID)
				}
				switch {
				case len(res.Locations) != 1:
					t.Errorf("result %d: %d locations", i, len(res.Locations))
				case res.Locations[0].PhysicalLocation == nil || res.Locations[0].PhysicalLocation.ArtifactLocation.URI != run.Artifact.URI():
					t.Errorf("result %d: location %+v, want the artifact %s", i, res.Locations[0], run.Artifact.URI())
				}
				if res.Properties.Endpoint != urls[i] || !strings.HasPrefix(res.Message.Text, sarifMessage(urls[i])+" ") {
					t.Errorf("result %d: endpoint %q, message %q, want %s in both", i, res.Properties.Endpoint, res.Message.Text, urls[i])
				}
			}
		})
	}
}

// TestSARIFValidatorIsReal: the same validator refuses logs that break the
// schema, so a passing validation means something.
func TestSARIFValidatorIsReal(t *testing.T) {
	schema := sarifSchema(t)
	var b bytes.Buffer
	_ = SARIF(&b, sampleRun())
	good := b.String()
	for name, bad := range map[string]string{
		"wrong version": strings.Replace(good, `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
		"bad level":     strings.Replace(good, `"level": "error"`, `"level": "fatal"`, 1),
		"unknown field": strings.Replace(good, `"runs": [`, `"rums": 1, "runs": [`, 1),
		"no tool":       `{"version":"2.1.0","runs":[{"results":[]}]}`,
	} {
		if bad == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if err := validate(t, schema, []byte(bad)); err == nil {
			t.Errorf("%s: the validator accepted it", name)
		}
	}
}

// TestJUnitParsesBack: one testsuite per endpoint, one testcase per rule or
// factor, failures for errors, and for warnings too with --fail-on warn.
func TestJUnitParsesBack(t *testing.T) {
	probe := FromReport(probeReport(func(r *verdict.ProbeResult) {
		r.Grades.Facilitator = verdict.RailGrade{Grade: verdict.PresentFailDirty, Reason: verdict.ReasonDirtyRejection, Status: ip(500)}
		r.Grades.Direct = verdict.RailGrade{Grade: verdict.Absent, Reason: verdict.ReasonPaymentNeverEvaluated, Status: ip(402)}
	}))
	run := sampleRun()
	run.Results = append(run.Results, probe)
	for _, tt := range []struct {
		failOn   FailOn
		failures []int // per suite
	}{
		{FailOnError, []int{3, 0, 0}},
		{FailOnNever, []int{3, 0, 0}},
		{FailOnWarn, []int{3, 0, 1}},
	} {
		t.Run(string(tt.failOn), func(t *testing.T) {
			var b bytes.Buffer
			if err := JUnit(&b, run, tt.failOn); err != nil {
				t.Fatal(err)
			}
			var doc JUnitSuites
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("does not parse back: %v\n%s", err, b.String())
			}
			if len(doc.Suites) != len(run.Results) {
				t.Fatalf("%d suites, want %d", len(doc.Suites), len(run.Results))
			}
			total, fails := 0, 0
			for i, s := range doc.Suites {
				res := run.Results[i]
				if s.Name != res.URL || len(s.Cases) != len(res.Cases) || s.Tests != len(res.Cases) {
					t.Errorf("suite %d: %q with %d cases, want %q with %d", i, s.Name, len(s.Cases), res.URL, len(res.Cases))
				}
				n := 0
				for j, c := range s.Cases {
					if c.Name != res.Cases[j].Name || c.Classname != "payability."+res.Op {
						t.Errorf("suite %d case %d: %q %q", i, j, c.Name, c.Classname)
					}
					if c.Failure != nil {
						n++
					}
				}
				if n != tt.failures[i] || s.Failures != n {
					t.Errorf("suite %d: %d failures (attribute %d), want %d", i, n, s.Failures, tt.failures[i])
				}
				total += s.Tests
				fails += n
			}
			if doc.Tests != total || doc.Failures != fails {
				t.Errorf("testsuites: tests %d failures %d, want %d %d", doc.Tests, doc.Failures, total, fails)
			}
			// A failing case carries its rule and message; a note is output.
			first := doc.Suites[0].Cases[0]
			if first.Failure == nil || first.Failure.Type != "error" || !strings.HasPrefix(first.Failure.Message, "check/UNCONFIGURED: state UNCONFIGURED") {
				t.Errorf("first case: %+v", first)
			}
			direct := doc.Suites[2].Cases[0]
			if direct.Failure != nil || !strings.Contains(direct.SystemOut, "note probe/ABSENT grades.direct") {
				t.Errorf("the ABSENT note: %+v", direct)
			}
		})
	}
}
