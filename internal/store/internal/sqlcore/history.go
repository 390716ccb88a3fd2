package sqlcore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The monitor's history (store.History). The primary key (endpoint, op,
// slot) makes a second write of one slot a no-op on either database.

const addObservationSQL = `
INSERT INTO observations (endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network, scheme, x402_version, source)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (endpoint, op, slot) DO NOTHING`

// The newest limit rows at or after since, read newest first and reversed.
const (
	observationsSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network, scheme, x402_version, source
FROM observations WHERE endpoint = $1 AND op = $2 AND at_ms >= $3
ORDER BY at_ms DESC, slot DESC LIMIT $4`
	observationsAllOpsSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network, scheme, x402_version, source
FROM observations WHERE endpoint = $1 AND at_ms >= $2
ORDER BY at_ms DESC, slot DESC, op DESC LIMIT $3`
	latestObservationSQL = `
SELECT endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network, scheme, x402_version, source
FROM observations WHERE endpoint = $1 AND op = $2
ORDER BY at_ms DESC, slot DESC LIMIT 1`
	pruneObservationsSQL = `DELETE FROM observations WHERE at_ms < $1`
	// The summary (migration 0007): days are whole UTC days since the
	// epoch (integer division on both databases).
	dailyCountsSQL = `
SELECT day, checks, passing FROM observation_days WHERE endpoint = $1 AND day >= $2 ORDER BY day`
	addDaySQL = `
INSERT INTO observation_days (endpoint, day, checks, passing) VALUES ($1, $2, 1, $3)
ON CONFLICT (endpoint, day) DO UPDATE SET checks = observation_days.checks + 1, passing = observation_days.passing + excluded.passing`
	runSQL       = `SELECT slot, passing FROM observation_runs WHERE endpoint = $1 AND op = $2`
	addRunSQL    = `INSERT INTO observation_runs (endpoint, op, slot, passing, change_slot) VALUES ($1, $2, $3, $4, -1)`
	updateRunSQL = `UPDATE observation_runs SET slot = $3, passing = $4, change_slot = CASE WHEN passing <> $4 THEN $3 ELSE change_slot END
WHERE endpoint = $1 AND op = $2`
	lastChangesSQL = `
SELECT o.endpoint, o.op, o.slot, o.at_ms, o.passing, o.state, o.reasons, o.duration_ms, o.terms_sha256, o.network, o.scheme, o.x402_version, o.source
FROM observation_runs r JOIN observations o ON o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.change_slot
WHERE r.endpoint = $1 ORDER BY r.op`
	pruneDaysSQL  = `DELETE FROM observation_days WHERE day <= $1`
	recountDaySQL = `
INSERT INTO observation_days (endpoint, day, checks, passing)
SELECT endpoint, at_ms / 86400000, COUNT(*), CAST(SUM(passing) AS BIGINT) FROM observations
WHERE at_ms >= $1 AND at_ms < $2 GROUP BY endpoint, at_ms / 86400000`
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
	added := false
	err := s.db.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, addObservationSQL, o.Endpoint, o.Op, o.Slot, o.At.UnixMilli(), passing,
			o.State, strings.Join(o.Reasons, ","), o.DurationMS, o.TermsSHA256, o.Network, o.Scheme, int64(o.X402Version), o.Source)
		if err != nil || n != 1 {
			return err
		}
		added = true
		// The summary, in the same transaction: the day's counts, and the
		// op's run (a late observation of an older slot changes neither its
		// latest nor its last change).
		if _, err := q.Exec(ctx, addDaySQL, o.Endpoint, o.At.UnixMilli()/dayMS, passing); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, addStateDaySQL, o.At.UnixMilli()/dayMS, o.Op, o.State); err != nil {
			return err
		}
		var slot, was int64
		switch err := q.QueryRow(ctx, runSQL, o.Endpoint, o.Op).Scan(&slot, &was); {
		case errors.Is(err, ErrNoRows):
			if _, err = q.Exec(ctx, addRunSQL, o.Endpoint, o.Op, o.Slot, passing); err != nil {
				return err
			}
		case err != nil:
			return err
		case o.Slot > slot:
			if _, err = q.Exec(ctx, updateRunSQL, o.Endpoint, o.Op, o.Slot, passing); err != nil {
				return err
			}
		default:
			return nil
		}
		return observedEndpoint(ctx, q, o)
	})
	return added, err
}

// LastChanges implements store.History.
func (s *Store) LastChanges(ctx context.Context, endpoint string) ([]store.Observation, error) {
	if !store.ValidID(endpoint) {
		return nil, store.ErrInvalidObservation
	}
	return readObservations(s.db.Query(ctx, lastChangesSQL, endpoint))
}

// LatestObservations implements store.History.
func (s *Store) LatestObservations(ctx context.Context, endpoints []string) ([]store.Observation, error) {
	if len(endpoints) == 0 {
		return nil, nil
	}
	if len(endpoints) > maxLatestBatch {
		return nil, store.ErrInvalidObservation
	}
	args := make([]any, len(endpoints))
	marks := make([]string, len(endpoints))
	for i, e := range endpoints {
		if !store.ValidID(e) {
			return nil, store.ErrInvalidObservation
		}
		args[i], marks[i] = e, "$"+strconv.Itoa(i+1)
	}
	return readObservations(s.db.Query(ctx, `
SELECT o.endpoint, o.op, o.slot, o.at_ms, o.passing, o.state, o.reasons, o.duration_ms, o.terms_sha256, o.network, o.scheme, o.x402_version, o.source
FROM observation_runs r JOIN observations o ON o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.slot
WHERE r.endpoint IN (`+strings.Join(marks, ", ")+`) ORDER BY r.endpoint, r.op`, args...))
}

// The ORDER BY names the summary's columns on purpose: SQLite then reads
// the summary first and each observation by its primary key, where ordering
// by the observation's columns makes it walk every observation of the
// endpoint (the whole history) instead.

// maxLatestBatch bounds the endpoints of one LatestObservations (a page).
const maxLatestBatch = 1000

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
	out, err := readObservations(rows, err)
	if err != nil {
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
	// A day is counted whole: the day since falls in, from its start.
	rows, err := s.db.Query(ctx, dailyCountsSQL, endpoint, since.UnixMilli()/dayMS)
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
// The days wholly before before go; the day it falls in is counted again
// from what is left of it (one day's rows).
func (s *Store) PruneObservations(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.db.InTx(ctx, func(q Querier) error {
		var err error
		if n, err = q.Exec(ctx, pruneObservationsSQL, before.UnixMilli()); err != nil {
			return err
		}
		day := before.UnixMilli() / dayMS
		if _, err := q.Exec(ctx, pruneDaysSQL, day); err != nil {
			return err
		}
		if _, err = q.Exec(ctx, recountDaySQL, day*dayMS, (day+1)*dayMS); err != nil {
			return err
		}
		return pruneStateDays(ctx, q, day)
	})
	return n, err
}

// readObservations reads every row of an observations query.
func readObservations(rows Rows, err error) ([]store.Observation, error) {
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
	return out, rows.Err()
}

func scanObservation(r Row) (store.Observation, error) {
	var (
		o             store.Observation
		atMS, passing int64
		reasons       string
		version       int64
	)
	if err := r.Scan(&o.Endpoint, &o.Op, &o.Slot, &atMS, &passing, &o.State, &reasons, &o.DurationMS, &o.TermsSHA256, &o.Network,
		&o.Scheme, &version, &o.Source); err != nil {
		return store.Observation{}, err
	}
	o.X402Version = int(version)
	o.At = time.UnixMilli(atMS).UTC()
	o.Passing = passing == 1
	if reasons != "" {
		o.Reasons = strings.Split(reasons, ",")
	}
	return o, nil
}
