package schedule

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/exchangerebel/payability/internal/monitor"
)

// The endpoint set lives in the store (the API, the imports and the file's
// seed change it, on any instance). The enqueuer (spread.go) reads it at
// every tick, from a copy each instance keeps of what scheduling needs (id,
// ops, interval), read again only when the store's version of the set
// changed: a set of 100,000 costs one read of the version a tick, and one
// read of the set after each change. An endpoint that is new, or whose ops
// or interval changed, gets the current period's check at once when its
// offset has passed (CatchUp), so an endpoint added through the API or an
// import is checked without waiting a period; the instance that made the
// change does this at once (Poke, Refresh), another at its next tick.

// ImportArgs is one read of a configured source in one of its periods.
type ImportArgs struct {
	Source string `json:"source"`
	Slot   int64  `json:"slot"`
}

// Kind implements river.JobArgs.
func (ImportArgs) Kind() string { return "payability_monitor_import" }

// InsertOpts makes an import unique per source and period.
func (ImportArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: CheckAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type importWorker struct {
	river.WorkerDefaults[ImportArgs]
	s   *Scheduler
	imp func(ctx context.Context, src monitor.Source) error
}

func (w *importWorker) Timeout(*river.Job[ImportArgs]) time.Duration { return JobTimeout }

// Work reads the source, then retires what no source has listed for the
// grace period, and schedules what the import added. A source no longer
// configured is not read.
func (w *importWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
	m := w.s.m
	i := slices.IndexFunc(m.Config.Sources, func(s monitor.Source) bool { return s.URL == job.Args.Source })
	if i < 0 || w.imp == nil {
		return river.JobCancel(errors.New("schedule: source not in the configuration"))
	}
	if err := w.imp(ctx, m.Config.Sources[i]); err != nil {
		// A catalog that cannot be read is retried at its next period,
		// not now: its endpoints age towards retirement meanwhile.
		if m.Log != nil {
			m.Log.Warn("import", "error", err.Error())
		}
		return river.JobCancel(err)
	}
	if _, err := m.Retire(ctx); err != nil {
		return err
	}
	return w.s.Refresh(ctx)
}

func importJobs(m *monitor.Monitor) []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	for _, src := range m.Config.Sources {
		src := src
		jobs = append(jobs, river.NewPeriodicJob(slotSchedule{src.Every}, func() (river.JobArgs, *river.InsertOpts) {
			return ImportArgs{Source: src.URL, Slot: SlotOf(m.NowTime(), src.Every)}, nil
		}, &river.PeriodicJobOpts{ID: "import/" + src.URL, RunOnStart: true}))
	}
	return jobs
}

// endpointSet is one instance's copy of the active set's schedule.
type endpointSet struct {
	m *monitor.Monitor

	mu      sync.Mutex
	read    bool
	version int64
	eps     []monitor.Endpoint // id, ops and interval only
	// changed are the endpoints new or rescheduled at the reads since
	// Refresh last took them.
	changed []monitor.Endpoint
}

// all implements Scheduler.endpoints: the active set, read again when the
// store's version of it changed.
func (y *endpointSet) all(ctx context.Context) ([]monitor.Endpoint, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	var v int64
	if y.m.Catalog != nil {
		// The version before the set: a change in between is read again
		// at the next call.
		var err error
		if v, err = y.m.Catalog.EndpointsVersion(ctx); err != nil {
			return nil, err
		}
		if y.read && v == y.version {
			return y.eps, nil
		}
	} else if y.read {
		return y.eps, nil
	}
	active, err := y.m.Active(ctx)
	if err != nil {
		return nil, err
	}
	prev := make(map[string]monitor.Endpoint, len(y.eps))
	for _, e := range y.eps {
		prev[e.ID] = e
	}
	next := make([]monitor.Endpoint, 0, len(active))
	for _, e := range active {
		e = monitor.Endpoint{ID: e.ID, Ops: e.Ops, Every: e.Every}
		if p, ok := prev[e.ID]; y.read && (!ok || p.Every != e.Every || !slices.Equal(p.Ops, e.Ops)) {
			y.changed = append(y.changed, e)
		}
		next = append(next, e)
	}
	y.eps, y.version, y.read = next, v, true
	return next, nil
}

// takeChanged reads the set and returns the endpoints new or rescheduled
// since the last take (none at the first read: a Start's catch-up covers
// the whole set).
func (y *endpointSet) takeChanged(ctx context.Context) ([]monitor.Endpoint, error) {
	if _, err := y.all(ctx); err != nil {
		return nil, err
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	out := y.changed
	y.changed = nil
	return out, nil
}

// giveBack returns changes that could not be scheduled, for the next take.
func (y *endpointSet) giveBack(changed []monitor.Endpoint) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.changed = append(changed, y.changed...)
}

// scheduleChanged inserts, for the endpoints that are new or rescheduled
// since this instance last read the set, the current period's check when
// it has passed or the endpoint was never observed (CatchUp) and their
// checks due up to the enqueuer's window; the enqueuer inserts the rest at
// its ticks. Checks inserted before, by any instance,
// are not inserted again.
func (s *Scheduler) scheduleChanged(ctx context.Context, changed []monitor.Endpoint) error {
	if len(changed) == 0 {
		return nil
	}
	if err := s.catchUpOf(ctx, changed); err != nil {
		return err
	}
	now := s.m.NowTime()
	return s.insertDue(ctx, DueIn(changed, now, now.Add(lookahead(max(s.tick, time.Second)))), nil)
}

// Refresh reads the stored set now, if its version changed, and schedules
// the endpoints that are new or rescheduled (the API after a change, an
// import when it ends). Without a Catalog, or with Options.Endpoints, it
// does nothing.
func (s *Scheduler) Refresh(ctx context.Context) error {
	if s.set == nil || s.m.Catalog == nil {
		return nil
	}
	changed, err := s.set.takeChanged(ctx)
	if err != nil {
		return err
	}
	if err := s.scheduleChanged(ctx, changed); err != nil {
		s.set.giveBack(changed)
		return err
	}
	return nil
}

// watch runs Refresh on its own goroutine when poked (the API's changes: a
// request never waits for the insertion).
type watch struct {
	poke   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *watch) start(s *Scheduler) {
	if w.poke == nil || w.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	log := s.m.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.poke:
			}
			if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
				log.Warn("schedule: endpoints", "error", err.Error())
			}
		}
	}()
}

func (w *watch) stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
		w.cancel = nil
	}
}

// Poke asks this instance to schedule a change of the set now, without
// waiting: the insertion happens on the watch's own goroutine, and pokes
// while one is pending are one (a poke before Start waits for it).
func (s *Scheduler) Poke() {
	if s.watch.poke == nil {
		return
	}
	select {
	case s.watch.poke <- struct{}{}:
	default:
	}
}
