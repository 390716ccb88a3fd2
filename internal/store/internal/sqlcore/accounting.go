package sqlcore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// PendingEntries implements store.Store.
func (s *Store) PendingEntries(ctx context.Context, op store.Op) ([]store.Entry, error) {
	if !op.Valid() {
		return nil, errors.New("store: pending entries: unknown op")
	}
	rows, err := s.db.Query(ctx, ledgerQueries()[op].selectPending, true)
	if err != nil {
		return nil, fmt.Errorf("store: pending entries: %w", err)
	}
	defer rows.Close()
	var es []store.Entry
	for rows.Next() {
		e, err := scanEntry(rows, op)
		if err != nil {
			return nil, fmt.Errorf("store: pending entries: %w", err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pending entries: %w", err)
	}
	return es, nil
}

// FillCAD implements store.Store.
func (s *Store) FillCAD(ctx context.Context, op store.Op, id, rate, rateDate string) (bool, error) {
	if !op.Valid() || id == "" || !store.IsRate(rate) || !store.IsDate(rateDate) {
		return false, store.ErrInvalidRate
	}
	n, err := s.db.Exec(ctx, ledgerQueries()[op].fillCAD, id, rate, rateDate, false, true)
	if err != nil {
		return false, fmt.Errorf("store: fill CAD: %w", err)
	}
	return n == 1, nil
}

// PutRates implements store.Store.
func (s *Store) PutRates(ctx context.Context, rates []store.Rate, fetchedAt time.Time) (int, error) {
	for _, r := range rates {
		if !store.IsDate(r.Date) || !store.IsRate(r.Value) {
			return 0, store.ErrInvalidRate
		}
	}
	at := fetchedAt.UTC().Format(store.TimestampLayout)
	added := 0
	err := s.db.InTx(ctx, func(q Querier) error {
		added = 0
		for _, r := range rates {
			n, err := q.Exec(ctx, insertRateSQL, r.Date, r.Value, at)
			if err != nil {
				return err
			}
			added += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: put rates: %w", err)
	}
	return added, nil
}

// Rates implements store.Store.
func (s *Store) Rates(ctx context.Context, from, to string) ([]store.Rate, error) {
	if !store.IsDate(from) || !store.IsDate(to) {
		return nil, store.ErrInvalidRate
	}
	rows, err := s.db.Query(ctx, selectRatesSQL, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: rates: %w", err)
	}
	defer rows.Close()
	var rs []store.Rate
	for rows.Next() {
		var r store.Rate
		if err := rows.Scan(&r.Date, &r.Value); err != nil {
			return nil, fmt.Errorf("store: rates: %w", err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: rates: %w", err)
	}
	return rs, nil
}

// AddRefund implements store.Store.
func (s *Store) AddRefund(ctx context.Context, r store.Refund) (store.Refund, error) {
	if err := r.Validate(); err != nil {
		return store.Refund{}, err
	}
	r.ID = rand.Text()
	r.Time = r.Time.UTC().Truncate(time.Millisecond)
	q := ledgerQueries()[r.Op]
	n, err := s.db.Exec(ctx, q.insertRefund, r.ID, string(r.Op), r.EntryID, r.Tx,
		r.Time.Format(store.TimestampLayout), r.Time.Format(store.DayLayout))
	if err != nil {
		return store.Refund{}, fmt.Errorf("store: refund: %w", err)
	}
	if n == 1 {
		return r, nil
	}
	// Nothing inserted: say why.
	var entries int64
	if err := s.db.QueryRow(ctx, q.entryExists, r.EntryID).Scan(&entries); err != nil {
		return store.Refund{}, fmt.Errorf("store: refund: %w", err)
	}
	if entries == 0 {
		return store.Refund{}, store.ErrNoEntry
	}
	var refunds int64
	if err := s.db.QueryRow(ctx, refundOfEntrySQL, string(r.Op), r.EntryID).Scan(&refunds); err != nil {
		return store.Refund{}, fmt.Errorf("store: refund: %w", err)
	}
	if refunds > 0 {
		return store.Refund{}, store.ErrAlreadyRefunded
	}
	return store.Refund{}, errors.New("store: refund: not recorded")
}

// Refunds implements store.Store.
func (s *Store) Refunds(ctx context.Context, from, to time.Time) ([]store.Refund, error) {
	rows, err := s.db.Query(ctx, selectRefundsSQL,
		from.UTC().Format(store.TimestampLayout), to.UTC().Format(store.TimestampLayout))
	if err != nil {
		return nil, fmt.Errorf("store: refunds: %w", err)
	}
	defer rows.Close()
	var rs []store.Refund
	for rows.Next() {
		var (
			r      store.Refund
			op, ts string
		)
		if err := rows.Scan(&r.ID, &op, &r.EntryID, &r.Tx, &ts); err != nil {
			return nil, fmt.Errorf("store: refunds: %w", err)
		}
		r.Op = store.Op(op)
		if r.Time, err = time.Parse(store.TimestampLayout, ts); err != nil {
			return nil, errors.New("store: refunds: bad timestamp column")
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: refunds: %w", err)
	}
	return rs, nil
}

// Tallies implements store.Store.
func (s *Store) Tallies(ctx context.Context) (store.Tallies, error) {
	t := store.Tallies{
		Sales:     map[store.Op][]store.DayCount{},
		Refunds:   map[store.Op][]store.DayCount{},
		Free:      map[string][]store.DayCount{},
		FirstSale: map[store.Op]time.Time{},
	}
	for _, op := range store.Ops {
		q := ledgerQueries()[op]
		var err error
		if t.Sales[op], err = s.dayCounts(ctx, q.salesByDay, false); err != nil {
			return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
		}
		if t.Refunds[op], err = s.dayCounts(ctx, q.refundsByDay, false); err != nil {
			return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
		}
		var first *string
		if err := s.db.QueryRow(ctx, q.firstSale, false).Scan(&first); err != nil {
			return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
		}
		if first != nil {
			ts, err := time.Parse(store.TimestampLayout, *first)
			if err != nil {
				return store.Tallies{}, errors.New("store: tallies: bad timestamp column")
			}
			t.FirstSale[op] = ts
		}
	}
	rows, err := s.db.Query(ctx, freeByDaySQL)
	if err != nil {
		return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			scope        string
			day, allowed int64
		)
		if err := rows.Scan(&scope, &day, &allowed); err != nil {
			return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
		}
		t.Free[scope] = append(t.Free[scope], store.DayCount{
			Day:   time.UnixMilli(day * dayMS).UTC().Format(store.DayLayout),
			Count: allowed,
		})
	}
	if err := rows.Err(); err != nil {
		return store.Tallies{}, fmt.Errorf("store: tallies: %w", err)
	}
	return t, nil
}

func (s *Store) dayCounts(ctx context.Context, query string, args ...any) ([]store.DayCount, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []store.DayCount
	for rows.Next() {
		var c store.DayCount
		if err := rows.Scan(&c.Day, &c.Count); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}
