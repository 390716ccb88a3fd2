package monitor_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// TestNextAlertFlaps: one row per flap sequence (P passing, F failing),
// the slots whose observation is announced.
func TestNextAlertFlaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   monitor.AlertPolicy
		seq      string
		announce string // "." nothing, "!" announced, per observation
	}{
		{"one flaky failure pages no one", monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}, "PPFPP", "....."},
		{"two failures in a row alert", monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}, "PFFF", "..!."},
		{"one success does not resolve", monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}, "PFFPFPP", "..!...!"},
		{"alternating never alerts", monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}, "PFPFPFPF", "........"},
		{"first observation failing is no change", monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}, "FFFPP", "....!"},
		{"zero policy is every change", monitor.AlertPolicy{}, "PFPPF", ".!!.!"},
		{"three before alert, one to resolve", monitor.AlertPolicy{FailuresBeforeAlert: 3, SuccessesBeforeResolve: 1}, "PFFPFFFP", "......!!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s store.AlertState
			var got strings.Builder
			for i, c := range tc.seq {
				var fired bool
				s, fired = monitor.NextAlert(s, int64(i+1)*60, c == 'P', tc.policy)
				if fired {
					got.WriteByte('!')
				} else {
					got.WriteByte('.')
				}
			}
			if got.String() != tc.announce {
				t.Errorf("%s: announced %s, want %s", tc.seq, got.String(), tc.announce)
			}
		})
	}
}

// TestNextAlertRetriesAndLateSlots: a slot counted again (a retried job)
// changes nothing and re-fires only the slot that fired; an older slot is
// not counted.
func TestNextAlertRetriesAndLateSlots(t *testing.T) {
	p := monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}
	s, _ := monitor.NextAlert(store.AlertState{}, 60, true, p)
	s, _ = monitor.NextAlert(s, 120, false, p)
	s, fired := monitor.NextAlert(s, 180, false, p)
	if !fired || s.FiredSlot != 180 {
		t.Fatalf("state %+v fired %v, want fired at 180", s, fired)
	}
	again, fired := monitor.NextAlert(s, 180, false, p)
	if !fired || again != s {
		t.Errorf("retry of the firing slot: %+v fired %v, want the same state, fired", again, fired)
	}
	late, fired := monitor.NextAlert(s, 150, true, p)
	if fired || late != s {
		t.Errorf("late older slot: %+v fired %v, want no change", late, fired)
	}
}

// TestAlertPolicyAcrossInstancesAndRestarts: two monitors on one SQLite
// file (two instances) alternate the checks of one endpoint, and one of
// them is reopened (a restart) between failures: the run of failures is
// counted across them, so the alert fires once, on the second failure.
func TestAlertPolicyAcrossInstancesAndRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	open := func() *sqlite.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	seq := []bool{true, false, false, false, true, true}
	i := 0
	obs := monitor.ObserverFunc(func(context.Context, monitor.Endpoint) (monitor.Observation, error) {
		o := monitor.Observation{Passing: seq[i], State: "POPULATED"}
		if !seq[i] {
			o.State = "NOT-A-402"
		}
		return o, nil
	})
	cfg := &monitor.Config{Endpoints: []monitor.Endpoint{{ID: "a", URL: "http://127.0.0.1:1/", Ops: []string{"check"}, Every: time.Minute,
		Alert: monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}}}, Retention: monitor.DefaultRetention}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var told []string
	mk := func(st *sqlite.Store) *monitor.Monitor {
		return &monitor.Monitor{Config: cfg, History: st, Observers: map[string]monitor.Observer{"check": obs},
			Now: func() time.Time { return now },
			Changed: func(_ context.Context, prev, cur store.Observation) error {
				told = append(told, string(monitor.OutcomeOf(prev))+">"+string(monitor.OutcomeOf(cur))+"@"+string(rune('0'+cur.Slot/60)))
				return nil
			}}
	}
	a, b := mk(open()), mk(open())
	for ; i < len(seq); i++ {
		m := []*monitor.Monitor{a, b}[i%2]
		if i == 3 {
			a = mk(open()) // a restart
		}
		now = now.Add(time.Minute)
		if _, _, err := m.Check(context.Background(), "a", "check", int64(i+1)*60); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(told, " ") != "passing>failing@3 failing>passing@6" {
		t.Errorf("told %v, want the alert at slot 3 and the resolution at slot 6", told)
	}
}
