package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// RateSource answers the published rates of a date range (Valet).
type RateSource interface {
	Observations(ctx context.Context, from, to string) ([]store.Rate, error)
}

// Backfiller fills the CAD block of pending entries once their rate is
// published. It is idempotent: a run with nothing new to learn changes
// nothing, and a filled entry is never rewritten (the store's
// compare-and-set, and its triggers, see to that).
type Backfiller struct {
	Store store.Store
	Rates RateSource
	Now   func() time.Time
}

// BackfillResult says what one run did.
type BackfillResult struct {
	Pending int // pending entries found
	Filled  int // of them, filled by this run
	// Fetched counts the dates newly cached from the source.
	Fetched int
	// Stuck counts entries whose date is final (a later date is published)
	// with no published rate within MaxGapDays before it: they stay pending
	// and need a look.
	Stuck int
}

// Run fills what it can. The rates are read from the store's cache; the
// source is asked only when some pending entry's own date is not cached,
// and then for the whole range from MaxGapDays before the oldest pending
// date to today, so the closest preceding date is always among the rates
// the rule sees. When the source fails, entries whose own date is cached are
// still filled and the error is returned.
func (b Backfiller) Run(ctx context.Context) (BackfillResult, error) {
	var res BackfillResult
	type pendingEntry struct {
		op  store.Op
		id  string
		day string
	}
	var pending []pendingEntry
	for _, op := range store.Ops {
		es, err := b.Store.PendingEntries(ctx, op)
		if err != nil {
			return res, err
		}
		for _, e := range es {
			pending = append(pending, pendingEntry{op, e.ID, e.Day()})
		}
	}
	res.Pending = len(pending)
	if len(pending) == 0 {
		return res, nil
	}
	now := b.now()
	first, last := pending[0].day, now.UTC().Format(store.DayLayout)
	for _, p := range pending {
		first, last = min(first, p.day), max(last, p.day)
	}
	fd, _ := time.Parse(store.DayLayout, first)
	from := fd.AddDate(0, 0, -MaxGapDays).Format(store.DayLayout)

	cached, err := b.Store.Rates(ctx, from, last)
	if err != nil {
		return res, err
	}
	have := map[string]bool{}
	for _, r := range cached {
		have[r.Date] = true
	}
	needFetch := false
	for _, p := range pending {
		needFetch = needFetch || !have[p.day]
	}
	var fetchErr error
	if needFetch {
		if b.Rates == nil {
			fetchErr = fmt.Errorf("ledger: no rate source")
		} else if obs, err := b.Rates.Observations(ctx, from, last); err != nil {
			fetchErr = err
		} else {
			if res.Fetched, err = b.Store.PutRates(ctx, obs, now); err != nil {
				return res, err
			}
			if cached, err = b.Store.Rates(ctx, from, last); err != nil {
				return res, err
			}
		}
	}
	for _, p := range pending {
		v := Value(p.day, cached)
		if fetchErr != nil && v.RateDate != p.day {
			// Without a fresh answer from the source, only a rate of the
			// entry's own date is certain.
			continue
		}
		if v.Pending {
			if Final(p.day, cached) {
				res.Stuck++
			}
			continue
		}
		ok, err := b.Store.FillCAD(ctx, p.op, p.id, v.Rate, v.RateDate)
		if err != nil {
			return res, err
		}
		if ok {
			res.Filled++
		}
	}
	return res, fetchErr
}

func (b Backfiller) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Every runs the backfill at once and then every interval until ctx ends,
// handing each outcome to report.
func (b Backfiller) Every(ctx context.Context, interval time.Duration, report func(BackfillResult, error)) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, err := b.Run(ctx)
		if ctx.Err() != nil {
			return
		}
		if report != nil {
			report(r, err)
		}
		t.Reset(interval)
	}
}
