package format

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

func suppressedRun(reason string) Run {
	entry := 0
	return Run{Op: "lint", ToolVersion: "test", Rules: LintRules(), Baselined: true, Results: []Result{{
		Op: "lint", URL: "https://api.example/x", Outcome: "conforms: no", Cases: []Case{
			{Name: "status_not_402", Findings: []Finding{{Rule: "status_not_402", Level: LevelError, Field: "http:status", Leg: "http", Message: "m1",
				Suppressed: &Suppression{Kind: SuppressedByIgnore, Reason: reason, Until: "2027-01-31"}}}},
			{Name: "fee_payer_missing", Findings: []Finding{{Rule: "fee_payer_missing", Level: LevelError, Field: "header:accepts[0].extra.feePayer", Leg: "header", Entry: &entry, Message: "m2",
				Suppressed: &Suppression{Kind: SuppressedByBaseline, Reason: "in the baseline"}}}},
			{Name: "amount_not_integer", Findings: []Finding{{Rule: "amount_not_integer", Level: LevelWarning, Field: "header:accepts[0].amount", Leg: "header", Entry: &entry, Message: "m3"}}},
		}}}}
}

// Suppressed findings stay in every format, marked, and count nowhere.
func TestSuppressedFindingsRenderMarkedAndUncounted(t *testing.T) {
	run := suppressedRun("the facilitator pays the fee")
	if got := run.Overall(); got != Warn {
		t.Errorf("overall %s, want warn (only the unsuppressed warning counts)", got)
	}
	if e, w, _ := run.Results[0].Counts(); e != 0 || w != 1 || run.Suppressed() != 2 {
		t.Errorf("counts %d %d, suppressed %d", e, w, run.Suppressed())
	}

	var sarif bytes.Buffer
	if err := SARIF(&sarif, run); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				RuleID       string `json:"ruleId"`
				Level        string `json:"level"`
				Suppressions []struct {
					Kind, Status, Justification string
				} `json:"suppressions"`
				BaselineState       string            `json:"baselineState"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	rs := doc.Runs[0].Results
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3 (suppressed ones included)", len(rs))
	}
	// In the findings' order (the suppressed ones go last only when the
	// run is over GitHub's result cap).
	if s := rs[0].Suppressions; rs[0].RuleID != "status_not_402" || rs[0].Level != "error" || len(s) != 1 || s[0].Kind != "external" ||
		s[0].Status != "accepted" || s[0].Justification != "the facilitator pays the fee (until 2027-01-31)" || rs[0].BaselineState != "new" {
		t.Errorf("result 0: %+v", rs[0])
	}
	if s := rs[1].Suppressions; len(s) != 1 || s[0].Justification != "in the baseline" || rs[1].BaselineState != "unchanged" {
		t.Errorf("result 1: %+v", rs[1])
	}
	if rs[2].RuleID != "amount_not_integer" || len(rs[2].Suppressions) != 0 || rs[2].BaselineState != "new" {
		t.Errorf("result 2: %+v", rs[2])
	}
	if problems := githubUploadProblems(sarif.Bytes()); len(problems) > 0 {
		t.Errorf("GitHub would refuse it: %v", problems)
	}
	f := run.Results[0].Cases[1].Findings[0]
	if got := rs[1].PartialFingerprints[FingerprintKey]; got != Fingerprint(run.Results[0].URL, f) {
		t.Errorf("SARIF fingerprint %s, Fingerprint %s", got, Fingerprint(run.Results[0].URL, f))
	}

	var gh bytes.Buffer
	_ = GitHub(&gh, run.Results)
	if want := "::notice title=status_not_402::https://api.example/x http:status: m1 (suppressed: the facilitator pays the fee)\n"; !strings.Contains(gh.String(), want) {
		t.Errorf("github:\n%s", gh.String())
	}
	if strings.Count(gh.String(), "::error") != 0 || strings.Count(gh.String(), "::warning") != 1 {
		t.Errorf("github: a suppressed finding is an error or warning annotation:\n%s", gh.String())
	}

	var ju bytes.Buffer
	_ = JUnit(&ju, run, FailOnWarn)
	var suites JUnitSuites
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Failures != 1 {
		t.Errorf("junit: %d failures, want 1 (the warning under --fail-on warn)\n%s", suites.Failures, ju.String())
	}
	if !strings.Contains(ju.String(), "(suppressed: the facilitator pays the fee)") || !strings.Contains(ju.String(), "(suppressed: in the baseline)") {
		t.Errorf("junit does not list the suppressed findings:\n%s", ju.String())
	}

	var md bytes.Buffer
	_ = Markdown(&md, run)
	for _, want := range []string{"| ⚠️ warn |", "| error (suppressed) |", "2 findings are suppressed"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// FuzzSuppressedInert: a reason of any text reaches no output as markup,
// a command or a control character.
func FuzzSuppressedInert(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reason string) {
		run := suppressedRun(reason)
		var gh bytes.Buffer
		_ = GitHub(&gh, run.Results)
		if strings.Count(gh.String(), "\n") != 3 {
			t.Fatalf("github: want three command lines: %q", gh.String())
		}
		var sarif bytes.Buffer
		if err := SARIF(&sarif, run); err != nil {
			t.Fatal(err)
		}
		if problems := githubUploadProblems(sarif.Bytes()); len(problems) > 0 {
			t.Fatalf("GitHub would refuse it: %v", problems)
		}
		for _, r := range sarif.String() {
			if unsafeRune(r) && r != '\n' {
				t.Fatalf("rune %U in the SARIF", r)
			}
		}
		var ju bytes.Buffer
		if err := JUnit(&ju, run, FailOnError); err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(ju.Bytes(), new(JUnitSuites)); err != nil {
			t.Fatalf("junit does not parse: %v", err)
		}
		var md bytes.Buffer
		_ = Markdown(&md, run)
		if n := strings.Count(md.String(), "\n| `https://api.example/x` |"); n != 4 {
			t.Fatalf("markdown: %d rows, want 4:\n%s", n, md.String())
		}
	})
}
