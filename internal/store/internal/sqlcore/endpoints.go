package sqlcore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The monitor's endpoints (store.EndpointCatalog, migration 0010).

const (
	endpointColumns = `e.id, e.url, e.method, e.body, e.ops, e.every_s, e.network, e.max_amount, e.status_op,
e.retired_ms, e.status_state, e.status_at_ms, e.observed_network`
	endpointExistsSQL = `SELECT 1 FROM endpoints WHERE id = $1`
	upsertEndpointSQL = `
INSERT INTO endpoints (id, url, method, body, ops, every_s, network, max_amount, status_op, retired_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0)
ON CONFLICT (id) DO UPDATE SET url = excluded.url, method = excluded.method, body = excluded.body,
ops = excluded.ops, every_s = excluded.every_s, network = excluded.network, max_amount = excluded.max_amount,
status_op = excluded.status_op, retired_ms = 0`
	mergeEndpointSQL = `
INSERT INTO endpoints (id, url, method, body, ops, every_s, network, max_amount, status_op, retired_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0)
ON CONFLICT (id) DO UPDATE SET retired_ms = 0`
	updateEndpointSQL = `
UPDATE endpoints SET url = $2, method = $3, body = $4, ops = $5, every_s = $6, network = $7, max_amount = $8, status_op = $9
WHERE id = $1`
	// The status fields follow the status op, which a put may change: they
	// are read again from the summary of observations (0007), and the
	// network from the newest preflight (empty when it selected none).
	refreshStatusSQL = `
UPDATE endpoints SET
status_slot = COALESCE((SELECT r.slot FROM observation_runs r WHERE r.endpoint = endpoints.id AND r.op = endpoints.status_op), -1),
status_state = COALESCE((SELECT o.state FROM observation_runs r JOIN observations o ON o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.slot
	WHERE r.endpoint = endpoints.id AND r.op = endpoints.status_op), ''),
status_at_ms = COALESCE((SELECT o.at_ms FROM observation_runs r JOIN observations o ON o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.slot
	WHERE r.endpoint = endpoints.id AND r.op = endpoints.status_op), 0),
observed_network = COALESCE((SELECT o.network FROM observation_runs r JOIN observations o ON o.endpoint = r.endpoint AND o.op = r.op AND o.slot = r.slot
	WHERE r.endpoint = endpoints.id AND r.op = 'preflight'), '')
WHERE id = $1`
	upsertSourceSQL = `
INSERT INTO endpoint_sources (endpoint, source, last_seen_ms) VALUES ($1, $2, $3)
ON CONFLICT (endpoint, source) DO UPDATE SET last_seen_ms =
CASE WHEN excluded.last_seen_ms > endpoint_sources.last_seen_ms THEN excluded.last_seen_ms ELSE endpoint_sources.last_seen_ms END`
	countActiveSQL     = `SELECT COUNT(*) FROM endpoints WHERE retired_ms = 0`
	bumpVersionSQL     = `UPDATE endpoint_version SET n = n + 1 WHERE id = 1`
	versionSQL         = `SELECT n FROM endpoint_version WHERE id = 1`
	deleteEndpointSQL  = `DELETE FROM endpoints WHERE id = $1`
	deleteSourcesSQL   = `DELETE FROM endpoint_sources WHERE endpoint = $1`
	sourcesOfSQL       = `SELECT source FROM endpoint_sources WHERE endpoint = $1 ORDER BY source`
	sourceEndpointsSQL = `SELECT endpoint FROM endpoint_sources WHERE source = $1`
	deleteSourceRowSQL = `DELETE FROM endpoint_sources WHERE endpoint = $1 AND source = $2`
	retireEndpointsSQL = `
UPDATE endpoints SET retired_ms = $2 WHERE retired_ms = 0 AND NOT EXISTS
(SELECT 1 FROM endpoint_sources s WHERE s.endpoint = endpoints.id AND s.last_seen_ms >= $1)`
	// An observation of an endpoint's status op newer than the one its
	// record shows (AddObservation, in its transaction).
	statusObservedSQL = `
UPDATE endpoints SET status_slot = $3, status_state = $4, status_at_ms = $5
WHERE id = $1 AND status_op = $2 AND status_slot < $3`
	networkObservedSQL = `UPDATE endpoints SET observed_network = $2 WHERE id = $1`
)

// PutEndpoints implements store.EndpointCatalog.
func (s *Store) PutEndpoints(ctx context.Context, eps []store.EndpointRecord, p store.PutEndpoints) error {
	if !store.ValidSource(p.Source) || p.Seen.IsZero() || p.Max < 0 {
		return store.ErrInvalidEndpoint
	}
	for _, e := range eps {
		if err := e.Validate(); err != nil {
			return err
		}
	}
	seen := store.SourceLastSeenMS(p.Source, p.Seen)
	return s.db.InTx(ctx, func(q Querier) error {
		for _, e := range eps {
			if p.Create {
				var one int64
				switch err := q.QueryRow(ctx, endpointExistsSQL, e.ID).Scan(&one); {
				case err == nil:
					return store.ErrEndpointExists
				case !errors.Is(err, ErrNoRows):
					return err
				}
			}
			put := upsertEndpointSQL
			if p.Merge {
				put = mergeEndpointSQL
			}
			if _, err := q.Exec(ctx, put, endpointArgs(e)...); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, refreshStatusSQL, e.ID); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, upsertSourceSQL, e.ID, p.Source, seen); err != nil {
				return err
			}
		}
		var n int64
		if err := q.QueryRow(ctx, countActiveSQL).Scan(&n); err != nil {
			return err
		}
		if n > int64(p.Max) {
			return store.ErrTooManyEndpoints
		}
		_, err := q.Exec(ctx, bumpVersionSQL)
		return err
	})
}

func endpointArgs(e store.EndpointRecord) []any {
	return []any{e.ID, e.URL, e.Method, e.Body, strings.Join(e.Ops, ","), int64(e.Every / time.Second), e.Network, e.MaxAmount, e.StatusOp}
}

// UpdateEndpoint implements store.EndpointCatalog.
func (s *Store) UpdateEndpoint(ctx context.Context, e store.EndpointRecord) error {
	if err := e.Validate(); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, updateEndpointSQL, endpointArgs(e)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNoEndpoint
		}
		if _, err := q.Exec(ctx, refreshStatusSQL, e.ID); err != nil {
			return err
		}
		_, err = q.Exec(ctx, bumpVersionSQL)
		return err
	})
}

// DeleteEndpoint implements store.EndpointCatalog.
func (s *Store) DeleteEndpoint(ctx context.Context, id string) (bool, error) {
	if !store.ValidID(id) {
		return false, store.ErrInvalidEndpoint
	}
	deleted := false
	err := s.db.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, deleteEndpointSQL, id)
		if err != nil || n == 0 {
			return err
		}
		deleted = true
		if _, err := q.Exec(ctx, deleteSourcesSQL, id); err != nil {
			return err
		}
		_, err = q.Exec(ctx, bumpVersionSQL)
		return err
	})
	return deleted, err
}

// Endpoint implements store.EndpointCatalog.
func (s *Store) Endpoint(ctx context.Context, id string) (store.EndpointRecord, bool, error) {
	if !store.ValidID(id) {
		return store.EndpointRecord{}, false, nil
	}
	rows, err := s.db.Query(ctx, `SELECT `+endpointColumns+` FROM endpoints e WHERE e.id = $1`, id)
	eps, err := s.readEndpoints(ctx, rows, err)
	if err != nil || len(eps) == 0 {
		return store.EndpointRecord{}, false, err
	}
	return eps[0], true, nil
}

// ListEndpoints implements store.EndpointCatalog.
func (s *Store) ListEndpoints(ctx context.Context, q store.EndpointQuery) ([]store.EndpointRecord, int, error) {
	if q.Offset < 0 || q.Limit < 0 || (len(q.States) > 0 && q.Now.IsZero()) {
		return nil, 0, store.ErrInvalidEndpoint
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Retired {
		where = append(where, "e.retired_ms <> 0")
	} else {
		where = append(where, "e.retired_ms = 0")
	}
	if q.Network != "" {
		n := arg(q.Network)
		where = append(where, "(e.network = "+n+" OR e.observed_network = "+n+")")
	}
	if q.Source != "" {
		where = append(where, "EXISTS (SELECT 1 FROM endpoint_sources s WHERE s.endpoint = e.id AND s.source = "+arg(q.Source)+")")
	}
	if len(q.States) > 0 {
		var in []string
		for _, st := range q.States {
			in = append(in, arg(st))
		}
		// Fresh: taken at or after now minus two intervals (monitor.Fresh).
		cond := "(e.status_state IN (" + strings.Join(in, ", ") + ") AND e.status_at_ms >= " + arg(q.Now.UnixMilli()) + " - 2000 * e.every_s)"
		if q.NotStates {
			cond = "NOT " + cond
		}
		where = append(where, cond)
	}
	cond := " WHERE " + strings.Join(where, " AND ")
	var total int64
	if err := s.db.QueryRow(ctx, "SELECT COUNT(*) FROM endpoints e"+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	sql := "SELECT " + endpointColumns + " FROM endpoints e" + cond + " ORDER BY e.id"
	if q.Limit > 0 {
		sql += " LIMIT " + arg(int64(q.Limit)) + " OFFSET " + arg(int64(q.Offset))
	} else if q.Offset > 0 {
		return nil, int(total), nil
	}
	rows, err := s.db.Query(ctx, sql, args...)
	eps, err := s.readEndpoints(ctx, rows, err)
	return eps, int(total), err
}

// readEndpoints reads the rows of an endpoints query, then the sources of
// each (one query for them all).
func (s *Store) readEndpoints(ctx context.Context, rows Rows, err error) ([]store.EndpointRecord, error) {
	if err != nil {
		return nil, err
	}
	var out []store.EndpointRecord
	func() {
		defer rows.Close()
		for rows.Next() {
			var (
				e                          store.EndpointRecord
				ops                        string
				every, retired, statusAtMS int64
			)
			if err = rows.Scan(&e.ID, &e.URL, &e.Method, &e.Body, &ops, &every, &e.Network, &e.MaxAmount, &e.StatusOp,
				&retired, &e.StatusState, &statusAtMS, &e.ObservedNetwork); err != nil {
				return
			}
			e.Ops = strings.Split(ops, ",")
			e.Every = time.Duration(every) * time.Second
			if retired != 0 {
				e.Retired = time.UnixMilli(retired).UTC()
			}
			if statusAtMS != 0 {
				e.StatusAt = time.UnixMilli(statusAtMS).UTC()
			}
			out = append(out, e)
		}
		err = rows.Err()
	}()
	if err != nil || len(out) == 0 {
		return out, err
	}
	at := make(map[string]int, len(out))
	for i, e := range out {
		at[e.ID] = i
	}
	// The sources are read sourcesBatch endpoints a query: a whole set
	// (100,000) in one IN list is past PostgreSQL's 65,535 parameters.
	for lo := 0; lo < len(out); lo += sourcesBatch {
		hi := min(lo+sourcesBatch, len(out))
		marks := make([]string, 0, hi-lo)
		args := make([]any, 0, hi-lo)
		for i, e := range out[lo:hi] {
			marks = append(marks, "$"+strconv.Itoa(i+1))
			args = append(args, e.ID)
		}
		if err := s.readSources(ctx, out, at, "SELECT endpoint, source FROM endpoint_sources WHERE endpoint IN ("+strings.Join(marks, ", ")+") ORDER BY endpoint, source", args); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sourcesBatch is the number of endpoints whose sources one query reads.
const sourcesBatch = 1000

// readSources appends the sources the query q reads to the endpoints of
// out (at maps an id to its index).
func (s *Store) readSources(ctx context.Context, out []store.EndpointRecord, at map[string]int, q string, args []any) error {
	srows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer srows.Close()
	for srows.Next() {
		var id, src string
		if err := srows.Scan(&id, &src); err != nil {
			return err
		}
		if i, ok := at[id]; ok {
			out[i].Sources = append(out[i].Sources, src)
		}
	}
	return srows.Err()
}

// ReleaseSource implements store.EndpointCatalog.
func (s *Store) ReleaseSource(ctx context.Context, source string, keep []string) error {
	if !store.ValidSource(source) {
		return store.ErrInvalidEndpoint
	}
	return s.db.InTx(ctx, func(q Querier) error {
		rows, err := q.Query(ctx, sourceEndpointsSQL, source)
		if err != nil {
			return err
		}
		var drop []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !slices.Contains(keep, id) {
				drop = append(drop, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range drop {
			if _, err := q.Exec(ctx, deleteSourceRowSQL, id, source); err != nil {
				return err
			}
		}
		if len(drop) > 0 {
			_, err = q.Exec(ctx, bumpVersionSQL)
		}
		return err
	})
}

// RetireEndpoints implements store.EndpointCatalog.
func (s *Store) RetireEndpoints(ctx context.Context, cutoff, at time.Time) (int64, error) {
	if at.IsZero() {
		return 0, store.ErrInvalidEndpoint
	}
	var n int64
	err := s.db.InTx(ctx, func(q Querier) error {
		var err error
		if n, err = q.Exec(ctx, retireEndpointsSQL, cutoff.UnixMilli(), at.UnixMilli()); err != nil || n == 0 {
			return err
		}
		_, err = q.Exec(ctx, bumpVersionSQL)
		return err
	})
	return n, err
}

// EndpointsVersion implements store.EndpointCatalog.
func (s *Store) EndpointsVersion(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, versionSQL).Scan(&n)
	return n, err
}

// observedEndpoint keeps the record of o's endpoint current (AddObservation,
// in its transaction, for an observation newer than the op's newest).
func observedEndpoint(ctx context.Context, q Querier, o store.Observation) error {
	if _, err := q.Exec(ctx, statusObservedSQL, o.Endpoint, o.Op, o.Slot, o.State, o.At.UnixMilli()); err != nil {
		return err
	}
	if o.Op == "preflight" {
		_, err := q.Exec(ctx, networkObservedSQL, o.Endpoint, o.Network)
		return err
	}
	return nil
}
