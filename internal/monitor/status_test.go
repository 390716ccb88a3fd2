package monitor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/verdict"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestStatusOf(t *testing.T) {
	pf := Endpoint{ID: "a", Ops: []string{"check", "lint", "preflight"}, Every: time.Minute}
	li := Endpoint{ID: "b", Ops: []string{"lint", "check"}, Every: time.Minute}
	none := Endpoint{ID: "c", Ops: []string{"check", "memo", "probe"}, Every: time.Minute}
	at := func(op, state string, age time.Duration) store.Observation {
		return store.Observation{Endpoint: "x", Op: op, State: state, At: t0.Add(-age)}
	}
	for _, tc := range []struct {
		name string
		e    Endpoint
		o    store.Observation
		ok   bool
		want Status
	}{
		{"preflight GO is operational", pf, at("preflight", "GO", 0), true, Operational},
		{"preflight HOLD is degraded", pf, at("preflight", "HOLD", 0), true, Degraded},
		{"preflight STOP is critical", pf, at("preflight", "STOP", 0), true, Critical},
		{"preflight wins over lint", pf, at("lint", "conforms", 0), true, Unknown},
		{"lint conforms is operational", li, at("lint", LintConforms, 0), true, Operational},
		{"lint warnings is degraded", li, at("lint", LintWarnings, 0), true, Degraded},
		{"lint errors is critical", li, at("lint", LintErrors, 0), true, Critical},
		{"no observation is unknown", pf, store.Observation{}, false, Unknown},
		{"exactly two intervals old still counts", pf, at("preflight", "GO", 2*time.Minute), true, Operational},
		{"older than two intervals is unknown", pf, at("preflight", "GO", 2*time.Minute+time.Millisecond), true, Unknown},
		{"without preflight or lint the status is unknown", none, at("check", "POPULATED", 0), true, Unknown},
		{"an unknown word is unknown", li, at("lint", "maybe", 0), true, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatusOf(tc.e, tc.o, tc.ok, t0); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestObservationAdapters(t *testing.T) {
	reason := verdict.ReasonTimeout
	memoReason := verdict.ReasonMemoAbsentOneFetch
	closed := verdict.RailGrade{Grade: verdict.PresentFailClosed}
	for _, tc := range []struct {
		name string
		got  Observation
		want Observation
	}{
		{"check POPULATED passes", CheckObservation(verdict.CheckResult{State: verdict.Populated}), Observation{Passing: true, State: "POPULATED"}},
		{"check AMOUNTS-ONLY fails", CheckObservation(verdict.CheckResult{State: verdict.AmountsOnly}), Observation{State: "AMOUNTS-ONLY"}},
		{"check NOT-A-402 carries its reason", CheckObservation(verdict.CheckResult{State: verdict.NotA402, Factors: verdict.CheckFactors{Reason: &reason}}),
			Observation{State: "NOT-A-402", Reasons: []string{"timeout"}}},
		{"memo BOUND passes", MemoObservation(verdict.MemoResult{State: verdict.Bound}), Observation{Passing: true, State: "BOUND"}},
		{"memo MEMO-ABSENT fails with its reason", MemoObservation(verdict.MemoResult{State: verdict.MemoAbsent, Reason: &memoReason}),
			Observation{State: "MEMO-ABSENT", Reasons: []string{memoReason}}},
		{"probe both closed no exposure passes", ProbeObservation(probe(closed, closed)), Observation{Passing: true, State: "PROBED"}},
		{"probe a dirty rail fails", ProbeObservation(probe(closed, verdict.RailGrade{Grade: verdict.PresentFailDirty})),
			Observation{State: "PROBED", Reasons: []string{"facilitator:PRESENT-FAIL-DIRTY"}}},
		{"probe an exposure fails", ProbeObservation(probe(closed, closed, "FAIL-OPEN:P1")),
			Observation{State: "PROBED", Reasons: []string{"FAIL-OPEN:P1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.Passing != tc.want.Passing || tc.got.State != tc.want.State || !slices.Equal(tc.got.Reasons, tc.want.Reasons) {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
			for _, r := range tc.got.Reasons {
				if !store.ValidCode(r) {
					t.Errorf("reason %q is not closed-form", r)
				}
			}
		})
	}
}

func probe(direct, fac verdict.RailGrade, exposures ...string) ops.ProbeReport {
	var r ops.ProbeReport
	r.ProbeResult.Outcome = verdict.Probed
	r.Grades.Direct, r.Grades.Facilitator = direct, fac
	r.Exposures = exposures
	return r
}

func TestLintAndPreflightObservations(t *testing.T) {
	f := func(rule string, sev lint.Severity) lint.Finding { return lint.Finding{Rule: rule, Severity: sev} }
	for _, tc := range []struct {
		name string
		got  Observation
		want Observation
	}{
		{"lint clean conforms and passes", LintObservation(true, nil), Observation{Passing: true, State: LintConforms}},
		{"lint info only conforms", LintObservation(true, []lint.Finding{f("x", lint.Info)}), Observation{Passing: true, State: LintConforms}},
		{"lint warnings pass with warnings", LintObservation(true, []lint.Finding{f("cache_control_no_store", lint.Warn)}),
			Observation{Passing: true, State: LintWarnings, Reasons: []string{"cache_control_no_store"}}},
		{"lint errors fail, errors first, each once", LintObservation(false, []lint.Finding{f("w1", lint.Warn), f("e1", lint.Error), f("e1", lint.Error)}),
			Observation{State: LintErrors, Reasons: []string{"e1", "w1"}}},
		{"preflight GO passes with its hash", PreflightObservation(preflight.Result{Decision: preflight.Go, TermsSHA256: ptr(strings.Repeat("a", 64))}),
			Observation{Passing: true, State: "GO", TermsSHA256: strings.Repeat("a", 64)}},
		{"preflight HOLD fails", PreflightObservation(preflight.Result{Decision: preflight.Hold, Reasons: []preflight.Reason{"lint_warnings"}}),
			Observation{State: "HOLD", Reasons: []string{"lint_warnings"}}},
		{"preflight STOP fails", PreflightObservation(preflight.Result{Decision: preflight.Stop, Reasons: []preflight.Reason{preflight.ReasonNot402}}),
			Observation{State: "STOP", Reasons: []string{"not_402"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.Passing != tc.want.Passing || tc.got.State != tc.want.State || !slices.Equal(tc.got.Reasons, tc.want.Reasons) || tc.got.TermsSHA256 != tc.want.TermsSHA256 {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
	var many []lint.Finding
	for i := range 40 {
		many = append(many, f(fmt.Sprintf("r%d", i), lint.Error))
	}
	if got := LintObservation(false, many); len(got.Reasons) != store.MaxReasons {
		t.Errorf("40 rules: %d reasons, want the first %d", len(got.Reasons), store.MaxReasons)
	}
}

func ptr(s string) *string { return &s }
