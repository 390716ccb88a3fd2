package suppress

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/format"
)

func intp(i int) *int { return &i }

// results are two endpoints' lint findings, as format maps them.
func results() []format.Result {
	return []format.Result{
		{Op: "lint", URL: "https://api.example/a", Cases: []format.Case{
			{Name: "status_not_402", Findings: []format.Finding{{Rule: "status_not_402", Level: format.LevelError, Leg: "http", Field: "http:status"}}},
			{Name: "fee_payer_missing", Findings: []format.Finding{
				{Rule: "fee_payer_missing", Level: format.LevelError, Leg: "header", Entry: intp(0), Field: "header:accepts[0].extra.feePayer"},
				{Rule: "fee_payer_missing", Level: format.LevelError, Leg: "body", Entry: intp(0), Field: "body:accepts[0].extra.feePayer"},
			}},
		}},
		{Op: "lint", URL: "https://api.example/b", Cases: []format.Case{
			{Name: "status_not_402", Findings: []format.Finding{{Rule: "status_not_402", Level: format.LevelError, Leg: "http", Field: "http:status"}}},
		}},
	}
}

var day = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

func mustConfig(t *testing.T, s string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func marks(rs []format.Result) []string {
	var out []string
	for _, r := range rs {
		for _, f := range r.Findings() {
			m := "-"
			if f.Suppressed != nil {
				m = string(f.Suppressed.Kind) + ":" + f.Suppressed.Reason
			}
			out = append(out, m)
		}
	}
	return out
}

func TestMatcherMarksWhatEachEntryNames(t *testing.T) {
	cases := []struct {
		name, config string
		want         string
	}{
		{"rule only: every endpoint", `{"ignore": [{"rule": "status_not_402", "reason": "free"}]}`, "ignore:free - - ignore:free"},
		{"rule and url", `{"ignore": [{"rule": "status_not_402", "url": "https://api.example/b", "reason": "free"}]}`, "- - - ignore:free"},
		{"url prefix", `{"ignore": [{"rule": "status_not_402", "url": "https://api.example/*", "reason": "free"}]}`, "ignore:free - - ignore:free"},
		{"field with its leg", `{"ignore": [{"rule": "fee_payer_missing", "field": "body:accepts[0].extra.feePayer", "reason": "v1"}]}`, "- - ignore:v1 -"},
		{"field without a leg: both legs", `{"ignore": [{"rule": "fee_payer_missing", "field": "accepts[0].extra.feePayer", "reason": "fac"}]}`, "- ignore:fac ignore:fac -"},
		{"field prefix", `{"ignore": [{"rule": "fee_payer_missing", "field": "header:*", "reason": "h"}]}`, "- ignore:h - -"},
		{"another rule: nothing", `{"ignore": [{"rule": "status_not_402x", "reason": "typo"}]}`, "- - - -"},
		{"future until holds", `{"ignore": [{"rule": "status_not_402", "url": "https://api.example/a", "reason": "r", "until": "2026-12-05"}]}`, "ignore:r - - -"},
		{"past until: expired", `{"ignore": [{"rule": "status_not_402", "url": "https://api.example/a", "reason": "r", "until": "2026-12-04"}]}`, "- - - -"},
		{"first live entry wins", `{"ignore": [{"rule": "status_not_402", "reason": "old", "until": "2020-01-01"}, {"rule": "status_not_402", "url": "https://api.example/*", "reason": "new"}]}`, "ignore:new - - ignore:new"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := results()
			m := NewMatcher(mustConfig(t, tc.config), nil, day)
			for i := range rs {
				m.Apply(&rs[i])
			}
			if got := strings.Join(marks(rs), " "); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSummarySaysWhichEntriesExpired(t *testing.T) {
	rs := results()
	m := NewMatcher(mustConfig(t, `{"ignore": [
		{"rule": "status_not_402", "reason": "old", "until": "2026-12-04"},
		{"rule": "fee_payer_missing", "reason": "fac", "until": "2027-01-01"},
		{"rule": "nothing_here", "reason": "stale"}]}`), nil, day)
	for i := range rs {
		m.Apply(&rs[i])
	}
	got := m.Summary()
	want := []IgnoreUse{
		{Index: 0, Rule: "status_not_402", Until: "2026-12-04", Expired: true, Matched: 2},
		{Index: 1, Rule: "fee_payer_missing", Until: "2027-01-01", Matched: 2},
		{Index: 2, Rule: "nothing_here"},
	}
	if got.Suppressed != 2 || got.ByIgnore != 2 || got.ByBaseline != 0 || len(got.Ignores) != 3 {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got.Ignores[i] != want[i] {
			t.Errorf("ignore %d: got %+v, want %+v", i, got.Ignores[i], want[i])
		}
	}
	// Only what is not suppressed counts.
	if e, _, _ := rs[0].Counts(); e != 1 || rs[0].Overall() != format.Fail || rs[0].Suppressed() != 2 {
		t.Errorf("endpoint a: %d errors, overall %s, %d suppressed", e, rs[0].Overall(), rs[0].Suppressed())
	}
}

// A baseline written today suppresses today's findings; a new finding
// tomorrow is not in it and counts.
func TestBaselineHoldsTodaysFindingsOnly(t *testing.T) {
	data := NewBaseline(results())
	b, err := ParseBaseline(data)
	if err != nil {
		t.Fatalf("the written baseline does not parse: %v\n%s", err, data)
	}
	if b.Len() != 4 {
		t.Errorf("%d findings recorded, want 4", b.Len())
	}
	tomorrow := results()
	tomorrow[1].Cases = append(tomorrow[1].Cases, format.Case{Name: "amount_not_integer", Findings: []format.Finding{
		{Rule: "amount_not_integer", Level: format.LevelError, Leg: "header", Entry: intp(1), Field: "header:accepts[1].amount"}}})
	m := NewMatcher(nil, b, day)
	for i := range tomorrow {
		m.Apply(&tomorrow[i])
	}
	if got := strings.Join(marks(tomorrow), " "); got != "baseline:in the baseline baseline:in the baseline baseline:in the baseline baseline:in the baseline -" {
		t.Errorf("got %s", got)
	}
	run := format.Run{Results: tomorrow}
	if run.Overall() != format.Fail {
		t.Error("the new finding does not fail the run")
	}
	run.Results = tomorrow[:1]
	if run.Overall() != format.Pass {
		t.Error("old findings only: the run does not pass")
	}
	if s := m.Summary(); s.ByBaseline != 4 || s.Baseline != 4 {
		t.Errorf("summary %+v", s)
	}
}

// A finding an ignore entry suppresses is not recorded: when the entry
// expires, the finding comes back.
func TestNewBaselineLeavesIgnoredFindingsToTheirEntry(t *testing.T) {
	rs := results()
	m := NewMatcher(mustConfig(t, `{"ignore": [{"rule": "status_not_402", "reason": "free", "until": "2026-12-31"}]}`), nil, day)
	for i := range rs {
		m.Apply(&rs[i])
	}
	data := NewBaseline(rs)
	if strings.Contains(string(data), "status_not_402") {
		t.Errorf("an ignored finding was recorded:\n%s", data)
	}
	if want := NewBaseline(rs); string(want) != string(data) {
		t.Error("the baseline is not deterministic")
	}
}

func TestParseBaselineRefusesEachBadFile(t *testing.T) {
	cases := map[string]string{
		"bad_version":       "version: want \"1\"",
		"wrong_fingerprint": "findings[0].fingerprint: is not the fingerprint",
		"negative_entry":    "findings[0].entry: wrong type",
		"bad_fingerprint":   "findings[0].fingerprint: want 64 lowercase hex digits",
		"unknown_key":       "unknown key (allowed: findings, version)",
	}
	files, _ := filepath.Glob("testdata/badbaseline/*.json")
	if len(files) != len(cases) {
		t.Errorf("%d files, %d cases", len(files), len(cases))
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/badbaseline", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseBaseline(data)
			var be *Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
}
