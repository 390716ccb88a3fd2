package schedule_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store"
)

// checkJobs lists the check jobs River holds, as "endpoint/op/slot", sorted.
func checkJobs(t *testing.T, db schedule.Database) []string {
	t.Helper()
	conn, err := schedule.OpenSQLite(db.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT json_extract(args, '$.endpoint'), json_extract(args, '$.op'), json_extract(args, '$.slot')
		FROM river_job WHERE kind = 'payability_monitor_check'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			id, op string
			slot   int64
		)
		if err := rows.Scan(&id, &op, &slot); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%s/%d", id, op, slot))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// jobsOf keeps the jobs of endpoint id.
func jobsOf(jobs []string, id string) []string {
	var out []string
	for _, j := range jobs {
		if strings.HasPrefix(j, id+"/") {
			out = append(out, j)
		}
	}
	return out
}

// TestEnqueuerFollowsTheStore: the one enqueuer schedules the stored
// endpoint set, not the file's: the file's seed, an endpoint the API adds
// (checked at once when its offset in the current period has passed, on
// this instance by Refresh, on another at its next read), an interval
// changed, and never a deleted or retired one. No client runs: the jobs
// are read from River's table, so nothing depends on the clock.
func TestEnqueuerFollowsTheStore(t *testing.T) {
	h, db := openSQLite(t)
	cat := h.(store.EndpointCatalog)
	ctx := context.Background()
	every := time.Hour
	// The monitor's clock: in the current hour, just after c's offset, so
	// c's check of this period is due already when c is added.
	slot := schedule.SlotOf(time.Now(), every)
	now := time.Unix(slot, 0).Add(schedule.Offset("c", "check", every) + time.Second)
	m := newMonitor(config(every, "a", "b"), h, &counter{})
	m.Catalog = cat
	m.Now = func() time.Time { return now }
	if err := m.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	open := func() *schedule.Scheduler {
		s, err := schedule.Open(ctx, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	s, other := open(), open()
	next := time.Unix(slot, 0).Add(every)
	if _, err := s.EnqueueWindow(ctx, next, next.Add(every)); err != nil {
		t.Fatal(err)
	}
	if got, want := checkJobs(t, db), []string{
		fmt.Sprintf("a/check/%d", slot+3600), fmt.Sprintf("b/check/%d", slot+3600),
	}; !slices.Equal(got, want) {
		t.Fatalf("the seed's window: %v, want %v", got, want)
	}
	if _, err := other.EnqueueWindow(ctx, next, next.Add(every)); err != nil { // the other instance reads the set once
		t.Fatal(err)
	}

	// The API adds c: Refresh (what a poke runs) schedules its passed
	// check of this period at once.
	if err := m.Add(ctx, []monitor.Endpoint{{ID: "c", URL: "http://127.0.0.1:1/c", Method: "GET", Ops: []string{"check"}, Every: every}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := jobsOf(checkJobs(t, db), "c"), []string{fmt.Sprintf("c/check/%d", slot)}; !slices.Equal(got, want) {
		t.Fatalf("c after the add: %v, want %v (this period's, at once)", got, want)
	}
	// The other instance sees the change at its next read: the window has
	// c, and its catch-up of c is the same job (unique), not a second.
	if _, err := other.EnqueueWindow(ctx, next, next.Add(every)); err != nil {
		t.Fatal(err)
	}
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := jobsOf(checkJobs(t, db), "c"), []string{fmt.Sprintf("c/check/%d", slot), fmt.Sprintf("c/check/%d", slot+3600)}; !slices.Equal(got, want) {
		t.Fatalf("c after the other instance's tick: %v, want %v", got, want)
	}

	// c's interval becomes 2h: its next checks are on 2h slots.
	c2 := monitor.Endpoint{ID: "c", URL: "http://127.0.0.1:1/c", Method: "GET", Ops: []string{"check"}, Every: 2 * every}
	if err := m.Update(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	far := time.Unix(schedule.SlotOf(now, 2*every), 0).Add(4 * every)
	if _, err := s.EnqueueWindow(ctx, far, far.Add(2*every)); err != nil {
		t.Fatal(err)
	}
	if got := jobsOf(checkJobs(t, db), "c"); !slices.Contains(got, fmt.Sprintf("c/check/%d", far.Unix())) {
		t.Errorf("c at 2h: %v, want its check of slot %d", got, far.Unix())
	}

	// The file drops b (retired: no other source lists it) and the API
	// deletes a: neither is scheduled again.
	m.Config = config(every)
	if err := m.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	later := far.Add(24 * every)
	if _, err := other.EnqueueWindow(ctx, later, later.Add(2*every)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		for _, j := range jobsOf(checkJobs(t, db), id) {
			if sl, _ := strconv.ParseInt(strings.Split(j, "/")[2], 10, 64); sl >= later.Unix() {
				t.Errorf("%s scheduled after it left the set", j)
			}
		}
	}
	if got := jobsOf(checkJobs(t, db), "c"); !slices.Contains(got, fmt.Sprintf("c/check/%d", later.Unix())) {
		t.Errorf("c after a and b left: %v, want its check of slot %d", got, later.Unix())
	}
	// A job queued before is cancelled, not run.
	if _, _, err := m.Check(ctx, "b", "check", slot+3600); err != monitor.ErrUnknownEndpoint {
		t.Errorf("check of retired b: %v, want ErrUnknownEndpoint", err)
	}
	if _, _, err := m.Check(ctx, "a", "check", slot+3600); err != monitor.ErrUnknownEndpoint {
		t.Errorf("check of deleted a: %v, want ErrUnknownEndpoint", err)
	}
}

// TestAPokeSchedulesAnAddedEndpoint: Poke (what the API calls after a
// change) schedules an added endpoint on the watch's goroutine, without
// waiting for the enqueuer's tick. The monitor's clock is a day ahead, so
// the jobs are scheduled in the future and none runs.
func TestAPokeSchedulesAnAddedEndpoint(t *testing.T) {
	h, db := openSQLite(t)
	ctx := context.Background()
	every := time.Hour
	slot := schedule.SlotOf(time.Now().Add(24*time.Hour), every)
	now := time.Unix(slot, 0).Add(schedule.Offset("c", "check", every) + time.Second)
	m := newMonitor(config(every, "a"), h, &counter{})
	m.Catalog = h.(store.EndpointCatalog)
	m.Now = func() time.Time { return now }
	if err := m.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
	if err := s.Refresh(ctx); err != nil { // the set read once (a Start's)
		t.Fatal(err)
	}
	if err := m.Add(ctx, []monitor.Endpoint{{ID: "c", URL: "http://127.0.0.1:1/c", Method: "GET", Ops: []string{"check"}, Every: every}}); err != nil {
		t.Fatal(err)
	}
	s.Poke()
	want := []string{fmt.Sprintf("c/check/%d", slot)}
	deadline := time.Now().Add(60 * time.Second) // ends a hung test only
	for !slices.Equal(jobsOf(checkJobs(t, db), "c"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("c's jobs after a poke: %v, want %v", jobsOf(checkJobs(t, db), "c"), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
