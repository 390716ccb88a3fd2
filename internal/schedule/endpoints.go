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

// The endpoint set lives in the store: the periodic checks are built from
// it when the scheduler opens, and again whenever it changes (the API, an
// import, a reseed, on this instance or another): each instance polls the
// store's version of the set every ResyncEvery, and Refresh does it at once.

// DefaultResyncEvery is how often an instance looks for a changed set.
const DefaultResyncEvery = 30 * time.Second

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
	m   *monitor.Monitor
	imp func(ctx context.Context, src monitor.Source) error
}

func (w *importWorker) Timeout(*river.Job[ImportArgs]) time.Duration { return JobTimeout }

// Work reads the source, then retires what no source has listed for the
// grace period. A source no longer configured is not read.
func (w *importWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
	i := slices.IndexFunc(w.m.Config.Sources, func(s monitor.Source) bool { return s.URL == job.Args.Source })
	if i < 0 || w.imp == nil {
		return river.JobCancel(errors.New("schedule: source not in the configuration"))
	}
	if err := w.imp(ctx, w.m.Config.Sources[i]); err != nil {
		// A catalog that cannot be read is retried at its next period,
		// not now: its endpoints age towards retirement meanwhile.
		if w.m.Log != nil {
			w.m.Log.Warn("import", "error", err.Error())
		}
		return river.JobCancel(err)
	}
	_, err := w.m.Retire(ctx)
	return err
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

// endpointSync keeps one instance's periodic checks on the stored set.
type endpointSync struct {
	m        *monitor.Monitor
	periodic func() *river.PeriodicJobBundle
	every    time.Duration
	log      *slog.Logger

	mu      sync.Mutex // one refresh at a time
	version int64
	ids     []string // the endpoint ids the periodic checks are of

	poke   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Scheduler) watch(o Options, eps []monitor.Endpoint) *Scheduler {
	if o.NoPeriodic || o.Monitor.Catalog == nil {
		return s
	}
	s.sync = endpointSync{m: o.Monitor, periodic: s.periodic, every: o.ResyncEvery, log: o.Monitor.Log, poke: make(chan struct{}, 1)}
	if s.sync.every <= 0 {
		s.sync.every = DefaultResyncEvery
	}
	if s.sync.log == nil {
		s.sync.log = slog.New(slog.DiscardHandler)
	}
	for _, e := range eps {
		s.sync.ids = append(s.sync.ids, e.ID)
	}
	// The version the set had when it was read (a change since is seen
	// at the first poll).
	s.sync.version, _ = o.Monitor.Catalog.EndpointsVersion(context.Background())
	return s
}

func (y *endpointSync) start() {
	if y.m == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	y.cancel, y.done = cancel, make(chan struct{})
	go func() {
		defer close(y.done)
		t := time.NewTicker(y.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-y.poke:
			}
			if _, err := y.refresh(ctx, false); err != nil && ctx.Err() == nil {
				y.log.Warn("schedule: endpoints", "error", err.Error())
			}
		}
	}()
}

func (y *endpointSync) stop() {
	if y.cancel != nil {
		y.cancel()
		<-y.done
		y.cancel = nil
	}
}

// refresh rebuilds the periodic jobs from the stored set when its version
// changed (or always with force); changed reports whether it did.
func (y *endpointSync) refresh(ctx context.Context, force bool) (bool, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	v, err := y.m.Catalog.EndpointsVersion(ctx)
	if err != nil {
		return false, err
	}
	if v == y.version && !force {
		return false, nil
	}
	eps, err := y.m.Active(ctx)
	if err != nil {
		return false, err
	}
	b := y.periodic()
	b.Clear()
	b.AddMany(periodicJobs(y.m, eps))
	y.version, y.ids = v, y.ids[:0]
	for _, e := range eps {
		y.ids = append(y.ids, e.ID)
	}
	return true, nil
}

// Refresh rebuilds this instance's periodic checks from the stored set now
// (after a change made through this instance); other instances pick the
// change up within ResyncEvery.
func (s *Scheduler) Refresh(ctx context.Context) error {
	if s.sync.m == nil {
		return nil
	}
	_, err := s.sync.refresh(ctx, true)
	return err
}

// Poke asks this instance to look for a changed set now, without waiting
// (the API's changes): the look happens on the watch's own goroutine, and
// pokes while one is pending are one.
func (s *Scheduler) Poke() {
	if s.sync.poke == nil {
		return
	}
	select {
	case s.sync.poke <- struct{}{}:
	default:
	}
}

// Scheduled returns the ids of the endpoints this instance's periodic checks
// are of (for tests and logs).
func (s *Scheduler) Scheduled() []string {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return slices.Clone(s.sync.ids)
}
