package schedule_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
)

// TestOffsetIsStable pins offsets: every instance and every release must
// place an endpoint's check at the same moment of its period. (The values
// were computed apart from this code: FNV-1a 64 of "id\x00op", modulo the
// interval in milliseconds.)
func TestOffsetIsStable(t *testing.T) {
	for _, tc := range []struct {
		id, op string
		every  time.Duration
		want   time.Duration
	}{
		{"a", "check", time.Hour, 2387916 * time.Millisecond},
		{"a", "lint", time.Hour, 1079257 * time.Millisecond},
		{"weather-api", "preflight", 5 * time.Minute, 117129 * time.Millisecond},
		{"a", "check", time.Second, 916 * time.Millisecond},
	} {
		if got := schedule.Offset(tc.id, tc.op, tc.every); got != tc.want {
			t.Errorf("Offset(%s, %s, %v) = %v, want %v", tc.id, tc.op, tc.every, got, tc.want)
		}
		if got := schedule.Offset(tc.id, tc.op, tc.every); got < 0 || got >= tc.every {
			t.Errorf("Offset(%s, %s, %v) = %v, outside the interval", tc.id, tc.op, tc.every, got)
		}
	}
}

func fleet(n int, every time.Duration, ops ...string) []monitor.Endpoint {
	out := make([]monitor.Endpoint, n)
	for i := range out {
		out[i] = monitor.Endpoint{ID: fmt.Sprintf("ep-%06d", i), URL: "http://127.0.0.1:1/", Method: "GET", Ops: ops, Every: every}
	}
	return out
}

// TestOffsetsSpreadEvenly: 100,000 endpoints at 1h run about 28 a second,
// with no second far above the mean and every minute within 10% of it.
func TestOffsetsSpreadEvenly(t *testing.T) {
	const n = 100000
	perSecond := make([]int, 3600)
	for _, e := range fleet(n, time.Hour, "lint") {
		perSecond[schedule.Offset(e.ID, "lint", e.Every)/time.Second]++
	}
	mean := float64(n) / 3600
	sorted := slices.Clone(perSecond)
	slices.Sort(sorted)
	if p95 := float64(sorted[len(sorted)*95/100]); p95 > 1.5*mean {
		t.Errorf("p95 of checks per second %v, mean %.1f: want within 1.5×", p95, mean)
	}
	if mx := float64(sorted[len(sorted)-1]); mx > 2.5*mean {
		t.Errorf("busiest second %v checks, mean %.1f: want within 2.5×", mx, mean)
	}
	for m := range 60 {
		sum := 0
		for _, c := range perSecond[m*60 : m*60+60] {
			sum += c
		}
		if d := float64(sum)/(mean*60) - 1; d > 0.1 || d < -0.1 {
			t.Errorf("minute %d has %d checks, mean %.0f: want within 10%%", m, sum, mean*60)
		}
	}
}

// TestDueInListsEachCheckOncePerPeriod: over one period every (endpoint,
// op) is due once, at its offset; split windows list the same checks, none
// twice.
func TestDueInListsEachCheckOncePerPeriod(t *testing.T) {
	eps := append(fleet(50, time.Hour, "lint", "check"), fleet(7, 90*time.Second, "preflight")...)
	from := time.Date(2026, 12, 5, 8, 17, 3, 0, time.UTC)
	for _, every := range []time.Duration{time.Hour, 90 * time.Second} {
		var sub []monitor.Endpoint
		for _, e := range eps {
			if e.Every == every {
				sub = append(sub, e)
			}
		}
		whole := schedule.DueIn(sub, from, from.Add(every))
		want := 0
		for _, e := range sub {
			want += len(e.Ops)
		}
		if len(whole) != want {
			t.Fatalf("every %v: %d checks due in one period, want %d", every, len(whole), want)
		}
		seen := map[string]bool{}
		for _, d := range whole {
			k := d.Args.Endpoint + "/" + d.Args.Op
			if seen[k] {
				t.Errorf("%s due twice in one period", k)
			}
			seen[k] = true
			if !d.At.Equal(schedule.DueAt(d.Args.Slot, d.Args.Endpoint, d.Args.Op, every)) || d.At.Before(from) || !d.At.Before(from.Add(every)) {
				t.Errorf("%s due at %v (slot %d), outside the window or off its offset", k, d.At, d.Args.Slot)
			}
		}
		cut := from.Add(every / 3)
		split := append(schedule.DueIn(sub, from, cut), schedule.DueIn(sub, cut, from.Add(every))...)
		if len(split) != len(whole) {
			t.Errorf("every %v: split windows list %d checks, the whole one %d", every, len(split), len(whole))
		}
	}
}

// TestEnqueueWindowInsertsEachCheckOnceAcrossInstances: two instances on
// one PostgreSQL enqueue the same window twice each, at once: every
// (endpoint, op, slot) has one job, scheduled at its due time, behind the
// enqueuer's own jobs in priority.
func TestEnqueueWindowInsertsEachCheckOnceAcrossInstances(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	h := openPostgres(t, dsn)
	c := &monitor.Config{Endpoints: fleet(300, time.Hour, "lint", "check"), Retention: monitor.DefaultRetention}
	var scheds []*schedule.Scheduler
	for _, id := range []string{"instance-a", "instance-b"} {
		s, err := schedule.Open(context.Background(), schedule.Options{DB: schedule.Database{PostgresDSN: dsn}, Monitor: newMonitor(c, h, &counter{}), NoPeriodic: true, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		scheds = append(scheds, s)
	}
	// A window in the future: the jobs wait (and no client is started).
	from := time.Unix(schedule.SlotOf(time.Now(), time.Hour), 0).Add(24 * time.Hour)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		inserted int
	)
	for _, s := range append(scheds, scheds...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.EnqueueWindow(context.Background(), from, from.Add(time.Hour))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			inserted += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if inserted != 600 {
		t.Errorf("%d jobs reported inserted, want 600 (300 endpoints × 2 ops, once)", inserted)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT args->>'endpoint', args->>'op', (args->>'slot')::bigint, scheduled_at, priority, count(*) OVER (PARTITION BY args->>'endpoint', args->>'op', args->>'slot')
		FROM river_job WHERE kind = 'payability_monitor_check'`)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for rows.Next() {
		var (
			id, op string
			slot   int64
			at     time.Time
			prio   int
			dups   int
		)
		if err := rows.Scan(&id, &op, &slot, &at, &prio, &dups); err != nil {
			t.Fatal(err)
		}
		got++
		if prio != 2 {
			t.Errorf("%s/%s slot %d has priority %d, want 2 (after the enqueuer's 1)", id, op, slot, prio)
		}
		if dups != 1 {
			t.Errorf("%s/%s slot %d has %d jobs, want 1", id, op, slot, dups)
		}
		if want := schedule.DueAt(slot, id, op, time.Hour); !at.Equal(want) {
			t.Errorf("%s/%s slot %d scheduled at %v, want its due time %v", id, op, slot, at, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got != 600 {
		t.Errorf("%d check jobs in the table, want 600", got)
	}
}

// TestACheckAPeriodLateIsSkipped: the monitor's clock says the check of
// endpoint late started one period after it was due (the backlog is a
// period): it is skipped — counted, logged, its job cancelled — and never
// observed; the other, due later, is less than a period late and runs.
func TestACheckAPeriodLateIsSkipped(t *testing.T) {
	h, db := openSQLite(t)
	every := time.Hour
	from := time.Unix(schedule.SlotOf(time.Now().Add(-3*every), every), 0)
	// Two endpoints due at different moments of the same past period.
	var ids []string
	for i := 0; len(ids) < 2; i++ {
		id := fmt.Sprintf("e%d", i)
		if len(ids) == 1 && schedule.Offset(id, "check", every) == schedule.Offset(ids[0], "check", every) {
			continue
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return int(schedule.Offset(a, "check", every) - schedule.Offset(b, "check", every))
	})
	late, onTime := ids[0], ids[1]
	slot := from.Unix()
	obs := &counter{}
	m := newMonitor(config(every, late, onTime), h, obs)
	// now is exactly one period after the later one was due minus 1 ms:
	// the earlier one is a period or more late, the later one is not.
	now := schedule.DueAt(slot, onTime, "check", every).Add(every - time.Millisecond)
	m.Now = func() time.Time { return now }
	skipped := make(chan string, 2)
	s := start(t, schedule.Options{DB: db, Monitor: m, NoPeriodic: true, Skipped: func(op string) { skipped <- op }})
	n, err := s.EnqueueWindow(context.Background(), from, from.Add(every))
	if err != nil || n != 2 {
		t.Fatalf("EnqueueWindow: %d, %v; want 2 checks", n, err)
	}
	waitFor(t, h, onTime, atLeast(1))
	select {
	case op := <-skipped:
		if op != "check" {
			t.Errorf("skipped op %q", op)
		}
	case <-time.After(60 * time.Second): // ends a hung test only
		t.Fatal("no check was skipped")
	}
	stop(t, s)
	if got := obs.total(late); got != 0 {
		t.Errorf("the late check ran %d times, want skipped", got)
	}
	if got := len(h2ID(t, h, late)); got != 0 {
		t.Errorf("the late check recorded %d observations, want none", got)
	}
	if got := obs.total(onTime); got != 1 {
		t.Errorf("the check within its period ran %d times, want 1", got)
	}
}

func h2ID(t *testing.T, h history, id string) []any {
	t.Helper()
	got, err := h.Observations(context.Background(), id, "", time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(got))
	for i := range got {
		out[i] = got[i]
	}
	return out
}

// TestCatchUpAtStart: a start catches up the current period's passed
// checks — a lone endpoint at once, a directory at its steady rate, in the
// order they were due, each before its next period's check — and leaves
// the checks still ahead to their own due time.
func TestCatchUpAtStart(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC) // half of the hour passed
	t.Run("a lone endpoint is checked at once", func(t *testing.T) {
		eps := fleet(1, time.Hour, "preflight")
		due := schedule.DueAt(schedule.SlotOf(now, time.Hour), eps[0].ID, "preflight", time.Hour)
		got := schedule.CatchUp(eps, now, nil)
		if !due.Before(now) {
			if len(got) != 0 {
				t.Errorf("a check still ahead was caught up: %+v", got)
			}
			return
		}
		if len(got) != 1 || !got[0].At.Equal(now) || got[0].Args.Slot != schedule.SlotOf(now, time.Hour) {
			t.Errorf("got %+v, want the current slot at once", got)
		}
	})
	t.Run("a directory at its steady rate", func(t *testing.T) {
		// 40,000 at 1h: 11.1 checks a second, above the least catch-up rate.
		eps := fleet(40000, time.Hour, "lint")
		got := schedule.CatchUp(eps, now, nil)
		if len(got) < 19200 || len(got) > 20800 {
			t.Fatalf("%d caught up, want about half of 40,000", len(got))
		}
		step := time.Hour / 40000
		for k, d := range got {
			if want := now.Add(time.Duration(k) * step); d.At.Sub(want).Abs() > time.Millisecond {
				t.Fatalf("catch-up %d at %v, want %v (the steady rate)", k, d.At, want)
			}
			if d.Args.Slot != schedule.SlotOf(now, time.Hour) || !schedule.DueAt(d.Args.Slot, d.Args.Endpoint, "lint", time.Hour).Before(now) {
				t.Fatalf("catch-up %+v is not a passed check of the current period", d)
			}
			if next := schedule.DueAt(d.Args.Slot, d.Args.Endpoint, "lint", time.Hour).Add(time.Hour); !d.At.Before(next) {
				t.Fatalf("catch-up %+v comes after its next period's check", d)
			}
		}
	})
	t.Run("never observed: at once, or at its offset when that comes first", func(t *testing.T) {
		never := func(string, string) bool { return true }
		// A lone endpoint whose check is still ahead this period.
		var lone []monitor.Endpoint
		for i := 0; lone == nil; i++ {
			e := monitor.Endpoint{ID: fmt.Sprintf("new-%d", i), Ops: []string{"preflight"}, Every: time.Hour}
			if schedule.DueAt(schedule.SlotOf(now, time.Hour), e.ID, "preflight", time.Hour).After(now) {
				lone = []monitor.Endpoint{e}
			}
		}
		if got := schedule.CatchUp(lone, now, nil); len(got) != 0 {
			t.Errorf("observed before, a check still ahead was caught up: %+v", got)
		}
		got := schedule.CatchUp(lone, now, never)
		if len(got) != 1 || !got[0].At.Equal(now) || got[0].Args.Slot != schedule.SlotOf(now, time.Hour) {
			t.Errorf("never observed: %+v, want the current slot at once", got)
		}
		// A directory never observed: every check of the period once, none
		// after its own due time when that is ahead.
		eps := fleet(40000, time.Hour, "lint")
		all := schedule.CatchUp(eps, now, never)
		if len(all) < 39000 {
			t.Fatalf("%d of 40,000 never-observed checks listed", len(all))
		}
		for _, d := range all {
			due := schedule.DueAt(d.Args.Slot, d.Args.Endpoint, "lint", time.Hour)
			if due.After(now) && d.At.After(due) {
				t.Fatalf("%+v comes after its due time %v", d, due)
			}
		}
	})
}
