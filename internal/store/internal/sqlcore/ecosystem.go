package sqlcore

import (
	"context"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The ecosystem report's aggregate reads (store.Ecosystem), migration 0011.
// LatestGroups reads the summary's latest slot per endpoint and op
// (observation_runs) and the observation it names by primary key: one
// lookup per endpoint, grouped by the database. StateDays reads
// observation_states, counted as observations land: its cost is the days
// times the states, whatever the number of endpoints.
const (
	latestGroupsSQL = `
SELECT o.state, o.network, o.scheme, o.x402_version, o.source, o.reasons, COUNT(*)
FROM observation_runs r CROSS JOIN observations o
WHERE o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.slot AND r.op = $1 AND o.at_ms >= $2
GROUP BY o.state, o.network, o.scheme, o.x402_version, o.source, o.reasons
ORDER BY o.state, o.network, o.scheme, o.x402_version, o.source, o.reasons`
	stateDaysSQL = `
SELECT day, op, state, checks FROM observation_states WHERE day >= $1 ORDER BY day, op, state`
	addStateDaySQL = `
INSERT INTO observation_states (day, op, state, checks) VALUES ($1, $2, $3, 1)
ON CONFLICT (day, op, state) DO UPDATE SET checks = observation_states.checks + 1`
	pruneStateDaysSQL  = `DELETE FROM observation_states WHERE day <= $1`
	recountStateDaySQL = `
INSERT INTO observation_states (day, op, state, checks)
SELECT at_ms / 86400000, op, state, COUNT(*) FROM observations
WHERE at_ms >= $1 AND at_ms < $2 GROUP BY at_ms / 86400000, op, state`
)

// LatestGroups implements store.Ecosystem.
func (s *Store) LatestGroups(ctx context.Context, op string, since time.Time) ([]store.LatestGroup, error) {
	if !store.ValidMonitorOp(op) {
		return nil, store.ErrInvalidObservation
	}
	rows, err := s.db.Query(ctx, latestGroupsSQL, op, since.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LatestGroup
	for rows.Next() {
		g := store.LatestGroup{Op: op}
		var version int64
		var reasons string
		if err := rows.Scan(&g.State, &g.Network, &g.Scheme, &version, &g.Source, &reasons, &g.Endpoints); err != nil {
			return nil, err
		}
		g.X402Version = int(version)
		if reasons != "" {
			g.Reasons = strings.Split(reasons, ",")
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// StateDays implements store.Ecosystem.
func (s *Store) StateDays(ctx context.Context, since time.Time) ([]store.StateDay, error) {
	rows, err := s.db.Query(ctx, stateDaysSQL, since.UnixMilli()/dayMS)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.StateDay
	for rows.Next() {
		var (
			d   store.StateDay
			day int64
		)
		if err := rows.Scan(&day, &d.Op, &d.State, &d.Checks); err != nil {
			return nil, err
		}
		d.Day = time.UnixMilli(day * dayMS).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// pruneStateDays follows PruneObservations: the days wholly before day go,
// and day itself is counted again from what is left of it.
func pruneStateDays(ctx context.Context, q Querier, day int64) error {
	if _, err := q.Exec(ctx, pruneStateDaysSQL, day); err != nil {
		return err
	}
	_, err := q.Exec(ctx, recountStateDaySQL, day*dayMS, (day+1)*dayMS)
	return err
}
