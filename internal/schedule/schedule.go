// Package schedule runs the monitor's checks on River
// (github.com/riverqueue/river), in the store's own database (the SQLite
// file through riversqlite, PostgreSQL through riverpgxv5). Each endpoint's
// op has a fixed offset inside its interval (spread.go): one periodic job,
// inserted by River's elected leader, inserts the checks due in the next
// window, each scheduled at its due time and unique by endpoint, op and
// period. Several monitor instances on one PostgreSQL database run each
// scheduled check once: every insert is unique by its arguments (which
// carry the period), and the history's primary key records a period once
// even if a job were worked twice. A check that starts a period or more
// late (MinSkipLate at least) is skipped, not run. Workers are thin: they call the monitor, which
// calls the ops and the store.
package schedule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
)

// Job limits.
const (
	// CheckAttempts bounds the attempts of a check that fails on our side
	// (River retries with its exponential backoff); a failing target is a
	// result and never retries.
	CheckAttempts = 5
	// JobTimeout bounds one attempt: a probe is seven bounded fetches.
	JobTimeout = 5 * time.Minute
	// rescueAfter: a job still running this long after it started belongs
	// to an instance that died; another instance takes it over.
	rescueAfter = 2 * JobTimeout
	// PruneEvery is how often the history is pruned past its retention.
	PruneEvery = time.Hour
)

// CheckArgs is one scheduled check: an endpoint's op in one period (Slot:
// Unix seconds of the period's start).
//
// Due is when the check was scheduled to start (Unix milliseconds), set by
// the enqueuer and the start's catch-up; 0 for a check enqueued by hand,
// which is never skipped. It is not part of the unique key.
type CheckArgs struct {
	Endpoint string `json:"endpoint" river:"unique"`
	Op       string `json:"op" river:"unique"`
	Slot     int64  `json:"slot" river:"unique"`
	Due      int64  `json:"due,omitempty"`
}

// Kind implements river.JobArgs.
func (CheckArgs) Kind() string { return "payability_monitor_check" }

// InsertOpts makes a check unique by its arguments (endpoint, op, period)
// in every state, and bounds its attempts. Checks come after the
// enqueuer's and pruning's jobs (priority 2, theirs 1): a backlog of checks
// never holds up the insertion of the next window.
func (CheckArgs) InsertOpts() river.InsertOpts {
	o := uniqueByArgs()
	o.Priority = 2
	return o
}

// uniqueByArgs is the options of a job unique by its arguments in every
// state, with bounded attempts.
func uniqueByArgs() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: CheckAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// PruneArgs is one pruning of the history, once per PruneEvery period.
type PruneArgs struct {
	Slot int64 `json:"slot"`
}

// Kind implements river.JobArgs.
func (PruneArgs) Kind() string { return "payability_monitor_prune" }

// InsertOpts makes a pruning unique per period.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs()
}

// SlotOf is the period of every that t falls in, as the Unix second it
// starts. Every instance computes the same slot for the same period.
func SlotOf(t time.Time, every time.Duration) int64 {
	s := int64(every / time.Second)
	u := t.Unix()
	return u - u%s
}

// slotSchedule fires at the start of every period.
type slotSchedule struct{ every time.Duration }

func (s slotSchedule) Next(t time.Time) time.Time {
	return time.Unix(SlotOf(t, s.every), 0).Add(s.every)
}

type checkWorker struct {
	river.WorkerDefaults[CheckArgs]
	m      *monitor.Monitor
	behind *behind
	lag    func(op string, late time.Duration)
}

func (w *checkWorker) Timeout(*river.Job[CheckArgs]) time.Duration { return JobTimeout }

// MinSkipLate is the least lateness that skips a check, whatever its
// interval: River's leader makes scheduled jobs available every 5 s (its
// first pass comes several seconds after it is elected) and workers poll,
// so a lateness of seconds is no measure of a backlog.
const MinSkipLate = 30 * time.Second

// ErrSkipped ends a check that started a period or more after it was due:
// its job is cancelled (River keeps it so, with this error), never run late.
var ErrSkipped = errors.New("schedule: check skipped: started a period or more after it was due")

func (w *checkWorker) Work(ctx context.Context, job *river.Job[CheckArgs]) error {
	if job.Args.Due != 0 {
		e, ok, err := w.m.Endpoint(ctx, job.Args.Endpoint)
		if err != nil {
			return err
		}
		if !ok || SlotOf(time.Unix(job.Args.Slot, 0), max(e.Every, time.Second)) != job.Args.Slot {
			// Deleted, or its interval changed since the check was
			// enqueued: the enqueuer has inserted the new interval's.
			return river.JobCancel(monitor.ErrUnknownEndpoint)
		}
		now := w.m.NowTime()
		late := max(now.Sub(time.UnixMilli(job.Args.Due)), 0)
		if w.lag != nil {
			w.lag(job.Args.Op, late)
		}
		if late >= max(e.Every, MinSkipLate) {
			// The backlog is a period or more: the next period's check is
			// due already. This one is recorded as skipped, not run.
			w.behind.skip(now, job.Args.Op, late, e.Every)
			return river.JobCancel(ErrSkipped)
		}
	}
	_, _, err := w.m.Check(ctx, job.Args.Endpoint, job.Args.Op, job.Args.Slot)
	if errors.Is(err, monitor.ErrUnknownEndpoint) {
		// The configuration changed since the job was scheduled: nothing
		// to retry.
		return river.JobCancel(err)
	}
	return err
}

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	m *monitor.Monitor
}

func (w *pruneWorker) Work(ctx context.Context, job *river.Job[PruneArgs]) error {
	_, err := w.m.Prune(ctx)
	return err
}

// Database names the store's database: exactly one field is set.
type Database struct {
	SQLitePath  string
	PostgresDSN string
}

// Options configure a Scheduler.
type Options struct {
	DB      Database
	Monitor *monitor.Monitor
	Logger  *slog.Logger
	// NoPeriodic leaves the periodic jobs out: tests insert the jobs they
	// want with Enqueue, so nothing depends on the clock.
	NoPeriodic bool
	// Endpoints lists the endpoints to schedule (default the monitor's
	// active endpoints: the store's set when the monitor has a Catalog,
	// read again whenever the set's version changes; else the
	// configuration's).
	Endpoints func(ctx context.Context) ([]monitor.Endpoint, error)
	// EnqueueEvery is the enqueuer's tick (default the shortest interval
	// of the set at Open, within [1 s, MaxEnqueueEvery]).
	EnqueueEvery time.Duration
	// Skipped, when set, is told of each check skipped for being a period
	// late; Lag of how late each check started after it was due.
	Skipped func(op string)
	Lag     func(op string, late time.Duration)
	// PollInterval is how often workers look for jobs (default River's 1s;
	// PostgreSQL is also notified at once).
	PollInterval time.Duration
	// Workers is how many checks run at once on this instance (default 10;
	// SQLite: 1 connection, so 4).
	Workers int
	// ID names this instance among others (River's client id); empty is
	// a generated one.
	ID string
	// Receivers get a signed outcome_changed event for every change of
	// outcome (Open sets the monitor's Changed to enqueue them); Post
	// delivers them (default a guarded target client).
	Receivers []Receiver
	Post      Poster
	// DeliveryResult, when set, is told of each delivery attempt's result.
	// The webhook is the receiver's Label (the key for a dropped one).
	DeliveryResult func(webhook, result string)
	// Now is the signatures' clock (default time.Now).
	Now func() time.Time
	// WebhookAttempts bounds each delivery (default WebhookAttempts).
	WebhookAttempts int
	// RetryPolicy spaces retries (default River's exponential backoff);
	// tests make it immediate so no test waits on the backoff.
	RetryPolicy river.ClientRetryPolicy
	// Import, when set, reads one of the configuration's sources (its
	// periodic job, once per source and period across instances).
	Import func(ctx context.Context, src monitor.Source) error
}

// Scheduler is one instance's River client.
type Scheduler struct {
	m *monitor.Monitor
	// endpoints lists the endpoints to schedule; set, when not nil, is the
	// store's copy it reads (Options.Endpoints unset).
	endpoints func(ctx context.Context) ([]monitor.Endpoint, error)
	set       *endpointSet
	// tick is the enqueuer's: the window a change of the set inserts is as
	// far ahead as the enqueuer's.
	tick       time.Duration
	insert     func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (bool, error)
	insertMany func(ctx context.Context, params []river.InsertManyParams) (int, error)
	// catchUpOnStart: Start inserts the current period's passed checks.
	catchUpOnStart bool
	watch          watch
	start          func(ctx context.Context) error
	stop           func(ctx context.Context) error
	close          func()
}

// Open connects to the database, applies River's migrations and builds the
// client (not started).
func Open(ctx context.Context, o Options) (*Scheduler, error) {
	s := &Scheduler{m: o.Monitor, endpoints: o.Endpoints, tick: o.EnqueueEvery, catchUpOnStart: !o.NoPeriodic}
	if s.endpoints == nil {
		// The stored set (the file's alone without a catalog).
		s.set = &endpointSet{m: o.Monitor}
		s.endpoints = s.set.all
		if o.Monitor.Catalog != nil {
			s.watch.poke = make(chan struct{}, 1)
		}
	}
	logger := o.Monitor.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &checkWorker{m: o.Monitor, behind: &behind{log: logger, skipped: o.Skipped}, lag: o.Lag})
	river.AddWorker(workers, &enqueueWorker{s: s})
	river.AddWorker(workers, &pruneWorker{m: o.Monitor})
	ww := &webhookWorker{receivers: map[string]Receiver{}, post: o.Post, now: o.Now, result: o.DeliveryResult}
	for _, r := range o.Receivers {
		ww.receivers[r.Key()] = r
	}
	if ww.post == nil {
		ww.post = target.New(target.Options{Timeout: 10 * time.Second})
	}
	if ww.now == nil {
		ww.now = time.Now
	}
	river.AddWorker(workers, ww)
	river.AddWorker(workers, &importWorker{s: s, imp: o.Import})
	cfg := &river.Config{
		ID:                   o.ID,
		Workers:              workers,
		Logger:               o.Logger,
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: rescueAfter,
		FetchPollInterval:    o.PollInterval,
		MaxAttempts:          CheckAttempts,
		RetryPolicy:          o.RetryPolicy,
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PollInterval > 0 && o.PollInterval < river.FetchCooldownDefault {
		cfg.FetchCooldown = o.PollInterval
	}
	if !o.NoPeriodic {
		if s.tick <= 0 {
			eps, err := s.endpoints(ctx)
			if err != nil {
				return nil, fmt.Errorf("schedule: endpoints: %w", err)
			}
			s.tick = enqueueEvery(eps)
		}
		cfg.PeriodicJobs = periodicJobs(o.Monitor, s.tick)
	}
	n := o.Workers
	switch {
	case o.DB.SQLitePath != "":
		db, err := OpenSQLite(o.DB.SQLitePath)
		if err != nil {
			return nil, err
		}
		if err := migrateSQLite(ctx, o.DB.SQLitePath, db); err != nil {
			db.Close()
			return nil, err
		}
		if n == 0 {
			n = 4
		}
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: n}}
		// SQLite has no LISTEN/NOTIFY: workers poll.
		cfg.PollOnly = true
		c, err := river.NewClient(riversqlite.New(db), cfg)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("schedule: %w", err)
		}
		return s.wrap(c, func() { db.Close() }).tell(o), nil
	case o.DB.PostgresDSN != "":
		pool, err := openPool(ctx, o.DB.PostgresDSN)
		if err != nil {
			return nil, err
		}
		if err := migratePostgres(ctx, pool); err != nil {
			pool.Close()
			return nil, err
		}
		if n == 0 {
			n = 10
		}
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: n}}
		c, err := river.NewClient(riverpgxv5.New(pool), cfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("schedule: %w", err)
		}
		return s.wrap(c, pool.Close).tell(o), nil
	}
	return nil, errors.New("schedule: no database")
}

func (s *Scheduler) wrap(c riverClient, closeDB func()) *Scheduler {
	s.insert = func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (bool, error) {
		res, err := c.Insert(ctx, args, opts)
		if err != nil {
			return false, err
		}
		return !res.UniqueSkippedAsDuplicate, nil
	}
	s.insertMany = func(ctx context.Context, params []river.InsertManyParams) (int, error) {
		res, err := c.InsertMany(ctx, params)
		n := 0
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				n++
			}
		}
		return n, err
	}
	s.start, s.stop, s.close = c.Start, c.Stop, closeDB
	return s
}

// riverClient is what the scheduler uses of a river.Client, whatever its
// driver.
type riverClient interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// tell makes the monitor enqueue one delivery per receiver of each change
// of outcome; a change told twice is enqueued once (unique jobs).
func (s *Scheduler) tell(o Options) *Scheduler {
	if len(o.Receivers) == 0 {
		return s
	}
	attempts := o.WebhookAttempts
	if attempts <= 0 {
		attempts = WebhookAttempts
	}
	o.Monitor.Changed = func(ctx context.Context, prev, cur store.Observation) error {
		ev := eventOf(prev, cur)
		for _, r := range o.Receivers {
			body := string(ev.BodyAs(r.Format))
			if _, err := s.insert(ctx, WebhookArgs{Receiver: r.Key(), EventID: ev.ID, Body: body}, &river.InsertOpts{MaxAttempts: attempts}); err != nil {
				return err
			}
		}
		return nil
	}
	return s
}

// periodicJobs are few, whatever the number of endpoints: the enqueuer's
// tick, the pruning, and each configured source's import.
func periodicJobs(m *monitor.Monitor, tick time.Duration) []*river.PeriodicJob {
	jobs := []*river.PeriodicJob{river.NewPeriodicJob(slotSchedule{tick}, func() (river.JobArgs, *river.InsertOpts) {
		return EnqueueArgs{Window: SlotOf(m.NowTime(), tick), Tick: tick.Milliseconds()}, nil
	}, &river.PeriodicJobOpts{ID: "enqueue", RunOnStart: true})}
	jobs = append(jobs, river.NewPeriodicJob(slotSchedule{PruneEvery}, func() (river.JobArgs, *river.InsertOpts) {
		return PruneArgs{Slot: SlotOf(m.NowTime(), PruneEvery)}, nil
	}, &river.PeriodicJobOpts{ID: "prune", RunOnStart: true}))
	return append(jobs, importJobs(m)...)
}

// Start inserts the start's catch-up (CatchUp; not with NoPeriodic),
// starts working jobs (and, on the leader, scheduling them), and the watch
// that schedules at once the endpoints this instance adds (Poke).
func (s *Scheduler) Start(ctx context.Context) error {
	if s.catchUpOnStart {
		if err := s.catchUp(ctx); err != nil {
			return fmt.Errorf("schedule: catch-up: %w", err)
		}
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	s.watch.start(s)
	return nil
}

// Stop waits for the running jobs to end (or ctx), then closes the
// database.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.watch.stop()
	err := s.stop(ctx)
	s.close()
	return err
}

// Close closes the database of a scheduler that was never started.
func (s *Scheduler) Close() { s.close() }

// Enqueue inserts one check; false when that endpoint's op already has a
// job for slot (unique by endpoint, op and slot).
func (s *Scheduler) Enqueue(ctx context.Context, endpoint, op string, slot int64) (bool, error) {
	return s.insert(ctx, CheckArgs{Endpoint: endpoint, Op: op, Slot: slot}, nil)
}

// EnqueuePrune inserts one pruning for slot.
func (s *Scheduler) EnqueuePrune(ctx context.Context, slot int64) (bool, error) {
	return s.insert(ctx, PruneArgs{Slot: slot}, nil)
}

// OpenSQLite opens River's own pool on the store's SQLite file: one
// connection (the driver's advice), waiting for the store's writer.
func OpenSQLite(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, errors.New("schedule: sqlite: want a plain file path")
	}
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("schedule: sqlite: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

func openPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("schedule: postgres: invalid connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("schedule: postgres: %w", err)
	}
	return pool, nil
}

// migrateLockKey serializes River's migrations of instances starting
// together (an arbitrary constant, distinct from the store's).
const migrateLockKey int64 = 0x7061796d6f6e6974 // "paymonit"

// migrateSQLite applies River's migrations under the store's open lock
// (sqlite.LockOpen): processes starting together on a fresh file otherwise
// race on them (SQLite answers SQLITE_BUSY at once to the schema changes of
// a second one, whatever its busy timeout), and one exits.
func migrateSQLite(ctx context.Context, path string, db *sql.DB) error {
	unlock, err := sqlite.LockOpen(path)
	if err != nil {
		return err
	}
	defer unlock()
	if err := db.PingContext(ctx); err != nil { // its pragmas (WAL) under the lock too
		return fmt.Errorf("schedule: sqlite: %w", err)
	}
	m, err := rivermigrate.New(riversqlite.New(db), nil)
	if err != nil {
		return fmt.Errorf("schedule: migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("schedule: migrate: %w", err)
	}
	return nil
}

func migratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("schedule: postgres: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return fmt.Errorf("schedule: migration lock: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		err = fmt.Errorf("schedule: migrate: %w", err)
	}
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey); uerr != nil {
		conn.Conn().Close(context.WithoutCancel(ctx))
		err = errors.Join(err, uerr)
	}
	return err
}

// Migrate applies River's migrations to the database (for `payability store
// migrate`, after the store's own).
func Migrate(ctx context.Context, d Database) error {
	switch {
	case d.SQLitePath != "":
		db, err := OpenSQLite(d.SQLitePath)
		if err != nil {
			return err
		}
		defer db.Close()
		return migrateSQLite(ctx, d.SQLitePath, db)
	case d.PostgresDSN != "":
		pool, err := openPool(ctx, d.PostgresDSN)
		if err != nil {
			return err
		}
		defer pool.Close()
		return migratePostgres(ctx, pool)
	}
	return errors.New("schedule: no database")
}
