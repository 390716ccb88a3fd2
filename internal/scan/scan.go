// Package scan runs one op (check, memo, probe or lint) over many URLs at once:
// input streamed entry by entry, a bounded number of ops in flight overall
// and per host, one JSON Lines record per entry in completion order, and a
// summary at the end. It composes ops.Runner and adds no grading of its own.
//
// Memory stays flat in the number of URLs: the input is read one entry at a
// time, at most a fixed window of entries waits for a free slot, and each
// report is encoded and dropped as soon as its op returns (ops has already
// dropped the captures by then).
package scan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// Defaults of Options.
const (
	DefaultConcurrency = 64
	DefaultPerHost     = 4
	DefaultGrace       = 3 * time.Second
)

// GCPercent is the garbage collector setting a scanning process runs with
// (the scan command sets it unless GOGC is given). A scan's live heap is a
// few megabytes and flat, so at the default of 100 the collector runs many
// times a second and its stack scans and write barriers cost a quarter of
// the scanner's CPU; at 400 the heap may grow to about five times the live
// heap, still a few tens of megabytes.
const GCPercent = 400

// Options configure a scan.
type Options struct {
	Op     string     // ops.OpCheck, ops.OpMemo, ops.OpProbe or ops.OpLint (a GET)
	Runner ops.Runner // runs one op on one URL; its Fetcher is shared by every op in flight

	// Concurrency bounds the ops in flight overall, PerHost the ops in flight
	// to one host (hostname:port, the scheme's default port when none is
	// given). An op is one unit: memo's two GETs and probe's seven requests
	// run one after another inside it.
	Concurrency int
	PerHost     int

	// Grace is how long in-flight ops may go on once the context is
	// cancelled; after it they are cancelled and recorded as such. Zero means
	// DefaultGrace; a negative value cancels them at once.
	Grace time.Duration

	// Out receives the JSON Lines records. It is written from one goroutine.
	Out io.Writer

	// Observe, when set, is called with every record, from the goroutine
	// that writes Out, right after its line was written (other renderings,
	// such as the CI formats, collect the records this way).
	Observe func(Record)
}

// Record is one line of the output: the entry's input line and URL, and one
// of a report, a refusal or an error.
type Record struct {
	Line    int        `json:"line"`
	URL     string     `json:"url"`
	Report  ops.Report `json:"report,omitempty"`
	Refused *Refusal   `json:"refused,omitempty"`
	Error   *Problem   `json:"error,omitempty"`
}

// Refusal says which rule refused an entry: a URL-policy rule (target.Rules)
// or an input rule (RuleNotAString).
type Refusal struct {
	Rule string `json:"rule"`
}

// Problem is an entry that produced no verdict through no fault of its URL.
type Problem struct {
	Code string `json:"code"`
}

// Problem codes.
const (
	// CodeCancelled: the scan was interrupted while this op was in flight;
	// whatever the op saw is not graded, because a cancelled fetch would
	// otherwise read as a broken target.
	CodeCancelled = "cancelled"
	// CodeInternal: the op failed for a reason of our own.
	CodeInternal = "internal"
)

// Scanner runs one scan (Run is called once). Its Progress may be read from
// another goroutine while Run is going.
type Scanner struct {
	opts   Options
	tally  tally
	window int // entries that may wait for a slot; tests make it small
	// peakWaiting is the most entries that ever waited at once (for tests:
	// memory is bounded by it, not by the input's length).
	peakWaiting int
}

// New returns a Scanner for opts, with defaults filled in.
func New(opts Options) *Scanner {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.PerHost <= 0 {
		opts.PerHost = DefaultPerHost
	}
	if opts.Grace == 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	s := &Scanner{opts: opts, window: max(8192, 4*opts.Concurrency)}
	s.tally.init(opts.Op)
	return s
}

// SetTotal tells the progress how many entries the input holds, when known.
func (s *Scanner) SetTotal(n int) { s.tally.setTotal(n) }

// Progress is a snapshot of the scan so far.
func (s *Scanner) Progress() Progress { return s.tally.snapshot() }

// result is one record, encoded by the goroutine that produced it.
type result struct {
	line []byte
	key  tallyKey
	rec  *Record // only when Options.Observe is set
}

// ErrUnknownOp is returned by Run when Options.Op is not an op.
var ErrUnknownOp = ops.ErrUnknownOp

// Run reads entries from in and runs the op on each, writing one record per
// entry to Options.Out in completion order. It returns when every entry has a
// record, or when ctx is cancelled and the ops in flight have finished (or
// been cancelled after the grace period). The Summary counts what was done
// in either case. The error is a malformed or unreadable input (the entries
// before it are still run), or a failed write to Out.
func (s *Scanner) Run(ctx context.Context, in *Input) (Summary, error) {
	if s.opts.Op != ops.OpCheck && s.opts.Op != ops.OpMemo && s.opts.Op != ops.OpProbe && s.opts.Op != ops.OpLint {
		return Summary{}, ErrUnknownOp
	}
	s.tally.start()

	// Ops run under their own context, detached from ctx: on interruption
	// they get the grace period before being cancelled.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var graceMu sync.Mutex
	var graceTimer *time.Timer
	stopAfter := context.AfterFunc(ctx, func() {
		if s.opts.Grace < 0 {
			cancelWork()
			return
		}
		graceMu.Lock()
		graceTimer = time.AfterFunc(s.opts.Grace, cancelWork)
		graceMu.Unlock()
	})
	defer func() {
		stopAfter()
		graceMu.Lock()
		if graceTimer != nil {
			graceTimer.Stop()
		}
		graceMu.Unlock()
	}()

	// feedCtx stops the reader and the dispatcher: on interruption, or when
	// the output can no longer be written.
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()

	items := make(chan Item, 64)
	readErr := make(chan error, 1)
	go func() {
		defer close(items)
		for {
			it, err := in.Next()
			if err != nil {
				if err != io.EOF {
					readErr <- err
				}
				return
			}
			select {
			case items <- it:
			case <-feedCtx.Done():
				return
			}
		}
	}()

	results := make(chan result, s.opts.Concurrency)
	writeErr := make(chan error, 1)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.write(results, writeErr, func() { stopFeed(); cancelWork() })
	}()

	d := dispatcher{
		s:        s,
		workCtx:  workCtx,
		results:  results,
		jobs:     make(chan job, s.opts.Concurrency),
		done:     make(chan string, s.opts.Concurrency),
		hosts:    make(map[string]*hostQueue),
		lookhead: s.window,
	}
	d.loop(feedCtx, items)
	s.peakWaiting = d.peakWaiting
	close(d.jobs)
	d.workers.Wait()
	close(results)
	<-writerDone

	var err error
	select {
	case err = <-writeErr:
	default:
		select {
		case err = <-readErr:
		default:
		}
	}
	sum := s.tally.summary()
	sum.Interrupted = ctx.Err() != nil
	sum.NotStarted = d.dropped
	return sum, err
}

// write is the only goroutine that touches Out. On a write error it keeps
// draining results (so no op blocks) and stops the scan.
func (s *Scanner) write(results <-chan result, writeErr chan<- error, stop func()) {
	bw := bufio.NewWriterSize(s.opts.Out, 64<<10)
	failed := false
	fail := func(err error) {
		if !failed {
			failed = true
			writeErr <- err
			stop()
		}
	}
	for r := range results {
		if !failed {
			if _, err := bw.Write(r.line); err != nil {
				fail(err)
			} else if len(results) == 0 {
				// Nothing else is ready: let a reader downstream see it now.
				if err := bw.Flush(); err != nil {
					fail(err)
				}
			}
		}
		s.tally.add(r.key)
		if r.rec != nil {
			s.opts.Observe(*r.rec)
		}
	}
	if !failed {
		if err := bw.Flush(); err != nil {
			fail(err)
		}
	}
}

// hostQueue is one host's ops in flight and entries waiting for a slot.
type hostQueue struct {
	running  int
	waiting  []Item
	eligible bool // in dispatcher.eligible
}

// dispatcher owns the scheduling state; only its loop touches it.
type dispatcher struct {
	s        *Scanner
	workCtx  context.Context
	results  chan<- result
	jobs     chan job       // to the workers; never more than Concurrency outstanding
	done     chan string    // a finished op's host key
	workers  sync.WaitGroup // started lazily, at most Concurrency
	nWorkers int
	hosts    map[string]*hostQueue
	eligible []string // hosts with waiting entries and a free per-host slot, in turn order
	running  int
	waiting  int
	lookhead int  // at most this many entries wait for a slot; then reading pauses
	stopped  bool // interrupted: no op starts any more
	dropped  int  // entries read but never started (interrupted)

	peakWaiting int
}

func (d *dispatcher) loop(feedCtx context.Context, items <-chan Item) {
	inputOpen := true
	for {
		if d.running == 0 && (d.stopped || !inputOpen && d.waiting == 0) {
			d.dropped += d.waiting
			return
		}
		var next <-chan Item
		if inputOpen && !d.stopped && d.waiting < d.lookhead {
			next = items
		}
		var stop <-chan struct{}
		if !d.stopped {
			stop = feedCtx.Done()
		}
		select {
		case it, ok := <-next:
			if !ok {
				inputOpen = false
				continue
			}
			if d.stopped = feedCtx.Err() != nil; d.stopped {
				d.dropped++ // select picked this over the stop: still no new work
				continue
			}
			d.admit(it)
		case h := <-d.done:
			// Several cases may be ready at once; a stop must win over
			// starting the next entry.
			d.stopped = d.stopped || feedCtx.Err() != nil
			d.finished(h)
		case <-stop:
			d.stopped = true
		}
	}
}

// admit takes one entry: a refusal is recorded at once (it costs nothing and
// takes no slot); a URL starts now or waits for a slot.
func (d *dispatcher) admit(it Item) {
	if it.Rule == "" {
		if err := target.CheckURL(it.URL); err != nil {
			var pe *target.PolicyError
			if errors.As(err, &pe) {
				it.Rule = pe.Rule
			} else {
				it.Rule = target.RuleUnparseable
			}
		}
	}
	if it.Rule != "" {
		rec := Record{Line: it.Line, URL: it.URL, Refused: &Refusal{Rule: it.Rule}}
		res := result{line: encode(rec), key: tallyKey{refused: it.Rule}}
		if d.s.opts.Observe != nil {
			res.rec = &rec
		}
		d.results <- res
		return
	}
	h := HostKey(it.URL)
	q := d.hosts[h]
	if q == nil {
		q = &hostQueue{}
		d.hosts[h] = q
	}
	if d.running < d.s.opts.Concurrency && q.running < d.s.opts.PerHost && len(q.waiting) == 0 {
		d.start(h, q, it)
		return
	}
	q.waiting = append(q.waiting, it)
	d.waiting++
	d.peakWaiting = max(d.peakWaiting, d.waiting)
	d.markEligible(h, q)
}

func (d *dispatcher) markEligible(h string, q *hostQueue) {
	if !q.eligible && len(q.waiting) > 0 && q.running < d.s.opts.PerHost {
		q.eligible = true
		d.eligible = append(d.eligible, h)
	}
}

// finished frees the slots of one op and hands them to waiting entries.
func (d *dispatcher) finished(h string) {
	d.running--
	q := d.hosts[h]
	q.running--
	d.markEligible(h, q)
	for !d.stopped && d.running < d.s.opts.Concurrency && len(d.eligible) > 0 {
		eh := d.eligible[0]
		d.eligible = d.eligible[1:]
		eq := d.hosts[eh]
		eq.eligible = false
		if len(eq.waiting) == 0 || eq.running >= d.s.opts.PerHost {
			continue
		}
		it := eq.waiting[0]
		eq.waiting[0] = Item{}
		eq.waiting = eq.waiting[1:]
		d.waiting--
		d.start(eh, eq, it)
		d.markEligible(eh, eq) // back of the line: hosts take turns
	}
	if q.running == 0 && len(q.waiting) == 0 {
		delete(d.hosts, h)
	}
}

// job is one op to run: an entry and its host key.
type job struct {
	it   Item
	host string
}

// start hands one op to a worker; at most Concurrency run at once. Workers
// live for the whole scan: a fresh goroutine per op would grow its stack
// anew for every op (decoding and HTTP run deep).
func (d *dispatcher) start(h string, q *hostQueue, it Item) {
	d.running++
	q.running++
	if d.nWorkers < d.running {
		d.nWorkers++
		d.workers.Add(1)
		go d.work()
	}
	d.jobs <- job{it: it, host: h} // never blocks: cap(jobs) == Concurrency >= running
}

func (d *dispatcher) work() {
	defer d.workers.Done()
	for j := range d.jobs {
		d.results <- d.run(j.it)
		d.done <- j.host
	}
}

// run runs the op on one entry and encodes its record; the report is
// dropped once encoded (ops has dropped the captures already).
func (d *dispatcher) run(it Item) result {
	rep, err := d.s.opts.Runner.Run(d.workCtx, d.s.opts.Op, it.URL)
	rec := Record{Line: it.Line, URL: it.URL}
	var key tallyKey
	var pe *target.PolicyError
	switch {
	case d.workCtx.Err() != nil:
		rec.Error = &Problem{Code: CodeCancelled}
		key.problem = CodeCancelled
	case errors.As(err, &pe):
		rec.Refused = &Refusal{Rule: pe.Rule}
		key.refused = pe.Rule
	case err != nil:
		rec.Error = &Problem{Code: CodeInternal}
		key.problem = CodeInternal
	default:
		rec.Report = rep
		key = keyOf(rep)
	}
	res := result{line: encode(rec), key: key}
	if d.s.opts.Observe != nil {
		res.rec = &rec
	}
	return res
}

// keyOf is what the summary counts of a report.
func keyOf(rep ops.Report) tallyKey {
	k := tallyKey{outcome: rep.Outcome()}
	if p, ok := rep.(ops.ProbeReport); ok {
		k.direct = p.Grades.Direct.Grade
		k.facilitator = p.Grades.Facilitator.Grade
	}
	return k
}

// encode renders one record as a JSON line. URLs keep their '&', '<' and
// '>' as written.
func encode(r Record) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		// Reports are plain structs; this cannot happen. Keep the line well formed.
		b.Reset()
		_ = enc.Encode(Record{Line: r.Line, URL: r.URL, Error: &Problem{Code: CodeInternal}})
	}
	return b.Bytes()
}

// HostKey is the per-host limit's key of a URL that passed the URL policy:
// the lower-cased host name (without a trailing dot) and the port, the
// scheme's default when the URL names none.
func HostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}
