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
	Config  *Config
	History store.History
	// Catalog, when set, is the endpoint set (the configuration seeds it,
	// see Seed); nil reads the configuration's endpoints only.
	Catalog store.EndpointCatalog
	// MaxEndpoints bounds the active endpoints of the Catalog (default
	// store.MaxEndpoints).
	MaxEndpoints int
	// AllowPrivate lets the API add endpoints on literal loopback and
	// private addresses (as --allow-private lets the checks reach them).
	AllowPrivate bool
	Observers    map[string]Observer
	Now          func() time.Time
	Log          *slog.Logger
	// Recorded, when set, is told of each observation this monitor
	// recorded (once per observation: metrics hang here).
	Recorded func(o store.Observation)
	// Changed, when set, is told of a change of outcome the endpoint's
	// alert policy announces (alert.go): cur is the observation that
	// changed it, prev carries the outcome announced before (with a store
	// that keeps no alert state: the op's observation before cur). The
	// first observation of an op is no change. It may be
	// told of one change more than once (a retried job): it must be
	// idempotent (webhooks are, by event id). An error fails the check,
	// which is retried.
	Changed func(ctx context.Context, prev, cur store.Observation) error
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
	e, ok, err := m.Endpoint(ctx, id)
	if err != nil {
		return store.Observation{}, false, err
	}
	if !ok || !e.Retired.IsZero() || !e.Has(op) {
		return store.Observation{}, false, ErrUnknownEndpoint
	}
	obs, ok := m.Observers[op]
	if !ok {
		return store.Observation{}, false, ErrUnknownEndpoint
	}
	// The op's last two observations: when the newest is this slot's, an
	// earlier attempt recorded it and failed after (telling of a change):
	// do not observe again, only tell again.
	recent, err := m.History.Observations(ctx, id, op, time.Time{}, 2)
	if err != nil {
		return store.Observation{}, false, err
	}
	if n := len(recent); n > 0 && recent[n-1].Slot == slot {
		rec := recent[n-1]
		var prev *store.Observation
		if n == 2 {
			prev = &recent[0]
		}
		return rec, false, m.alert(ctx, e, prev, rec)
	}
	start := m.now()
	o, err := obs.Observe(ctx, e)
	if err != nil {
		return store.Observation{}, false, err
	}
	end := m.now()
	rec := store.Observation{
		Endpoint: id, Op: op, Slot: slot, At: end, Passing: o.Passing, State: o.State,
		Reasons: o.Reasons, DurationMS: max(end.Sub(start).Milliseconds(), 0), TermsSHA256: o.TermsSHA256, Network: o.Network,
		Scheme: o.Scheme, X402Version: o.X402Version, Source: SourceOf(e),
	}
	added, err := m.History.AddObservation(ctx, rec)
	if err != nil {
		return store.Observation{}, false, err
	}
	m.log().Info("check", "id", id, "op", op, "outcome", string(OutcomeOf(rec)), "state", rec.State,
		"duration_ms", rec.DurationMS, "recorded", added)
	if !added {
		return rec, false, nil
	}
	if m.Recorded != nil {
		m.Recorded(rec)
	}
	// A job of an older slot that ran late (rescued) tells of no change:
	// the order of outcomes is the slots' order. The alert policy decides
	// whether this observation changes what is announced.
	var prev *store.Observation
	if n := len(recent); n > 0 {
		prev = &recent[n-1]
	}
	if err := m.alert(ctx, e, prev, rec); err != nil {
		return rec, true, err
	}
	return rec, true, nil
}

func (m *Monitor) changed(ctx context.Context, prev, cur store.Observation) error {
	if m.Changed == nil || prev.Passing == cur.Passing {
		return nil
	}
	return m.Changed(ctx, prev, cur)
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

// Latest returns the newest observation of each of e's ops that has one,
// read through the summary (one read whatever the history's length).
func (m *Monitor) Latest(ctx context.Context, e Endpoint) (map[string]store.Observation, error) {
	l, err := m.LatestOf(ctx, []Endpoint{e})
	if err != nil {
		return nil, err
	}
	out := map[string]store.Observation{}
	for op, o := range l[e.ID] {
		if e.Has(op) {
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
