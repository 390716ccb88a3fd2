package sqlcore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The monitor's history (store.History). The primary key (endpoint, op,
// slot) makes a second write of one slot a no-op on either database.

const addObservationSQL = `
INSERT INTO observations (endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (endpoint, op, slot) DO NOTHING`

// The newest limit rows at or after since, read newest first and reversed.
const (
	observationsSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network
FROM observations WHERE endpoint = $1 AND op = $2 AND at_ms >= $3
ORDER BY at_ms DESC, slot DESC LIMIT $4`
	observationsAllOpsSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network
FROM observations WHERE endpoint = $1 AND at_ms >= $2
ORDER BY at_ms DESC, slot DESC, op DESC LIMIT $3`
	latestObservationSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network
FROM observations WHERE endpoint = $1 AND op = $2
ORDER BY at_ms DESC, slot DESC LIMIT 1`
	pruneObservationsSQL = `DELETE FROM observations WHERE at_ms < $1`
	// Integer division on both databases: whole UTC days since the epoch.
	dailyCountsSQL = `
SELECT at_ms / 86400000, COUNT(*), CAST(SUM(passing) AS BIGINT)
FROM observations WHERE endpoint = $1 AND at_ms >= $2
GROUP BY at_ms / 86400000 ORDER BY 1`
)

// AddObservation implements store.History.
func (s *Store) AddObservation(ctx context.Context, o store.Observation) (bool, error) {
	if err := o.Validate(); err != nil {
		return false, err
	}
	var passing int64
	if o.Passing {
		passing = 1
	}
	n, err := s.db.Exec(ctx, addObservationSQL, o.Endpoint, o.Op, o.Slot, o.At.UnixMilli(), passing,
		o.State, strings.Join(o.Reasons, ","), o.DurationMS, o.TermsSHA256, o.Network)
	return n == 1, err
}

// Observations implements store.History.
func (s *Store) Observations(ctx context.Context, endpoint, op string, since time.Time, limit int) ([]store.Observation, error) {
	if limit < 1 || !store.ValidID(endpoint) || (op != "" && !store.ValidMonitorOp(op)) {
		return nil, store.ErrInvalidObservation
	}
	var (
		rows Rows
		err  error
	)
	if op == "" {
		rows, err = s.db.Query(ctx, observationsAllOpsSQL, endpoint, since.UnixMilli(), int64(limit))
	} else {
		rows, err = s.db.Query(ctx, observationsSQL, endpoint, op, since.UnixMilli(), int64(limit))
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Observation
	for rows.Next() {
		o, err := scanObservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// LatestObservation implements store.History.
func (s *Store) LatestObservation(ctx context.Context, endpoint, op string) (store.Observation, bool, error) {
	if !store.ValidID(endpoint) || !store.ValidMonitorOp(op) {
		return store.Observation{}, false, store.ErrInvalidObservation
	}
	o, err := scanObservation(s.db.QueryRow(ctx, latestObservationSQL, endpoint, op))
	if errors.Is(err, ErrNoRows) {
		return store.Observation{}, false, nil
	}
	if err != nil {
		return store.Observation{}, false, err
	}
	return o, true, nil
}

// DailyCounts implements store.History.
func (s *Store) DailyCounts(ctx context.Context, endpoint string, since time.Time) ([]store.ObservationDay, error) {
	if !store.ValidID(endpoint) {
		return nil, store.ErrInvalidObservation
	}
	rows, err := s.db.Query(ctx, dailyCountsSQL, endpoint, since.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ObservationDay
	for rows.Next() {
		var day, checks, passing int64
		if err := rows.Scan(&day, &checks, &passing); err != nil {
			return nil, err
		}
		out = append(out, store.ObservationDay{Day: time.UnixMilli(day * 86400000).UTC(), Checks: checks, Passing: passing})
	}
	return out, rows.Err()
}

// PruneObservations implements store.History.
func (s *Store) PruneObservations(ctx context.Context, before time.Time) (int64, error) {
	return s.db.Exec(ctx, pruneObservationsSQL, before.UnixMilli())
}

func scanObservation(r Row) (store.Observation, error) {
	var (
		o             store.Observation
		atMS, passing int64
		reasons       string
	)
	if err := r.Scan(&o.Endpoint, &o.Op, &o.Slot, &atMS, &passing, &o.State, &reasons, &o.DurationMS, &o.TermsSHA256, &o.Network); err != nil {
		return store.Observation{}, err
	}
	o.At = time.UnixMilli(atMS).UTC()
	o.Passing = passing == 1
	if reasons != "" {
		o.Reasons = strings.Split(reasons, ",")
	}
	return o, nil
}
