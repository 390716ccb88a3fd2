package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// counter is a fake observer: it counts its calls per endpoint and slot
// (read from the context the test gives each call) and answers what the
// test says.
type counter struct {
	mu     sync.Mutex
	calls  map[string]int
	answer func(n int) (monitor.Observation, error)
}

func (c *counter) Observe(ctx context.Context, e monitor.Endpoint) (monitor.Observation, error) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[e.ID]++
	n := c.calls[e.ID]
	c.mu.Unlock()
	if c.answer != nil {
		return c.answer(n)
	}
	return monitor.Observation{Passing: true, State: "POPULATED"}, nil
}

func (c *counter) total(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func config(every time.Duration, ids ...string) *monitor.Config {
	c := &monitor.Config{Retention: monitor.DefaultRetention}
	for _, id := range ids {
		c.Endpoints = append(c.Endpoints, monitor.Endpoint{ID: id, URL: "http://127.0.0.1:1/", Method: "GET", Ops: []string{"check"}, Every: every})
	}
	return c
}

type history interface {
	store.Store
	store.History
}

func openSQLite(t *testing.T) (history, schedule.Database) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "payability.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, schedule.Database{SQLitePath: path}
}

func openPostgres(t *testing.T, dsn string) history {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func start(t *testing.T, o schedule.Options) *schedule.Scheduler {
	t.Helper()
	if o.PollInterval == 0 {
		o.PollInterval = 20 * time.Millisecond
	}
	s, err := schedule.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		s.Close()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { stop(t, s) })
	return s
}

func stop(t *testing.T, s *schedule.Scheduler) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Stop: %v", err)
	}
}

// waitFor polls the history until cond holds; the deadline only ends a hung
// test, it is no assertion on how long the jobs take.
func waitFor(t *testing.T, h store.History, id string, cond func([]store.Observation) bool) []store.Observation {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := h.Observations(context.Background(), id, "", time.Time{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("history of %s never reached the wanted state; have %d rows", id, len(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func atLeast(n int) func([]store.Observation) bool {
	return func(os []store.Observation) bool { return len(os) >= n }
}

func newMonitor(c *monitor.Config, h store.History, obs monitor.Observer) *monitor.Monitor {
	return &monitor.Monitor{Config: c, History: h, Observers: map[string]monitor.Observer{"check": obs}}
}

func TestEnqueueIsUniquePerEndpointOpAndSlot(t *testing.T) {
	h, db := openSQLite(t)
	obs := &counter{}
	m := newMonitor(config(time.Minute, "a"), h, obs)
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
	for slot := int64(60); slot <= 180; slot += 60 {
		for i := range 3 {
			ok, err := s.Enqueue(context.Background(), "a", "check", slot)
			if err != nil {
				t.Fatal(err)
			}
			if want := i == 0; ok != want {
				t.Errorf("slot %d insert %d: inserted %v, want %v", slot, i, ok, want)
			}
		}
	}
	got := waitFor(t, h, "a", atLeast(3))
	stop(t, s)
	if len(got) != 3 || obs.total("a") != 3 {
		t.Errorf("rows %d, observer calls %d; want 3 and 3", len(got), obs.total("a"))
	}
}

func TestFailingTargetIsAResultNotARetry(t *testing.T) {
	h, db := openSQLite(t)
	obs := &counter{answer: func(int) (monitor.Observation, error) {
		return monitor.Observation{Passing: false, State: "NOT-A-402", Reasons: []string{"timeout"}}, nil
	}}
	m := newMonitor(config(time.Minute, "a"), h, obs)
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
	if _, err := s.Enqueue(context.Background(), "a", "check", 60); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, h, "a", atLeast(1))
	stop(t, s)
	if got[0].Passing || got[0].State != "NOT-A-402" || obs.total("a") != 1 {
		t.Errorf("got %+v after %d calls, want one failing observation", got[0], obs.total("a"))
	}
}

func TestInternalErrorRetriesThenRecordsOnce(t *testing.T) {
	h, db := openSQLite(t)
	obs := &counter{answer: func(n int) (monitor.Observation, error) {
		if n == 1 {
			return monitor.Observation{}, errors.New("internal")
		}
		return monitor.Observation{Passing: true, State: "POPULATED"}, nil
	}}
	m := newMonitor(config(time.Minute, "a"), h, obs)
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
	if _, err := s.Enqueue(context.Background(), "a", "check", 60); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, h, "a", atLeast(1))
	stop(t, s)
	if len(got) != 1 || !got[0].Passing || obs.total("a") != 2 {
		t.Errorf("rows %+v after %d calls, want one passing row after 2 calls", got, obs.total("a"))
	}
}

func TestPeriodicChecksRecordEachPeriod(t *testing.T) {
	h, db := openSQLite(t)
	obs := &counter{}
	m := newMonitor(config(time.Second, "a"), h, obs)
	s := start(t, schedule.Options{DB: db, Monitor: m})
	got := waitFor(t, h, "a", atLeast(2))
	stop(t, s)
	seen := map[int64]bool{}
	for _, o := range got {
		if seen[o.Slot] {
			t.Errorf("slot %d recorded twice", o.Slot)
		}
		seen[o.Slot] = true
	}
	if n := obs.total("a"); n != len(h2(t, h)) {
		t.Errorf("observer ran %d times for %d rows", n, len(h2(t, h)))
	}
}

func h2(t *testing.T, h store.History) []store.Observation {
	got, err := h.Observations(context.Background(), "a", "", time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPruneJobDeletesPastRetention(t *testing.T) {
	h, db := openSQLite(t)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := config(time.Minute, "a")
	m := newMonitor(c, h, &counter{})
	m.Now = func() time.Time { return now }
	for i, at := range []time.Time{now.Add(-c.Retention - time.Millisecond), now.Add(-c.Retention)} {
		if _, err := h.AddObservation(context.Background(), store.Observation{Endpoint: "a", Op: "check", Slot: int64(i), At: at, State: "POPULATED", Passing: true}); err != nil {
			t.Fatal(err)
		}
	}
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true})
	if _, err := s.EnqueuePrune(context.Background(), 3600); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, h, "a", func(os []store.Observation) bool { return len(os) == 1 })
	if got[0].Slot != 1 {
		t.Errorf("kept slot %d, want 1 (the one at the retention edge)", got[0].Slot)
	}
}

// TestTwoInstancesOnPostgresRunEachCheckOnce: two instances on one database,
// both scheduling (periodic, every second) and both inserting the same slots
// by hand: every slot is checked once, by one of them.
func TestTwoInstancesOnPostgresRunEachCheckOnce(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	ha, hb := openPostgres(t, dsn), openPostgres(t, dsn)
	obs := &counter{}
	c := config(time.Second, "a", "b")
	a := start(t, schedule.Options{DB: schedule.Database{PostgresDSN: dsn}, Monitor: newMonitor(c, ha, obs), ID: "instance-a"})
	b := start(t, schedule.Options{DB: schedule.Database{PostgresDSN: dsn}, Monitor: newMonitor(c, hb, obs), ID: "instance-b"})
	var wg sync.WaitGroup
	for _, s := range []*schedule.Scheduler{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for slot := int64(1); slot <= 5; slot++ {
				if _, err := s.Enqueue(context.Background(), "b", "check", slot); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	waitFor(t, ha, "a", atLeast(3))
	waitFor(t, hb, "b", atLeast(5))
	stop(t, a)
	stop(t, b)
	for _, id := range []string{"a", "b"} {
		rows := len(must(ha.Observations(context.Background(), id, "", time.Time{}, 1000)))
		if n := obs.total(id); n != rows {
			t.Errorf("%s: observer ran %d times for %d recorded slots, want one run per slot", id, n, rows)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
