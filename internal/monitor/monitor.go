package monitor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// ErrUnknownEndpoint: a scheduled check names an endpoint or op the
// configuration no longer has (it changed since the job was scheduled).
var ErrUnknownEndpoint = errors.New("monitor: endpoint or op not in the configuration")

// Monitor runs scheduled checks and records them. Its fields are set once.
type Monitor struct {
	Config    *Config
	History   store.History
	Observers map[string]Observer
	Now       func() time.Time
	Log       *slog.Logger
	// Observed, when set, is told of every observation recorded, with the
	// one before it of the same endpoint and op (hadPrev false for the
	// first). Metrics and webhooks hang here.
	Observed func(ctx context.Context, prev store.Observation, hadPrev bool, cur store.Observation) error
}

func (m *Monitor) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Monitor) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Check runs op on the endpoint id for the scheduled slot and records the
// observation. A broken target is an observation; an error is ours. added is
// false when the slot was recorded already (by another instance, or by an
// earlier attempt of this job).
func (m *Monitor) Check(ctx context.Context, id, op string, slot int64) (store.Observation, bool, error) {
	e, ok := m.Config.Endpoint(id)
	if !ok || !e.Has(op) {
		return store.Observation{}, false, ErrUnknownEndpoint
	}
	obs, ok := m.Observers[op]
	if !ok {
		return store.Observation{}, false, ErrUnknownEndpoint
	}
	prev, hadPrev, err := m.History.LatestObservation(ctx, id, op)
	if err != nil {
		return store.Observation{}, false, err
	}
	start := m.now()
	o, err := obs.Observe(ctx, e)
	if err != nil {
		return store.Observation{}, false, err
	}
	end := m.now()
	rec := store.Observation{
		Endpoint: id, Op: op, Slot: slot, At: end, Passing: o.Passing, State: o.State,
		Reasons: o.Reasons, DurationMS: max(end.Sub(start).Milliseconds(), 0), TermsSHA256: o.TermsSHA256,
	}
	added, err := m.History.AddObservation(ctx, rec)
	if err != nil {
		return store.Observation{}, false, err
	}
	m.log().Info("check", "id", id, "op", op, "outcome", string(OutcomeOf(rec)), "state", rec.State,
		"duration_ms", rec.DurationMS, "recorded", added)
	if added && m.Observed != nil {
		if err := m.Observed(ctx, prev, hadPrev, rec); err != nil {
			return rec, added, err
		}
	}
	return rec, added, nil
}

// Prune deletes the history older than the retention and returns how many
// observations went.
func (m *Monitor) Prune(ctx context.Context) (int64, error) {
	n, err := m.History.PruneObservations(ctx, m.now().Add(-m.Config.Retention))
	if err == nil {
		m.log().Info("prune", "deleted", n)
	}
	return n, err
}

// Latest returns the newest observation of each of e's ops that has one.
func (m *Monitor) Latest(ctx context.Context, e Endpoint) (map[string]store.Observation, error) {
	out := map[string]store.Observation{}
	for _, op := range e.Ops {
		o, ok, err := m.History.LatestObservation(ctx, e.ID, op)
		if err != nil {
			return nil, err
		}
		if ok {
			out[op] = o
		}
	}
	return out, nil
}

// StatusNow is e's status at the monitor's now.
func (m *Monitor) StatusNow(e Endpoint, latest map[string]store.Observation) Status {
	src := StatusSource(e)
	o, ok := latest[src]
	return StatusOf(e, o, ok, m.now())
}

// NowTime is the monitor's clock.
func (m *Monitor) NowTime() time.Time { return m.now() }
