package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// Both is a store that keeps the history and answers the ecosystem
// report's aggregate reads (both adapters).
type Both interface {
	store.History
	store.Ecosystem
	store.Alerts
}

// RunEcosystem runs the conformance suite of store.Ecosystem: open returns
// a store on an empty database of its own.
func RunEcosystem(t *testing.T, open func(t *testing.T) Both) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s Both)
	}{
		{"ecosystem/round_trip_keeps_scheme_version_source", testEcosystemRoundTrip},
		{"ecosystem/latest_groups_count_each_endpoint_once_by_its_newest", testEcosystemLatest},
		{"ecosystem/latest_groups_since_is_inclusive", testEcosystemLatestSince},
		{"ecosystem/state_days_per_utc_day_op_state", testEcosystemStateDays},
		{"ecosystem/state_days_follow_prune", testEcosystemStateDaysPrune},
		{"ecosystem/invalid_fields_refused", testEcosystemInvalid},
		{"alerts/step_round_trip_and_no_op", testAlertRoundTrip},
		{"alerts/8_concurrent_steps_all_counted", testAlertConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func pf(endpoint string, slot int64, at time.Time, state, network, scheme string, version int, reasons ...string) store.Observation {
	return store.Observation{
		Endpoint: endpoint, Op: "preflight", Slot: slot, At: at, Passing: state == "GO", State: state,
		Reasons: reasons, Network: network, Scheme: scheme, X402Version: version, Source: "config",
	}
}

func testEcosystemRoundTrip(t *testing.T, s Both) {
	want := pf("a", 1, t0, "GO", "eip155:8453", "exact", 2)
	want.Source = "bazaar-1"
	add(t, s, want)
	got, ok, err := s.LatestObservation(context.Background(), "a", "preflight")
	if err != nil || !ok {
		t.Fatalf("LatestObservation: %v %v", ok, err)
	}
	if got.Scheme != "exact" || got.X402Version != 2 || got.Source != "bazaar-1" {
		t.Errorf("got scheme %q version %d source %q, want exact 2 bazaar-1", got.Scheme, got.X402Version, got.Source)
	}
	// A row with none of them reads back empty.
	add(t, s, obs("a", "check", 1, t0))
	if got := observations(t, s, "a", "check", time.Time{}, 1); got[0].Scheme != "" || got[0].X402Version != 0 || got[0].Source != "" {
		t.Errorf("got %+v, want empty scheme, version 0, empty source", got[0])
	}
}

func latest(t *testing.T, s Both, op string, since time.Time) []store.LatestGroup {
	t.Helper()
	got, err := s.LatestGroups(context.Background(), op, since)
	if err != nil {
		t.Fatalf("LatestGroups: %v", err)
	}
	return got
}

func testEcosystemLatest(t *testing.T, s Both) {
	// a: STOP then GO (its newest counts); b: HOLD on v1; c: GO; d: a late
	// observation of an older slot does not replace its newest (GO).
	for _, o := range []store.Observation{
		pf("a", 1, t0, "STOP", "", "", 0, "not_402"),
		pf("a", 2, t0.Add(time.Hour), "GO", "eip155:8453", "exact", 2),
		pf("b", 1, t0, "HOLD", "eip155:8453", "exact", 1, "lint_warnings", "method_open"),
		pf("c", 1, t0, "GO", "eip155:8453", "exact", 2),
		pf("d", 5, t0.Add(time.Hour), "GO", "eip155:8453", "exact", 2),
		pf("d", 4, t0.Add(2*time.Hour), "STOP", "", "", 0, "not_402"),
		obs("a", "check", 3, t0), // another op
	} {
		add(t, s, o)
	}
	got := latest(t, s, "preflight", time.Time{})
	want := []store.LatestGroup{
		{Op: "preflight", State: "GO", Network: "eip155:8453", Scheme: "exact", X402Version: 2, Source: "config", Endpoints: 3},
		{Op: "preflight", State: "HOLD", Network: "eip155:8453", Scheme: "exact", X402Version: 1, Source: "config", Reasons: []string{"lint_warnings", "method_open"}, Endpoints: 1},
	}
	if !slices.EqualFunc(got, want, groupEqual) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := latest(t, s, "lint", time.Time{}); len(got) != 0 {
		t.Errorf("lint: got %+v, want none", got)
	}
}

func groupEqual(a, b store.LatestGroup) bool {
	return a.Op == b.Op && a.State == b.State && a.Network == b.Network && a.Scheme == b.Scheme &&
		a.X402Version == b.X402Version && a.Source == b.Source && slices.Equal(a.Reasons, b.Reasons) && a.Endpoints == b.Endpoints
}

func testEcosystemLatestSince(t *testing.T, s Both) {
	add(t, s, pf("a", 1, t0, "GO", "", "", 0))
	add(t, s, pf("b", 1, t0.Add(-time.Millisecond), "GO", "", "", 0))
	got := latest(t, s, "preflight", t0)
	if len(got) != 1 || got[0].Endpoints != 1 {
		t.Errorf("got %+v, want one endpoint (at since counts, before it does not)", got)
	}
}

func stateDays(t *testing.T, s Both, since time.Time) []store.StateDay {
	t.Helper()
	got, err := s.StateDays(context.Background(), since)
	if err != nil {
		t.Fatalf("StateDays: %v", err)
	}
	return got
}

func stateDayEqual(a, b store.StateDay) bool {
	return a.Day.Equal(b.Day) && a.Op == b.Op && a.State == b.State && a.Checks == b.Checks
}

func testEcosystemStateDays(t *testing.T, s Both) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, o := range []store.Observation{
		pf("a", 1, day.Add(-time.Millisecond), "GO", "", "", 0), // the day before
		pf("a", 2, day, "GO", "", "", 0),
		pf("b", 2, day.Add(time.Hour), "GO", "", "", 0),
		pf("c", 2, day.Add(24*time.Hour-time.Millisecond), "STOP", "", "", 0),
		pf("a", 3, day.Add(24*time.Hour), "HOLD", "", "", 0), // the next day
		pf("a", 2, day, "GO", "", "", 0),                     // a repeat of a slot counts once
	} {
		s.AddObservation(context.Background(), o)
	}
	lo := obs("a", "lint", 2, day)
	lo.State = "conforms"
	add(t, s, lo)
	want := []store.StateDay{
		{Day: day.AddDate(0, 0, -1), Op: "preflight", State: "GO", Checks: 1},
		{Day: day, Op: "lint", State: "conforms", Checks: 1},
		{Day: day, Op: "preflight", State: "GO", Checks: 2},
		{Day: day, Op: "preflight", State: "STOP", Checks: 1},
		{Day: day.AddDate(0, 0, 1), Op: "preflight", State: "HOLD", Checks: 1},
	}
	if got := stateDays(t, s, day.Add(-time.Hour)); !slices.EqualFunc(got, want, stateDayEqual) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := stateDays(t, s, day.Add(time.Hour)); !slices.EqualFunc(got, want[1:], stateDayEqual) {
		t.Errorf("since within the day: got %+v, want the day counted whole", got)
	}
}

func testEcosystemStateDaysPrune(t *testing.T, s Both) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	add(t, s, pf("a", 1, day.Add(-time.Hour), "GO", "", "", 0))
	add(t, s, pf("a", 2, day.Add(time.Hour), "GO", "", "", 0))
	add(t, s, pf("a", 3, day.Add(5*time.Hour), "STOP", "", "", 0))
	if _, err := s.PruneObservations(context.Background(), day.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	want := []store.StateDay{{Day: day, Op: "preflight", State: "STOP", Checks: 1}}
	if got := stateDays(t, s, time.Time{}); !slices.EqualFunc(got, want, stateDayEqual) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func testEcosystemInvalid(t *testing.T, s Both) {
	for name, o := range map[string]store.Observation{
		"scheme_too_long":  pf("a", 1, t0, "GO", "", "abcdefghijklmnopq", 2),
		"scheme_not_code":  pf("a", 1, t0, "GO", "", "ex act", 2),
		"version_negative": pf("a", 1, t0, "GO", "", "exact", -1),
		"version_over":     pf("a", 1, t0, "GO", "", "exact", 256),
		"source_not_id":    func() store.Observation { o := pf("a", 1, t0, "GO", "", "", 0); o.Source = "Config"; return o }(),
	} {
		if ok, err := s.AddObservation(context.Background(), o); ok || err == nil {
			t.Errorf("%s: added %v, err %v; want refused", name, ok, err)
		}
	}
	if _, err := s.LatestGroups(context.Background(), "nope", t0); err == nil {
		t.Error("LatestGroups of an unknown op: no error")
	}
	if got := latest(t, s, "preflight", time.Time{}); len(got) != 0 {
		t.Errorf("refused writes left %+v", got)
	}
}

// ReportRollbackSQL undoes migration 0011 on a database, so that opening a
// store again applies it to the history already there.
var ReportRollbackSQL = []string{
	`DROP TABLE alert_states`,
	`DROP TABLE observation_states`,
	`ALTER TABLE observations DROP COLUMN scheme`,
	`ALTER TABLE observations DROP COLUMN x402_version`,
	`ALTER TABLE observations DROP COLUMN source`,
	`DELETE FROM schema_migrations WHERE version = 11`,
}

// RunReportBackfill: the daily state counts migration 0011 backfills from
// an existing history are the ones kept as the same observations landed.
// open and rollback as RunSummaryBackfill's (rollback runs
// ReportRollbackSQL).
func RunReportBackfill(t *testing.T, open func(t *testing.T) (Both, func()), rollback func(t *testing.T)) {
	s, closeStore := open(t)
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	states := []string{"GO", "HOLD", "STOP"}
	for _, ep := range []string{"a", "b", "c"} {
		for slot := int64(0); slot < 60; slot++ {
			add(t, s, pf(ep, slot, day.Add(time.Duration(slot)*time.Hour), states[(slot/7+int64(len(ep)))%3], "", "", 0))
		}
	}
	kept := stateDays(t, s, time.Time{})
	closeStore()
	rollback(t)
	s, closeStore = open(t)
	defer closeStore()
	if got := stateDays(t, s, time.Time{}); len(kept) < 6 || !slices.EqualFunc(got, kept, stateDayEqual) {
		t.Errorf("kept %+v, backfilled %+v", kept, got)
	}
}

func testAlertRoundTrip(t *testing.T, s Both) {
	ctx := context.Background()
	want := store.AlertState{Seen: true, Passing: true, Streak: 1, LastSlot: 120, FiredSlot: -1}
	got, err := s.StepAlert(ctx, "a", "check", func(cur store.AlertState) store.AlertState {
		if cur.Seen {
			t.Errorf("a new op's state %+v, want zero", cur)
		}
		return want
	})
	if err != nil || got != want {
		t.Fatalf("StepAlert: %+v %v", got, err)
	}
	// A step that changes nothing stores nothing and returns the state.
	got, err = s.StepAlert(ctx, "a", "check", func(cur store.AlertState) store.AlertState { return cur })
	if err != nil || got != want {
		t.Errorf("no-op step: %+v %v, want %+v", got, err, want)
	}
	other, _ := s.StepAlert(ctx, "a", "memo", func(cur store.AlertState) store.AlertState { return cur })
	if other.Seen {
		t.Errorf("another op's state %+v, want none", other)
	}
	if _, err := s.StepAlert(ctx, "A!", "check", func(cur store.AlertState) store.AlertState { return cur }); err == nil {
		t.Error("an invalid endpoint id: no error")
	}
}

func testAlertConcurrent(t *testing.T, s Both) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.StepAlert(ctx, "a", "lint", func(cur store.AlertState) store.AlertState {
				cur.Seen, cur.Streak, cur.LastSlot = true, cur.Streak+1, cur.LastSlot+60
				return cur
			}); err != nil {
				t.Errorf("StepAlert: %v", err)
			}
		}()
	}
	wg.Wait()
	got, _ := s.StepAlert(ctx, "a", "lint", func(cur store.AlertState) store.AlertState { return cur })
	if got.Streak != 8 || got.LastSlot != 480 {
		t.Errorf("state %+v, want 8 steps counted once each", got)
	}
}
