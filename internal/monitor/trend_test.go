package monitor

import (
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

func ob(op string, at time.Time, passing bool) store.Observation {
	return store.Observation{Endpoint: "a", Op: op, At: at, Passing: passing, State: "S"}
}

func TestStrip(t *testing.T) {
	now := time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)
	first := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	counts := []store.ObservationDay{
		{Day: first.AddDate(0, 0, -1), Checks: 5, Passing: 5}, // the day before the strip: ignored
		{Day: first, Checks: 2, Passing: 2},
		{Day: first.AddDate(0, 0, 1), Checks: 1, Passing: 0},
		{Day: first.AddDate(0, 0, 2), Checks: 2, Passing: 1},
		{Day: now.Truncate(24 * time.Hour), Checks: 1, Passing: 1},
		{Day: now.AddDate(0, 0, 1), Checks: 9, Passing: 0}, // tomorrow: ignored
	}
	got := Strip(counts, now, StripDays)
	if len(got) != 30 || got[0].Date != "2026-03-01" || got[29].Date != "2026-03-30" {
		t.Fatalf("days %d, %s..%s", len(got), got[0].Date, got[len(got)-1].Date)
	}
	for i, want := range map[int]Day{
		0:  {"2026-03-01", 2, 2, DayPassing},
		1:  {"2026-03-02", 1, 0, DayFailing},
		2:  {"2026-03-03", 2, 1, DayMixed},
		3:  {"2026-03-04", 0, 0, DayNone},
		29: {"2026-03-30", 1, 1, DayPassing},
	} {
		if got[i] != want {
			t.Errorf("day %d: %+v, want %+v", i, got[i], want)
		}
	}
	if n, p := Share(got); n != 6 || *p != 66.7 {
		t.Errorf("share: %d %v, want 6 and 66.7 (4 of 6)", n, *p)
	}
	if n, p := Share(Strip(nil, now, StripDays)); n != 0 || p != nil {
		t.Errorf("no checks: %d %v, want 0 and no figure", n, p)
	}
}

func TestChanges(t *testing.T) {
	obs := []store.Observation{
		ob("check", t0, true),                  // first of check: no change
		ob("memo", t0, false),                  // first of memo: no change
		ob("check", t0.Add(time.Minute), true), // same
		ob("check", t0.Add(2*time.Minute), false),
		ob("memo", t0.Add(2*time.Minute), false),
		ob("check", t0.Add(3*time.Minute), true),
	}
	got := Changes(obs)
	if len(got) != 2 || got[0].From != Passing || got[0].To != Failing || !got[0].At.Equal(t0.Add(2*time.Minute)) ||
		got[1].To != Passing || got[1].Op != "check" {
		t.Errorf("changes %+v", got)
	}
}

func TestActiveIncident(t *testing.T) {
	st := func(state string, min int, reasons ...string) store.Observation {
		return store.Observation{Op: "preflight", State: state, At: t0.Add(time.Duration(min) * time.Minute), Reasons: reasons}
	}
	if got := ActiveIncident("preflight", nil); got != nil {
		t.Errorf("no history: %+v", got)
	}
	if got := ActiveIncident("preflight", []store.Observation{st("STOP", 0, "not_402"), st("GO", 1)}); got != nil {
		t.Errorf("latest GO: %+v", got)
	}
	if got := ActiveIncident("preflight", []store.Observation{st("STOP", 0, "x"), st("HOLD", 1), st("STOP", 2, "not_402", "fail_open"), st("STOP", 3, "fail_open")}); got == nil ||
		got.FailureStage != "not_402" || !got.OpenedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("current run: %+v, want opened at the run's first STOP with its first reason", got)
	}
	if got := ActiveIncident("lint", []store.Observation{{Op: "lint", State: LintErrors, At: t0, Reasons: []string{"status_not_402"}}}); got == nil || got.FailureStage != "status_not_402" {
		t.Errorf("lint errors: %+v", got)
	}
}
