package ledger

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// cadOf reads the CAD block of every entry, by id.
func cadOf(t *testing.T, st store.Store) map[string]store.CAD {
	t.Helper()
	m := map[string]store.CAD{}
	for _, op := range store.Ops {
		es, err := st.Entries(context.Background(), op, day("2000-01-01T00:00:00Z"), day("2100-01-01T00:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			m[e.ID] = e.CAD
		}
	}
	return m
}

func filled(rate, date string) store.CAD {
	return store.CAD{Rate: rate, RateDate: date, Basis: Basis}
}

var pendingCAD = store.CAD{Basis: Basis, Pending: true}

// TestBackfillAroundAHolidayWeekend walks a week with a late publication,
// Good Friday (no rate) and its weekend, against a fake Valet on loopback.
func TestBackfillAroundAHolidayWeekend(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	valet := newFakeValet(t)
	valet.publish(map[string]string{
		"2026-03-27": "1.3810", "2026-03-30": "1.3795", "2026-03-31": "1.3802", "2026-04-01": "1.3777",
	})
	var now time.Time
	b := Backfiller{Store: st, Rates: Valet{BaseURL: valet.URL()}, Now: func() time.Time { return now }}

	thu := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-04-02T10:00:00Z")})
	fri := deliver(t, st, delivery{op: store.OpMemo, at: day("2026-04-03T15:00:00Z")}) // Good Friday
	sat := deliver(t, st, delivery{op: store.OpProbe, at: day("2026-04-04T23:59:59Z"), price: 20000})
	wed := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-04-01T08:00:00Z"), house: true})

	step := func(name string, at string, wantFilled int, want map[string]store.CAD) {
		t.Helper()
		now = day(at)
		res, err := b.Run(ctx)
		if err != nil {
			t.Fatalf("%s: Run: %v", name, err)
		}
		if res.Filled != wantFilled {
			t.Errorf("%s: filled %d, want %d (%+v)", name, res.Filled, wantFilled, res)
		}
		got := cadOf(t, st)
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: entry CAD %+v, want %+v", name, got[id], w)
			}
		}
	}

	// Thursday noon: Thursday's rate is not out yet; Wednesday's is.
	step("thursday noon", "2026-04-02T12:00:00Z", 1, map[string]store.CAD{
		wed.ID: filled("1.3777", "2026-04-01"), thu.ID: pendingCAD, fri.ID: pendingCAD, sat.ID: pendingCAD,
	})
	// Thursday evening: the late publication of Thursday's rate.
	valet.publish(map[string]string{"2026-04-02": "1.3760"})
	step("thursday evening", "2026-04-02T21:00:00Z", 1, map[string]store.CAD{
		thu.ID: filled("1.3760", "2026-04-02"), fri.ID: pendingCAD, sat.ID: pendingCAD,
	})
	// Monday noon: Good Friday and the weekend have no rate, but they are not
	// final until a later date is published.
	step("monday noon", "2026-04-06T12:00:00Z", 0, map[string]store.CAD{fri.ID: pendingCAD, sat.ID: pendingCAD})
	// Monday evening: Monday's rate is out, so Friday and Saturday are final
	// and take the closest preceding published date, Thursday.
	valet.publish(map[string]string{"2026-04-06": "1.3741"})
	step("monday evening", "2026-04-06T21:00:00Z", 2, map[string]store.CAD{
		fri.ID: filled("1.3760", "2026-04-02"), sat.ID: filled("1.3760", "2026-04-02"),
		thu.ID: filled("1.3760", "2026-04-02"), wed.ID: filled("1.3777", "2026-04-01"),
	})

	// Idempotent: nothing pending, nothing asked, nothing changed — even when
	// the source later revises a rate.
	valet.publish(map[string]string{"2026-04-02": "1.9999"})
	before := valet.requests.Load()
	res, err := b.Run(ctx)
	if err != nil || res != (BackfillResult{}) {
		t.Errorf("rerun = %+v, %v; want nothing to do", res, err)
	}
	if valet.requests.Load() != before {
		t.Errorf("a rerun with nothing pending asked the source")
	}
	if got := cadOf(t, st)[fri.ID]; got != filled("1.3760", "2026-04-02") {
		t.Errorf("a filled entry changed: %+v", got)
	}
	rates, _ := st.Rates(ctx, "2026-04-02", "2026-04-02")
	if len(rates) != 1 || rates[0].Value != "1.3760" {
		t.Errorf("the cached rate was rewritten: %v", rates)
	}
}

// TestBackfillAsksOnlyWhatTheCacheLacks: a pending entry whose own date is
// cached is filled from the cache, with no request.
func TestBackfillAsksOnlyWhatTheCacheLacks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	valet := newFakeValet(t)
	now := day("2026-03-31T22:00:00Z")
	if _, err := st.PutRates(ctx, []store.Rate{{Date: "2026-03-31", Value: "1.3802"}}, now); err != nil {
		t.Fatal(err)
	}
	e := deliver(t, st, delivery{op: store.OpMemo, at: day("2026-03-31T09:00:00Z")})
	res, err := Backfiller{Store: st, Rates: Valet{BaseURL: valet.URL()}, Now: func() time.Time { return now }}.Run(ctx)
	if err != nil || res.Filled != 1 || res.Fetched != 0 {
		t.Errorf("Run = %+v, %v; want 1 filled, nothing fetched", res, err)
	}
	if valet.requests.Load() != 0 {
		t.Errorf("the source was asked %d times", valet.requests.Load())
	}
	if got := cadOf(t, st)[e.ID]; got != filled("1.3802", "2026-03-31") {
		t.Errorf("CAD %+v", got)
	}
}

// TestBackfillWithTheSourceDown: an entry whose own date is cached is still
// filled; an entry that would need the preceding-date rule is not (only a
// fresh answer proves which date is the closest preceding published), and
// the error says the source did not answer.
func TestBackfillWithTheSourceDown(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	valet := newFakeValet(t)
	valet.fail(http.StatusServiceUnavailable)
	now := day("2026-04-07T22:00:00Z")
	if _, err := st.PutRates(ctx, []store.Rate{{Date: "2026-04-02", Value: "1.3760"}, {Date: "2026-04-06", Value: "1.3741"}}, now); err != nil {
		t.Fatal(err)
	}
	own := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-04-06T10:00:00Z")})
	weekend := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-04-04T10:00:00Z")})
	res, err := Backfiller{Store: st, Rates: Valet{BaseURL: valet.URL()}, Now: func() time.Time { return now }}.Run(ctx)
	if !errors.Is(err, ErrRatesUnavailable) || res.Filled != 1 {
		t.Errorf("Run = %+v, %v; want 1 filled and ErrRatesUnavailable", res, err)
	}
	got := cadOf(t, st)
	if got[own.ID] != filled("1.3741", "2026-04-06") || got[weekend.ID] != pendingCAD {
		t.Errorf("CAD blocks %+v / %+v", got[own.ID], got[weekend.ID])
	}
}

// TestBackfillFlagsAStuckEntry: a final date with no rate within MaxGapDays
// before it stays pending and is counted, never valued at a stale rate.
func TestBackfillFlagsAStuckEntry(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	valet := newFakeValet(t)
	valet.publish(map[string]string{"2026-01-02": "1.40", "2026-02-20": "1.36"})
	e := deliver(t, st, delivery{op: store.OpProbe, at: day("2026-02-18T10:00:00Z")})
	now := day("2026-02-21T10:00:00Z")
	res, err := Backfiller{Store: st, Rates: Valet{BaseURL: valet.URL()}, Now: func() time.Time { return now }}.Run(ctx)
	if err != nil || res.Stuck != 1 || res.Filled != 0 {
		t.Errorf("Run = %+v, %v; want 1 stuck", res, err)
	}
	if got := cadOf(t, st)[e.ID]; got != pendingCAD {
		t.Errorf("CAD %+v, want pending", got)
	}
}

// TestBackfillConcurrentRunsFillOnce: two backfills at once (two serve
// instances) fill each entry once.
func TestBackfillConcurrentRunsFillOnce(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	valet := newFakeValet(t)
	valet.publish(map[string]string{"2026-03-30": "1.3795", "2026-03-31": "1.3802"})
	for i := range 10 {
		deliver(t, st, delivery{op: store.Ops[i%3], at: day("2026-03-30T10:00:00Z").Add(time.Duration(i) * time.Hour)})
	}
	now := day("2026-03-31T22:00:00Z")
	b := Backfiller{Store: st, Rates: Valet{BaseURL: valet.URL()}, Now: func() time.Time { return now }}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 4 {
		wg.Go(func() {
			res, err := b.Run(ctx)
			if err != nil {
				t.Errorf("Run: %v", err)
			}
			mu.Lock()
			total += res.Filled
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 10 {
		t.Errorf("%d fills in all, want 10", total)
	}
}

func TestBackfillEveryRunsAtOnceAndStops(t *testing.T) {
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	runs := make(chan BackfillResult, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Backfiller{Store: st, Now: time.Now}.Every(ctx, time.Hour, func(r BackfillResult, err error) { runs <- r })
	}()
	select {
	case <-runs:
	case <-time.After(time.Minute): // turns a hang into a failure only
		t.Fatal("no run at start")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute): // turns a hang into a failure only
		t.Fatal("Every did not stop with its context")
	}
}
