package schedule

import (
	"context"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/exchangerebel/payability/internal/monitor"
)

// Spreading the checks over each period (docs/monitor.md, "Running a
// directory"). Every (endpoint, op) has a fixed offset inside its interval,
// a hash of its id and op: its check of the period starting at slot s is
// due at s + offset. No instance keeps a job per endpoint in memory: one
// periodic job, inserted by River's elected leader every tick, inserts the
// checks due in the next window (two ticks long, and at least a tick and
// 30 s, so a late tick or a change of leader leaves no gap), each scheduled
// at its due time and unique by (endpoint, op, slot), in batches. Windows
// overlap; the unique key makes the second insert of a check a no-op, on
// any number of instances.

// Enqueue limits.
const (
	// MaxEnqueueEvery is the longest tick of the enqueuer: a new or
	// changed endpoint waits at most this long to be scheduled.
	MaxEnqueueEvery = time.Minute
	// insertBatch is how many checks one insert statement carries.
	insertBatch = 1000
)

// Offset is the fixed place of (endpoint id, op) inside every: a 64-bit
// FNV-1a hash of the two, modulo every in milliseconds. Every instance and
// every release computes the same one (a test pins values), and the hash
// spreads a directory's endpoints evenly over the period.
func Offset(id, op string, every time.Duration) time.Duration {
	ms := uint64(every / time.Millisecond)
	if ms == 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(op))
	return time.Duration(h.Sum64()%ms) * time.Millisecond
}

// DueAt is when the check of (id, op) for the period starting at slot is
// due.
func DueAt(slot int64, id, op string, every time.Duration) time.Time {
	return time.Unix(slot, 0).Add(Offset(id, op, every))
}

// Due is one check due at a time.
type Due struct {
	Args CheckArgs
	At   time.Time
}

// DueIn lists the checks of endpoints due in [from, to), endpoint by
// endpoint, slot by slot.
func DueIn(endpoints []monitor.Endpoint, from, to time.Time) []Due {
	var out []Due
	for _, e := range endpoints {
		secs := int64(e.Every / time.Second)
		if secs <= 0 {
			continue
		}
		for _, op := range e.Ops {
			off := Offset(e.ID, op, e.Every)
			slot := SlotOf(from.Add(-off), e.Every)
			for {
				at := time.Unix(slot, 0).Add(off)
				if !at.Before(to) {
					break
				}
				if !at.Before(from) {
					out = append(out, Due{Args: CheckArgs{Endpoint: e.ID, Op: op, Slot: slot}, At: at})
				}
				slot += secs
			}
		}
	}
	return out
}

// lookahead is how far past its tick's start one enqueuer job inserts: two
// ticks, and at least a tick and 30 s, so a tick that runs late (a loaded
// machine, a change of leader) leaves no gap even when ticks are short.
func lookahead(tick time.Duration) time.Duration {
	return max(2*tick, tick+30*time.Second)
}

// enqueueEvery is the enqueuer's tick for endpoints: the shortest interval,
// within [1 s, MaxEnqueueEvery].
func enqueueEvery(endpoints []monitor.Endpoint) time.Duration {
	tick := MaxEnqueueEvery
	for _, e := range endpoints {
		tick = min(tick, e.Every)
	}
	return max(tick, time.Second)
}

// EnqueueArgs is one tick of the enqueuer: it inserts the checks due in
// [Window, Window + lookahead) that are not past (Window: Unix seconds).
type EnqueueArgs struct {
	Window int64 `json:"window"`
	Tick   int64 `json:"tick_ms"`
}

// Kind implements river.JobArgs.
func (EnqueueArgs) Kind() string { return "payability_monitor_enqueue" }

// InsertOpts makes a tick unique by its window.
func (EnqueueArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs()
}

type enqueueWorker struct {
	river.WorkerDefaults[EnqueueArgs]
	s *Scheduler
}

func (w *enqueueWorker) Work(ctx context.Context, job *river.Job[EnqueueArgs]) error {
	tick := time.Duration(job.Args.Tick) * time.Millisecond
	from := time.Unix(job.Args.Window, 0)
	// Checks already past are never inserted: after a pause nothing is
	// caught up in a burst, the next due times are kept.
	if now := w.s.m.NowTime(); now.After(from) {
		from = now
	}
	// Endpoints added or rescheduled since this instance last read the
	// stored set (through any instance) get their passed check first.
	if err := w.s.Refresh(ctx); err != nil {
		return err
	}
	_, err := w.s.EnqueueWindow(ctx, from, time.Unix(job.Args.Window, 0).Add(lookahead(tick)))
	return err
}

// EnqueueWindow inserts every check of the active set due in [from, to),
// each scheduled at its due time, in batches; it returns how many were new
// (a check inserted before, by any instance, is not inserted again).
func (s *Scheduler) EnqueueWindow(ctx context.Context, from, to time.Time) (int, error) {
	endpoints, err := s.endpoints(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.insertDue(ctx, DueIn(endpoints, from, to), &n)
	return n, err
}

// insertDue inserts the checks of due, each scheduled at its time, in
// batches, adding to *n (when given) how many were new.
func (s *Scheduler) insertDue(ctx context.Context, due []Due, n *int) error {
	for len(due) > 0 {
		b := due[:min(len(due), insertBatch)]
		due = due[len(b):]
		params := make([]river.InsertManyParams, len(b))
		for i, d := range b {
			args := d.Args
			args.Due = d.At.UnixMilli()
			params[i] = river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{ScheduledAt: d.At}}
		}
		k, err := s.insertMany(ctx, params)
		if err != nil {
			return err
		}
		if n != nil {
			*n += k
		}
	}
	return nil
}

// behind reports the checks skipped because they started a period or more
// after they were due: a counter for each, and a log line at most once a
// minute (of the monitor's clock) saying how many.
type behind struct {
	log     *slog.Logger
	skipped func(op string)
	mu      sync.Mutex
	last    time.Time
	n       int
}

func (b *behind) skip(now time.Time, op string, late, every time.Duration) {
	if b.skipped != nil {
		b.skipped(op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	if !b.last.IsZero() && now.Sub(b.last) < time.Minute {
		return
	}
	b.log.Warn("monitor behind: checks a period late are skipped, not run (add workers or instances, or lengthen every)",
		"skipped", b.n, "late_s", int64(late/time.Second), "every_s", int64(every/time.Second), "op", op)
	b.last, b.n = now, 0
}

// catchUpMinRate is the least rate of a start's catch-up, in checks a
// second: a small configuration is caught up at once, a directory at its
// own steady rate.
const catchUpMinRate = 10.0

// CatchUp lists, for a start at now, the checks of the current period
// whose due time has passed (a fresh store, or a stop that spanned it): in
// the order they were due, the k-th at now + k / rate, where rate is the
// configuration's steady rate of checks (at least catchUpMinRate a second),
// so a start adds at most the steady rate again, never a burst. A check
// that would come only at or after its next period's due time is left out:
// that period's own check comes first. Checks of the period that already
// exist (run, or inserted by another instance) are not inserted again
// (unique by endpoint, op and slot).
//
// An (endpoint, op) never observed (unobserved says so; nil: none) also
// has its check of the current period when its due time is still ahead:
// in the same order, at now + k / rate or its due time, whichever comes
// first. So a new endpoint is checked at once, while a directory's new
// endpoints still run at their own offsets, never later.
func CatchUp(endpoints []monitor.Endpoint, now time.Time, unobserved func(id, op string) bool) []Due {
	type passed struct {
		Due
		next  time.Time // the next period's due time
		ahead bool      // not due yet (never observed)
	}
	var (
		rate float64
		list []passed
	)
	for _, e := range endpoints {
		if e.Every < time.Second {
			continue
		}
		for _, op := range e.Ops {
			rate += 1 / e.Every.Seconds()
			slot := SlotOf(now, e.Every)
			at := DueAt(slot, e.ID, op, e.Every)
			ahead := !at.Before(now)
			if !ahead || unobserved != nil && unobserved(e.ID, op) {
				list = append(list, passed{Due{CheckArgs{Endpoint: e.ID, Op: op, Slot: slot}, at}, at.Add(e.Every), ahead})
			}
		}
	}
	slices.SortStableFunc(list, func(a, b passed) int { return a.At.Compare(b.At) })
	rate = max(rate, catchUpMinRate)
	var out []Due
	for k, p := range list {
		at := now.Add(time.Duration(float64(k) / rate * float64(time.Second)))
		if p.ahead && p.At.Before(at) {
			at = p.At
		}
		if at.Before(p.next) {
			out = append(out, Due{Args: p.Args, At: at})
		}
	}
	return out
}

// unobserved returns which of endpoints' (endpoint, op) pairs have no
// observation, read from the summary a thousand endpoints at a time.
func (s *Scheduler) unobserved(ctx context.Context, endpoints []monitor.Endpoint) (func(id, op string) bool, error) {
	if s.m.History == nil {
		return nil, nil
	}
	seen := map[string]map[string]bool{}
	for len(endpoints) > 0 {
		b := endpoints[:min(len(endpoints), insertBatch)]
		endpoints = endpoints[len(b):]
		latest, err := s.m.LatestOf(ctx, b)
		if err != nil {
			return nil, err
		}
		for id, ops := range latest {
			for op := range ops {
				if seen[id] == nil {
					seen[id] = map[string]bool{}
				}
				seen[id][op] = true
			}
		}
	}
	return func(id, op string) bool { return !seen[id][op] }, nil
}

// catchUpOf inserts CatchUp's checks of endpoints at now.
func (s *Scheduler) catchUpOf(ctx context.Context, endpoints []monitor.Endpoint) error {
	unobserved, err := s.unobserved(ctx, endpoints)
	if err != nil {
		return err
	}
	return s.insertDue(ctx, CatchUp(endpoints, s.m.NowTime(), unobserved), nil)
}

// catchUp inserts CatchUp's checks of the whole set (Start, unless
// NoPeriodic).
func (s *Scheduler) catchUp(ctx context.Context) error {
	endpoints, err := s.endpoints(ctx)
	if err != nil {
		return err
	}
	return s.catchUpOf(ctx, endpoints)
}
