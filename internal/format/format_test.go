package format

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

const testURL = "https://seller.example/api/paid"

var testEnd = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func bp(b bool) *bool       { return &b }
func ip(i int) *int         { return &i }
func sp(s string) *string   { return &s }
func strp(s string) *string { return &s }

// populated is the factors of a POPULATED check.
func populated() verdict.CheckFactors {
	t := bp(true)
	return verdict.CheckFactors{
		HeaderPresent: t, HeaderDecodable: t, BodyParseable: t, RecipientPresent: t, TokenAccountPresent: t,
		MemoPresent: t, AmountsPresent: t, AmountsConsistent: t, ResourcePresent: t, ResourceEqualsCalledURL: t,
		HeaderBodyMemoEqual: t, HeaderBodyAmountEqual: t, HeaderBodyPayToEqual: t, DescriptionOverlong: bp(false),
		Status: ip(402),
	}
}

func checkReport(state verdict.State, f verdict.CheckFactors) ops.CheckReport {
	return ops.CheckReport{
		Envelope:    ops.NewEnvelope(ops.OpCheck, testURL, testEnd, criteria.CheckLine(string(state), testEnd)),
		CheckResult: verdict.CheckResult{State: state, Factors: f},
	}
}

type want struct {
	rule  string
	level Level
	field string
}

func findingsOf(r Result) []want {
	var out []want
	for _, f := range r.Findings() {
		out = append(out, want{f.Rule, f.Level, f.Field})
	}
	return out
}

func sameFindings(t *testing.T, got Result, w []want) {
	t.Helper()
	g := findingsOf(got)
	if len(g) != len(w) {
		t.Fatalf("findings %v, want %v", g, w)
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("finding %d is %v, want %v (all: %v)", i, g[i], w[i], g)
		}
	}
}

// TestCheckMapping: every check state; any state but POPULATED is an error
// on the state and on each failed factor its rule names; the description
// flag is a note.
func TestCheckMapping(t *testing.T) {
	mod := func(edit func(*verdict.CheckFactors)) verdict.CheckFactors {
		f := populated()
		edit(&f)
		return f
	}
	tests := []struct {
		name    string
		state   verdict.State
		f       verdict.CheckFactors
		want    []want
		overall Overall
	}{
		{"populated", verdict.Populated, populated(), nil, Pass},
		{"populated, long description", verdict.Populated, mod(func(f *verdict.CheckFactors) { f.DescriptionOverlong = bp(true) }),
			[]want{{"check/description_flag", LevelNote, "description_overlong"}}, Pass},
		{"not a 402", verdict.NotA402, verdict.CheckFactors{Reason: sp(verdict.ReasonStatusNot402), Status: ip(404)},
			[]want{{"check/NOT-A-402", LevelError, "state"}, {"check/NOT-A-402", LevelError, "reason"}}, Fail},
		{"resource mismatch", verdict.ResourceMismatch, mod(func(f *verdict.CheckFactors) { f.ResourceEqualsCalledURL = bp(false) }),
			[]want{{"check/RESOURCE-MISMATCH", LevelError, "state"}, {"check/RESOURCE-MISMATCH", LevelError, "resource_equals_called_url"}}, Fail},
		{"header missing", verdict.HeaderMissing, mod(func(f *verdict.CheckFactors) { f.HeaderPresent = bp(false); f.HeaderDecodable = bp(false) }),
			[]want{{"check/HEADER-MISSING", LevelError, "state"}, {"check/HEADER-MISSING", LevelError, "header_present"}, {"check/HEADER-MISSING", LevelError, "header_decodable"}}, Fail},
		{"header undecodable", verdict.HeaderMissing, mod(func(f *verdict.CheckFactors) { f.HeaderDecodable = bp(false) }),
			[]want{{"check/HEADER-MISSING", LevelError, "state"}, {"check/HEADER-MISSING", LevelError, "header_decodable"}}, Fail},
		{"amounts only", verdict.AmountsOnly, mod(func(f *verdict.CheckFactors) {
			f.RecipientPresent, f.TokenAccountPresent, f.MemoPresent = bp(false), bp(false), bp(false)
		}), []want{{"check/AMOUNTS-ONLY", LevelError, "state"}, {"check/AMOUNTS-ONLY", LevelError, "recipient_present"},
			{"check/AMOUNTS-ONLY", LevelError, "token_account_present"}, {"check/AMOUNTS-ONLY", LevelError, "memo_present"}}, Fail},
		{"unconfigured: memo and its equality", verdict.Unconfigured, mod(func(f *verdict.CheckFactors) {
			f.MemoPresent, f.HeaderBodyMemoEqual = bp(false), nil
		}), []want{{"check/UNCONFIGURED", LevelError, "state"}, {"check/UNCONFIGURED", LevelError, "memo_present"},
			{"check/UNCONFIGURED", LevelError, "header_body_memo_equal"}}, Fail},
		{"unconfigured: body does not parse", verdict.Unconfigured, mod(func(f *verdict.CheckFactors) { f.BodyParseable = bp(false) }),
			[]want{{"check/UNCONFIGURED", LevelError, "state"}, {"check/UNCONFIGURED", LevelError, "body_parseable"}}, Fail},
		{"unconfigured: amounts", verdict.Unconfigured, mod(func(f *verdict.CheckFactors) {
			f.AmountsConsistent, f.HeaderBodyAmountEqual, f.HeaderBodyPayToEqual = bp(false), bp(false), bp(false)
		}), []want{{"check/UNCONFIGURED", LevelError, "state"}, {"check/UNCONFIGURED", LevelError, "amounts_consistent"},
			{"check/UNCONFIGURED", LevelError, "header_body_amount_equal"}, {"check/UNCONFIGURED", LevelError, "header_body_pay_to_equal"}}, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromReport(checkReport(tt.state, tt.f))
			sameFindings(t, r, tt.want)
			if r.Overall() != tt.overall {
				t.Errorf("overall %s, want %s", r.Overall(), tt.overall)
			}
			if r.URL != testURL || r.Op != "check" || r.Outcome != string(tt.state) {
				t.Errorf("result %q %q %q", r.URL, r.Op, r.Outcome)
			}
			// The same cases on every run: state, every factor, the flag.
			if len(r.Cases) != 2+len(checkFactorNames()) {
				t.Errorf("%d cases, want %d", len(r.Cases), 2+len(checkFactorNames()))
			}
		})
	}
	// Every published state is covered and is a rule.
	rules := CriteriaRules("check")
	for _, s := range criteria.Payability().States {
		if !hasRule(rules, "check/"+s) {
			t.Errorf("no rule check/%s", s)
		}
	}
}

func hasRule(rules []Rule, id string) bool {
	for _, r := range rules {
		if r.ID == id {
			return r.Description != ""
		}
	}
	return false
}

func memoReport(state verdict.State, reason *string, f verdict.MemoFactors) ops.MemoReport {
	return ops.MemoReport{
		Envelope:   ops.NewEnvelope(ops.OpMemo, testURL, testEnd, criteria.MemoLine(string(state), testEnd)),
		MemoResult: verdict.MemoResult{State: state, Reason: reason, Factors: f},
	}
}

func readFetch() verdict.FetchFactors {
	t, f := bp(true), bp(false)
	return verdict.FetchFactors{FetchOK: true, Status: ip(402), Is402: t, BodyOverCap: f, BodyParseable: t,
		HeaderPresent: t, HeaderDecodable: t, BodyMemoPresent: t, HeaderMemoPresent: t}
}

func bound() verdict.MemoFactors {
	return verdict.MemoFactors{Fetch1: readFetch(), Fetch2: readFetch(), MemoEqualityFetch1: bp(true), MemoEqualityFetch2: bp(true),
		BodyMemosUnique: bp(true), HeaderMemosUnique: bp(true)}
}

// TestMemoMapping: every memo state; any state but BOUND is an error.
func TestMemoMapping(t *testing.T) {
	mod := func(edit func(*verdict.MemoFactors)) verdict.MemoFactors {
		f := bound()
		edit(&f)
		return f
	}
	tests := []struct {
		name   string
		state  verdict.State
		reason *string
		f      verdict.MemoFactors
		want   []want
	}{
		{"bound", verdict.Bound, nil, bound(), nil},
		{"second fetch failed", verdict.NotA402, nil, mod(func(f *verdict.MemoFactors) { f.Fetch2 = verdict.FetchFactors{} }),
			[]want{{"memo/NOT-A-402", LevelError, "state"}, {"memo/NOT-A-402", LevelError, "fetch2.fetch_ok"}}},
		{"first fetch 404", verdict.NotA402, nil, mod(func(f *verdict.MemoFactors) {
			f.Fetch1 = verdict.FetchFactors{FetchOK: true, Status: ip(404), Is402: bp(false), BodyOverCap: bp(false)}
		}), []want{{"memo/NOT-A-402", LevelError, "state"}, {"memo/NOT-A-402", LevelError, "fetch1.is_402"}}},
		{"body over cap", verdict.NotA402, nil, mod(func(f *verdict.MemoFactors) { f.Fetch1.BodyOverCap = bp(true) }),
			[]want{{"memo/NOT-A-402", LevelError, "state"}, {"memo/NOT-A-402", LevelError, "fetch1.body_over_cap"}}},
		{"memo absent", verdict.MemoAbsent, nil, mod(func(f *verdict.MemoFactors) {
			f.Fetch1.BodyMemoPresent, f.Fetch2.BodyMemoPresent = bp(false), bp(false)
		}), []want{{"memo/MEMO-ABSENT", LevelError, "state"}, {"memo/MEMO-ABSENT", LevelError, "fetch1.body_memo_present"},
			{"memo/MEMO-ABSENT", LevelError, "fetch2.body_memo_present"}}},
		{"memo absent in one fetch", verdict.MemoAbsent, strp(verdict.ReasonMemoAbsentOneFetch), mod(func(f *verdict.MemoFactors) {
			f.Fetch2.BodyMemoPresent = bp(false)
		}), []want{{"memo/MEMO-ABSENT", LevelError, "state"}, {"memo/MEMO-ABSENT", LevelError, "fetch2.body_memo_present"}}},
		{"leg mismatch", verdict.LegMismatch, nil, mod(func(f *verdict.MemoFactors) { f.MemoEqualityFetch2 = bp(false) }),
			[]want{{"memo/LEG-MISMATCH", LevelError, "state"}, {"memo/LEG-MISMATCH", LevelError, "memo_equality_fetch2"}}},
		{"binding not established", verdict.LegMismatch, strp(verdict.ReasonMemoBindingNotEstablished), bound(),
			[]want{{"memo/LEG-MISMATCH", LevelError, "state"}}},
		{"memo reused", verdict.MemoReused, nil, mod(func(f *verdict.MemoFactors) { f.BodyMemosUnique = bp(false) }),
			[]want{{"memo/MEMO-REUSED", LevelError, "state"}, {"memo/MEMO-REUSED", LevelError, "body_memos_unique"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromReport(memoReport(tt.state, tt.reason, tt.f))
			sameFindings(t, r, tt.want)
			wantOverall := Fail
			if tt.state == verdict.Bound {
				wantOverall = Pass
			}
			if r.Overall() != wantOverall {
				t.Errorf("overall %s, want %s", r.Overall(), wantOverall)
			}
			if tt.reason != nil && !strings.Contains(r.Findings()[0].Message, *tt.reason) {
				t.Errorf("the state finding does not name the reason: %q", r.Findings()[0].Message)
			}
		})
	}
	rules := CriteriaRules("memo")
	for _, s := range criteria.Payability().MemoOp.States {
		if !hasRule(rules, "memo/"+s) {
			t.Errorf("no rule memo/%s", s)
		}
	}
}

func closedGrade() verdict.RailGrade {
	return verdict.RailGrade{Grade: verdict.PresentFailClosed, Reason: verdict.ReasonRejectedWithReason, Status: ip(402)}
}

func probeReport(edit func(*verdict.ProbeResult)) ops.ProbeReport {
	r := verdict.ProbeResult{Outcome: verdict.Probed, Exposures: []string{},
		Grades: verdict.Grades{Direct: closedGrade(), Facilitator: closedGrade(), MissingMemo: closedGrade(), Bogus: closedGrade()}}
	edit(&r)
	line := criteria.ProbeLine(string(r.Grades.Direct.Grade), string(r.Grades.Facilitator.Grade), testEnd)
	return ops.ProbeReport{Envelope: ops.NewEnvelope(ops.OpProbe, testURL, testEnd, line), ProbeResult: r}
}

// TestProbeMapping: a FAIL-OPEN exposure is an error, METHOD-UNPAID-2XX and a
// PRESENT-FAIL-DIRTY (or UNGRADED) rail are warnings, an ABSENT rail a note;
// the missing_memo and bogus probes' other grades are notes.
func TestProbeMapping(t *testing.T) {
	dirty := verdict.RailGrade{Grade: verdict.PresentFailDirty, Reason: verdict.ReasonDirtyRejection, Status: ip(500)}
	open := verdict.RailGrade{Grade: verdict.PresentFailDirty, Reason: verdict.ReasonFailOpen2xx, Status: ip(200), FailOpen: true}
	absent := verdict.RailGrade{Grade: verdict.Absent, Reason: verdict.ReasonPaymentNeverEvaluated, Status: ip(402)}
	ungraded := verdict.RailGrade{Grade: verdict.Ungraded, Reason: verdict.ReasonBaselineFailed}
	tests := []struct {
		name    string
		edit    func(*verdict.ProbeResult)
		want    []want
		overall Overall
	}{
		{"closed", func(*verdict.ProbeResult) {}, nil, Pass},
		{"fail-open direct", func(r *verdict.ProbeResult) {
			r.Grades.Direct = open
			r.Exposures = []string{"FAIL-OPEN:direct"}
		}, []want{{"probe/FAIL-OPEN", LevelError, "grades.direct"}, {"probe/PRESENT-FAIL-DIRTY", LevelWarning, "grades.direct"}}, Fail},
		{"fail-open bogus", func(r *verdict.ProbeResult) {
			r.Grades.Bogus = open
			r.Exposures = []string{"FAIL-OPEN:bogus"}
		}, []want{{"probe/FAIL-OPEN", LevelError, "grades.bogus"}, {"probe/PRESENT-FAIL-DIRTY", LevelNote, "grades.bogus"}}, Fail},
		{"dirty facilitator", func(r *verdict.ProbeResult) { r.Grades.Facilitator = dirty },
			[]want{{"probe/PRESENT-FAIL-DIRTY", LevelWarning, "grades.facilitator"}}, Warn},
		{"absent rails", func(r *verdict.ProbeResult) { r.Grades.Direct, r.Grades.Facilitator = absent, absent },
			[]want{{"probe/ABSENT", LevelNote, "grades.direct"}, {"probe/ABSENT", LevelNote, "grades.facilitator"}}, Pass},
		{"dirty missing memo", func(r *verdict.ProbeResult) { r.Grades.MissingMemo = dirty },
			[]want{{"probe/PRESENT-FAIL-DIRTY", LevelNote, "grades.missing_memo"}}, Pass},
		{"unpaid GET and POST", func(r *verdict.ProbeResult) {
			r.Exposures = []string{"METHOD-UNPAID-2XX:GET", "METHOD-UNPAID-2XX:POST"}
		}, []want{{"probe/METHOD-UNPAID-2XX", LevelWarning, "methods.GET.unpaid_2xx"}, {"probe/METHOD-UNPAID-2XX", LevelWarning, "methods.POST.unpaid_2xx"}}, Warn},
		{"not probed", func(r *verdict.ProbeResult) {
			r.Outcome = verdict.NotProbed
			r.Grades = verdict.Grades{Direct: ungraded, Facilitator: ungraded, MissingMemo: ungraded, Bogus: ungraded}
		}, []want{{"probe/UNGRADED", LevelWarning, "grades.direct"}, {"probe/UNGRADED", LevelWarning, "grades.facilitator"},
			{"probe/UNGRADED", LevelNote, "grades.missing_memo"}, {"probe/UNGRADED", LevelNote, "grades.bogus"}}, Warn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromReport(probeReport(tt.edit))
			sameFindings(t, r, tt.want)
			if r.Overall() != tt.overall {
				t.Errorf("overall %s, want %s", r.Overall(), tt.overall)
			}
			if len(r.Cases) != 7 {
				t.Errorf("%d cases, want 4 graded probes and 3 methods", len(r.Cases))
			}
		})
	}
	rules := CriteriaRules("probe")
	for _, g := range append(criteria.RailProbe().Grades, "UNGRADED", "FAIL-OPEN", "METHOD-UNPAID-2XX") {
		if !hasRule(rules, "probe/"+g) {
			t.Errorf("no rule probe/%s", g)
		}
	}
}

// TestLintMapping: lint findings keep their severity (warn is a warning,
// info a note), one case per rule of the set, and a rule the set lacks gets
// its own case.
func TestLintMapping(t *testing.T) {
	e0 := 0
	res := lint.Result{Status: 402, Findings: []lint.Finding{
		{Rule: "amount-digits", Severity: lint.Error, Leg: lint.LegHeader, Entry: &e0, Field: "accepts[0].amount", Message: "amount is not a string of digits"},
		{Rule: "cache-no-store", Severity: lint.Warn, Leg: lint.LegHTTP, Field: "Cache-Control", Message: "no Cache-Control: no-store"},
		{Rule: "unlisted", Severity: lint.Info, Leg: lint.LegBody, Field: "", Message: "something to know"},
	}}
	rules := []Rule{{ID: "amount-digits", Level: LevelError}, {ID: "cache-no-store", Level: LevelWarning}, {ID: "scheme-known", Level: LevelWarning}}
	r := FromLint(testURL, res, rules)
	sameFindings(t, r, []want{
		{"amount-digits", LevelError, "header:accepts[0].amount"},
		{"cache-no-store", LevelWarning, "http:Cache-Control"},
		{"unlisted", LevelNote, "body"},
	})
	if len(r.Cases) != 4 || r.Cases[2].Name != "scheme-known" || len(r.Cases[2].Findings) != 0 || r.Cases[3].Name != "unlisted" {
		t.Errorf("cases %+v", r.Cases)
	}
	if r.Overall() != Fail || r.Outcome != "conforms: no" || r.Op != "lint" {
		t.Errorf("overall %s, outcome %q", r.Overall(), r.Outcome)
	}
	clean := FromLint(testURL, lint.Result{Status: 402, Conforms: true}, rules)
	if clean.Overall() != Pass || clean.Outcome != "conforms: yes" {
		t.Errorf("clean lint: %s %q", clean.Overall(), clean.Outcome)
	}
}

// TestPreflightAdapter: STOP is an error, HOLD a warning, each reason at its
// own class; a record that breaks the decision table's shape is refused.
func TestPreflightAdapter(t *testing.T) {
	stop := PreflightReason{Code: "fail_open", Decision: DecisionStop}
	hold := PreflightReason{Code: "challenge_static", Decision: DecisionHold}
	tests := []struct {
		name    string
		p       Preflight
		want    []want
		overall Overall
		err     bool
	}{
		{"go", Preflight{URL: testURL, Decision: DecisionGo}, nil, Pass, false},
		{"hold", Preflight{URL: testURL, Decision: DecisionHold, Reasons: []PreflightReason{hold}},
			[]want{{"preflight/HOLD", LevelWarning, "decision"}, {"preflight/challenge_static", LevelWarning, "reasons"}}, Warn, false},
		{"stop with a hold reason too", Preflight{URL: testURL, Decision: DecisionStop, Reasons: []PreflightReason{stop, hold}},
			[]want{{"preflight/STOP", LevelError, "decision"}, {"preflight/fail_open", LevelError, "reasons"}, {"preflight/challenge_static", LevelWarning, "reasons"}}, Fail, false},
		{"go with a reason", Preflight{Decision: DecisionGo, Reasons: []PreflightReason{hold}}, nil, "", true},
		{"hold with a stop reason", Preflight{Decision: DecisionHold, Reasons: []PreflightReason{hold, stop}}, nil, "", true},
		{"stop without a stop reason", Preflight{Decision: DecisionStop, Reasons: []PreflightReason{hold}}, nil, "", true},
		{"hold without a reason", Preflight{Decision: DecisionHold}, nil, "", true},
		{"unknown decision", Preflight{Decision: "MAYBE"}, nil, "", true},
		{"unknown class", Preflight{Decision: DecisionStop, Reasons: []PreflightReason{stop, {Code: "x", Decision: "GO"}}}, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := FromPreflight(tt.p)
			if tt.err {
				if err == nil {
					t.Fatalf("no error for %+v", tt.p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sameFindings(t, r, tt.want)
			if r.Overall() != tt.overall || r.Outcome != tt.p.Decision {
				t.Errorf("overall %s outcome %q", r.Overall(), r.Outcome)
			}
		})
	}
	rules := PreflightRules([]PreflightReason{stop, hold})
	if len(rules) != 4 || rules[2] != (Rule{ID: "preflight/fail_open", Level: LevelError}) || rules[3].Level != LevelWarning {
		t.Errorf("rules %+v", rules)
	}
}

// TestOverallAndFailOn: overall is fail on any error, warn on any warning,
// else pass; --fail-on trips at its level.
func TestOverallAndFailOn(t *testing.T) {
	res := func(levels ...Level) Result {
		var c Case
		for _, l := range levels {
			c.Findings = append(c.Findings, Finding{Rule: "r", Level: l})
		}
		return Result{Cases: []Case{c}}
	}
	tests := []struct {
		levels  []Level
		overall Overall
		trips   map[FailOn]bool
	}{
		{nil, Pass, map[FailOn]bool{FailOnError: false, FailOnWarn: false, FailOnNever: false}},
		{[]Level{LevelNote}, Pass, map[FailOn]bool{FailOnError: false, FailOnWarn: false, FailOnNever: false}},
		{[]Level{LevelNote, LevelWarning}, Warn, map[FailOn]bool{FailOnError: false, FailOnWarn: true, FailOnNever: false}},
		{[]Level{LevelWarning, LevelError}, Fail, map[FailOn]bool{FailOnError: true, FailOnWarn: true, FailOnNever: false}},
	}
	for _, tt := range tests {
		r := res(tt.levels...)
		if r.Overall() != tt.overall {
			t.Errorf("%v: overall %s, want %s", tt.levels, r.Overall(), tt.overall)
		}
		for f, w := range tt.trips {
			if f.Trips(r.Overall()) != w {
				t.Errorf("%v: --fail-on %s trips %v, want %v", tt.levels, f, !w, w)
			}
		}
	}
	run := Run{Results: []Result{res(), res(LevelWarning), res(LevelNote)}}
	if run.Overall() != Warn {
		t.Errorf("run overall %s, want warn", run.Overall())
	}
	if (Run{}).Overall() != Pass {
		t.Error("an empty run is not pass")
	}
	for _, s := range []string{"error", "warn", "never"} {
		if _, err := ParseFailOn(s); err != nil {
			t.Errorf("ParseFailOn(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "warning", "ERROR", "note"} {
		if _, err := ParseFailOn(s); err == nil {
			t.Errorf("ParseFailOn(%q) accepted", s)
		}
	}
}

// sampleRun is a run over three endpoints: failing, warning, passing.
func sampleRun() Run {
	unconf := populated()
	unconf.MemoPresent, unconf.HeaderBodyMemoEqual = bp(false), nil
	return Run{Op: "check", ToolVersion: "test", Rules: CriteriaRules("check"), Results: []Result{
		FromReport(checkReport(verdict.Unconfigured, unconf)),
		FromReport(checkReport(verdict.Populated, populated())),
	}}
}

// TestGitHubLines: one workflow command per finding, asserted line by line.
func TestGitHubLines(t *testing.T) {
	unconf := populated()
	unconf.MemoPresent = bp(false)
	probe := probeReport(func(r *verdict.ProbeResult) {
		r.Grades.Facilitator = verdict.RailGrade{Grade: verdict.Absent, Reason: verdict.ReasonPaymentNeverEvaluated, Status: ip(402)}
		r.Exposures = []string{"METHOD-UNPAID-2XX:HEAD"}
	})
	var b bytes.Buffer
	if err := GitHub(&b, []Result{FromReport(checkReport(verdict.Unconfigured, unconf)), FromReport(probe), FromReport(checkReport(verdict.Populated, populated()))}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"::error title=check/UNCONFIGURED::" + testURL + " state: state UNCONFIGURED: An amount or a core field is absent or inconsistent, a header-to-body equality fails, or the body does not decode.",
		"::error title=check/UNCONFIGURED::" + testURL + " memo_present: memo_present is false",
		"::notice title=probe/ABSENT::" + testURL + " grades.facilitator: rail facilitator graded ABSENT (reason payment_never_evaluated) (status 402)",
		"::warning title=probe/METHOD-UNPAID-2XX::" + testURL + " methods.HEAD.unpaid_2xx: exposure METHOD-UNPAID-2XX:HEAD: A method was answered 2xx without any payment.",
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestGitHubEscaping: data escapes %, CR and LF; properties also : and ,.
func TestGitHubEscaping(t *testing.T) {
	tests := []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"x:y,z", "x:y,z", "x%3Ay%2Cz"},
		{"%0A", "%250A", "%250A"},
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
	}
	for _, tt := range tests {
		if got := escapeData(tt.in); got != tt.data {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := escapeProperty(tt.in); got != tt.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.prop)
		}
	}
	// A URL with a line break cannot start a second command.
	var b bytes.Buffer
	_ = GitHub(&b, []Result{Refused("check", "https://x.example/\n::error::forged", "scheme_not_http")})
	if strings.Count(b.String(), "\n") != 1 || strings.Contains(b.String(), "\n::error::forged") {
		t.Errorf("a line break escaped the command: %q", b.String())
	}
	_ = GitHub(&b, []Result{{URL: testURL, Cases: []Case{{Findings: []Finding{{Rule: "a:b,c", Level: LevelError}}}}}})
	if !strings.Contains(b.String(), "title=a%3Ab%2Cc::") {
		t.Errorf("title not escaped: %q", b.String())
	}
}

// TestMarkdown: a heading with the overall, a row per endpoint, a row per
// finding, cells escaped.
func TestMarkdown(t *testing.T) {
	run := sampleRun()
	run.Results = append(run.Results, Refused("check", "https://x.example/a|b<c>", "credentials_in_url"))
	var b bytes.Buffer
	if err := Markdown(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"### payability check: fail\n",
		"| `" + testURL + "` | ❌ fail | `UNCONFIGURED` | 3 | 0 | 0 |\n",
		"| `" + testURL + "` | ✅ pass | `POPULATED` | 0 | 0 | 0 |\n",
		"| `https://x.example/a\\|b<c>` | ❌ fail | `refused: credentials_in_url` | 1 | 0 | 0 |\n",
		"| `" + testURL + "` | error | `check/UNCONFIGURED` | `memo_present` | `memo_present is false` |\n",
		"| `" + testURL + "` | error | `check/UNCONFIGURED` | `header_body_memo_equal` | `header_body_memo_equal is null: neither leg carries the field` |\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("markdown lacks %q:\n%s", s, out)
		}
	}
	// Every table row has the same number of unescaped pipes as its header.
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		n := strings.Count(l, "|") - strings.Count(l, `\|`)
		if n != 7 && n != 6 {
			t.Errorf("row with %d cell separators: %q", n, l)
		}
	}
	for in, want := range map[string]string{
		"a|b\\c\nd":    "`a\\|b\\c d`",
		"":             "",
		"x`y":          "``x`y``",
		"`x":           "`` `x ``",
		" x ":          "`  x  `",
		"  ":           "`  `",
		"a``b`":        "``` a``b` ```",
		"e\x1b[1m\x00": "`e\uFFFD[1m\uFFFD`",
	} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
	b.Reset()
	_ = Markdown(&b, Run{Op: "check", Results: []Result{FromReport(checkReport(verdict.Populated, populated()))}})
	if !strings.Contains(b.String(), "No findings.") || !strings.HasPrefix(b.String(), "### payability check: pass") {
		t.Errorf("a clean run:\n%s", b.String())
	}
}

// TestLinesAndOverall: scan's text lines and the one-word overall.
func TestLinesAndOverall(t *testing.T) {
	run := sampleRun()
	run.Results = append(run.Results, Problem("check", "https://x.example/\tz", "cancelled"))
	var b bytes.Buffer
	_ = Lines(&b, run.Results)
	want := "fail\t" + testURL + "\tUNCONFIGURED\npass\t" + testURL + "\tPOPULATED\nfail\t\"https://x.example/\\tz\"\terror: cancelled\n"
	if b.String() != want {
		t.Errorf("lines:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	_ = WriteOverall(&b, run)
	if b.String() != "fail\n" {
		t.Errorf("overall %q", b.String())
	}
}

// TestMarkdownBoundsFindingRows: past MarkdownMaxFindings rows, one line
// counts the rest.
func TestMarkdownBoundsFindingRows(t *testing.T) {
	var results []Result
	for i := 0; i < MarkdownMaxFindings+5; i++ {
		results = append(results, Refused("check", testURL, "url_scheme"))
	}
	var b bytes.Buffer
	_ = Markdown(&b, Run{Op: "check", Results: results})
	if n := strings.Count(b.String(), "| error | `refused/url_scheme` |"); n != MarkdownMaxFindings {
		t.Errorf("%d finding rows, want %d", n, MarkdownMaxFindings)
	}
	if !strings.Contains(b.String(), "… and 5 more findings") || strings.Count(b.String(), "refused: url_scheme") != MarkdownMaxFindings+5 {
		t.Errorf("no count of the rest, or endpoint rows missing")
	}
	b.Reset()
	_ = Markdown(&b, Run{Op: "check", Results: results[:MarkdownMaxFindings]})
	if strings.Contains(b.String(), "more findings") {
		t.Error("a count line at exactly the bound")
	}
}
