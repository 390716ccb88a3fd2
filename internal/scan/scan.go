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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/jsonenc"
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

// RuleNotAnOrigin refuses an entry of an origin scan that is not
// scheme://host[:port] (it has a path, a query or a fragment).
const RuleNotAnOrigin = "not_an_origin"

// Options configure a scan.
type Options struct {
	Op string // one of Ops: ops.OpCheck, ops.OpMemo, ops.OpProbe or ops.OpLint (a GET)
	// Origin: every entry is an origin, linted as lint --origin does
	// (ops.Runner.LintOrigin; Op must be ops.OpLint).
	Origin bool
	// Runner runs one op on one URL. When its Fetcher opens connection
	// scopes (ops.Scoper, a *target.Client) the run opens one, shared by
	// every op of the run and closed when Run returns; otherwise the Fetcher
	// itself is shared by every op in flight.
	Runner ops.Runner

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

	// Full repeats every report field on every record. Without it the
	// first line is a Header record holding the texts that are the same in
	// every report of the run (the disclosure sentence, honesty line,
	// retention and, for probe, the no-funds property), and the records
	// leave them out.
	Full bool

	// Observe, when set, is called with every record, from the goroutine
	// that writes Out, right after its line was written (other renderings,
	// such as the CI formats, collect the records this way).
	Observe func(Record)
}

// Ops lists the ops a scan runs, in the order usage names them. A new op
// joins here and in ops.Runner.Run.
var Ops = []string{ops.OpCheck, ops.OpMemo, ops.OpProbe, ops.OpLint}

// Header is the first record of a scan's output without Options.Full:
// {"header":{...}}. It names the op and, for the ops whose reports carry the
// criteria's envelope (check, memo, probe), the criteria, says which report
// fields the records leave out, and carries them once. For an op whose
// reports carry no such texts (lint) it names the op and omits nothing.
type Header struct {
	Op                 string      `json:"op"`
	Service            string      `json:"service,omitempty"`
	Version            string      `json:"version,omitempty"`
	CriteriaID         string      `json:"criteria_id,omitempty"`
	CriteriaRevision   string      `json:"criteria_revision,omitempty"`
	Corpus             *corpus.Ref `json:"corpus,omitempty"`
	Omitted            []string    `json:"omitted"` // report fields the records leave out, carried here
	DisclosureSentence string      `json:"disclosure_sentence,omitempty"`
	HonestyLine        string      `json:"honesty_line,omitempty"`
	Retention          string      `json:"retention,omitempty"`
	NoFundsProperty    string      `json:"no_funds_property,omitempty"`
}

// NewHeader is the header of a scan running op.
func NewHeader(op string) Header {
	if op != ops.OpCheck && op != ops.OpMemo && op != ops.OpProbe {
		return Header{Op: op, Omitted: []string{}}
	}
	env := ops.NewEnvelope(op, "", time.Time{}, "")
	h := Header{
		Op: op, Service: env.Service, Version: env.Version, CriteriaID: env.CriteriaID,
		CriteriaRevision: env.CriteriaRevision, Corpus: &env.Corpus,
		Omitted:            []string{"disclosure_sentence", "honesty_line", "retention"},
		DisclosureSentence: env.DisclosureSentence, HonestyLine: env.HonestyLine, Retention: env.Retention,
	}
	if op == ops.OpProbe {
		h.NoFundsProperty = criteria.RailProbe().NoFundsProperty
		h.Omitted = append(h.Omitted, "no_funds_property")
	}
	return h
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
	// cuts are the encoded report fields the header carries, cut from every
	// record unless Options.Full (see omitHeaderTexts).
	cuts [][]byte
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
	if !opts.Full {
		s.cuts = headerCuts(NewHeader(opts.Op))
	}
	return s
}

// SetTotal tells the progress how many entries the input holds, when known.
func (s *Scanner) SetTotal(n int) { s.tally.setTotal(n) }

// Progress is a snapshot of the scan so far.
func (s *Scanner) Progress() Progress { return s.tally.snapshot() }

// result is one record, encoded by the goroutine that produced it.
type result struct {
	line *lineBuf // back to linePool once written
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
	if !slices.Contains(Ops, s.opts.Op) || (s.opts.Origin && s.opts.Op != ops.OpLint) {
		return Summary{}, ErrUnknownOp
	}
	s.tally.start()

	// One connection scope for the whole run, shared by its ops: at most
	// PerHost idle connections per host, all closed when the run ends (after
	// every worker has returned).
	runner, closeScope := s.opts.Runner.Scoped(s.opts.PerHost)
	defer closeScope()

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
	var header []byte
	if !s.opts.Full {
		header = encodeLine(struct {
			Header Header `json:"header"`
		}{NewHeader(s.opts.Op)})
	}
	go func() {
		defer close(writerDone)
		s.write(header, results, writeErr, func() { stopFeed(); cancelWork() })
	}()

	d := dispatcher{
		s:        s,
		runner:   runner,
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
func (s *Scanner) write(header []byte, results <-chan result, writeErr chan<- error, stop func()) {
	bw := bufio.NewWriterSize(s.opts.Out, 64<<10)
	failed := false
	fail := func(err error) {
		if !failed {
			failed = true
			writeErr <- err
			stop()
		}
	}
	if header != nil {
		if _, err := bw.Write(header); err != nil {
			fail(err)
		}
	}
	for r := range results {
		if !failed {
			if _, err := bw.Write(r.line.Bytes()); err != nil {
				fail(err)
			} else if len(results) == 0 {
				// Nothing else is ready: let a reader downstream see it now.
				if err := bw.Flush(); err != nil {
					fail(err)
				}
			}
		}
		r.line.release()
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
	runner   ops.Runner // the run's, on its connection scope
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
			if d.stopped = d.halted(feedCtx); d.stopped {
				d.dropped++ // select picked this over the stop: still no new work
				continue
			}
			d.admit(it)
		case h := <-d.done:
			// Several cases may be ready at once; a stop must win over
			// starting the next entry.
			d.stopped = d.stopped || d.halted(feedCtx)
			d.finished(h)
		case <-stop:
			d.stopped = true
		}
	}
}

// halted reports a stop: the feed's, or the ops' own context, which the
// interruption may cancel (no grace) before the feed's context says so: the
// parent cancels its children in no set order, and an op that ended
// cancelled must not free a slot for a new one.
func (d *dispatcher) halted(feedCtx context.Context) bool {
	return feedCtx.Err() != nil || d.workCtx.Err() != nil
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
		rec := Record{Line: it.Line, URL: RedactURL(it.URL), Refused: &Refusal{Rule: it.Rule}}
		res := result{line: d.s.encode(rec), key: tallyKey{refused: it.Rule}}
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
	var rep ops.Report
	var err error
	if d.s.opts.Origin {
		rep, err = d.runner.LintOrigin(d.workCtx, it.URL, "")
	} else {
		rep, err = d.runner.Run(d.workCtx, d.s.opts.Op, it.URL)
	}
	rec := Record{Line: it.Line, URL: RedactURL(it.URL)} // never a credential, in the line or to Observe
	var key tallyKey
	var pe *target.PolicyError
	switch {
	case d.workCtx.Err() != nil:
		rec.Error = &Problem{Code: CodeCancelled}
		key.problem = CodeCancelled
	case errors.As(err, &pe):
		rec.Refused = &Refusal{Rule: pe.Rule}
		key.refused = pe.Rule
	case errors.Is(err, ops.ErrNotAnOrigin):
		rec.Refused = &Refusal{Rule: RuleNotAnOrigin}
		key.refused = RuleNotAnOrigin
	case err != nil:
		rec.Error = &Problem{Code: CodeInternal}
		key.problem = CodeInternal
	default:
		rec.Report = rep
		key = keyOf(rep)
	}
	res := result{line: d.s.encode(rec), key: key}
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
		k.exposures = p.Exposures
	}
	return k
}

// encode renders one record as a JSON line, its URL redacted (RedactURL)
// and, unless Options.Full, without the texts the header carries. The line
// is in a pooled buffer: the writer releases it once written.
func (s *Scanner) encode(r Record) *lineBuf {
	r.URL = RedactURL(r.URL)
	lb := linePool.Get().(*lineBuf)
	lb.Reset()
	if lb.enc == nil {
		lb.enc = json.NewEncoder(&lb.Buffer)
		lb.enc.SetEscapeHTML(false) // URLs keep their '&', '<' and '>' as written
	}
	if !lb.appendRecord(r) {
		// The general path: encoding/json over the whole record. The encoder
		// writes nothing when it fails.
		lb.Reset()
		if err := lb.enc.Encode(r); err != nil {
			// Reports are plain structs; this cannot happen. Keep the line well formed.
			_ = lb.enc.Encode(Record{Line: r.Line, URL: r.URL, Error: &Problem{Code: CodeInternal}})
			return lb
		}
	}
	if r.Report != nil {
		for _, cut := range s.cuts {
			lb.Truncate(len(cutOnce(lb.Bytes(), cut))) // cut in place
		}
	}
	return lb
}

// appendRecord writes r as the encoder would, without reflection: the
// envelope by hand and the report as its own MarshalJSON wrote it. That is
// what encoding/json writes for a Marshaler too, once it has checked and
// compacted the bytes; the reports' MarshalJSON is json.Marshal, whose
// output is already compact, so the check is all this leaves out (and it
// was a fifth of a checked URL's CPU in the scanner). It reports false,
// having written part of a line, for a report that is not a Marshaler or
// whose MarshalJSON fails: the caller then takes the general path.
func (lb *lineBuf) appendRecord(r Record) bool {
	var report []byte
	appender, direct := r.Report.(jsonAppender)
	if r.Report != nil && !direct {
		m, ok := r.Report.(json.Marshaler)
		if !ok {
			return false
		}
		var err error
		if report, err = m.MarshalJSON(); err != nil {
			return false
		}
	}
	lb.WriteString(`{"line":`)
	lb.Write(strconv.AppendInt(lb.AvailableBuffer(), int64(r.Line), 10))
	lb.WriteString(`,"url":`)
	lb.appendString(r.URL)
	switch {
	case direct:
		lb.WriteString(`,"report":`)
		lb.Write(appender.AppendJSON(lb.AvailableBuffer()))
	case report != nil:
		lb.WriteString(`,"report":`)
		lb.Write(report)
	}
	if r.Refused != nil {
		lb.WriteString(`,"refused":{"rule":`)
		lb.appendString(r.Refused.Rule)
		lb.WriteByte('}')
	}
	if r.Error != nil {
		lb.WriteString(`,"error":{"code":`)
		lb.appendString(r.Error.Code)
		lb.WriteByte('}')
	}
	lb.WriteString("}\n")
	return true
}

// jsonAppender is a report that appends its own JSON (what its MarshalJSON
// returns) to a buffer: written straight into the line, no copy.
type jsonAppender interface{ AppendJSON([]byte) []byte }

// appendString writes s as a JSON string exactly as the encoder does
// (SetEscapeHTML(false)).
func (lb *lineBuf) appendString(s string) {
	lb.Write(jsonenc.AppendString(lb.AvailableBuffer(), s, false))
}

// lineBuf is a record's JSON line and the encoder that writes it.
type lineBuf struct {
	bytes.Buffer
	enc *json.Encoder
}

// maxPooledLine: a buffer grown past this by an unusually long record is
// left to the collector rather than kept.
const maxPooledLine = 64 << 10

var linePool = sync.Pool{New: func() any { return new(lineBuf) }}

func (lb *lineBuf) release() {
	if lb.Cap() <= maxPooledLine {
		linePool.Put(lb)
	}
}

// encodeLine renders v as one JSON line; nil if it cannot be encoded. URLs
// keep their '&', '<' and '>' as written.
func encodeLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return b.Bytes()
}

// headerCuts are the bytes a record's report fields that the header carries
// encode to: the envelope's three consecutive fields, and probe's last,
// exactly as encoding/json writes them. They are cut from each record as
// bytes: a quote inside any string value is escaped, so they can only match
// the fields themselves, and a report that does not carry the header's
// texts verbatim keeps its own.
func headerCuts(h Header) [][]byte {
	if h.DisclosureSentence == "" {
		return nil // nothing is carried, nothing is cut
	}
	var texts bytes.Buffer
	texts.WriteString(`,"disclosure_sentence":`)
	texts.Write(jsonString(h.DisclosureSentence))
	texts.WriteString(`,"honesty_line":`)
	texts.Write(jsonString(h.HonestyLine))
	texts.WriteString(`,"retention":`)
	texts.Write(jsonString(h.Retention))
	cuts := [][]byte{texts.Bytes()}
	if h.NoFundsProperty != "" {
		cuts = append(cuts, append([]byte(`,"no_funds_property":`), jsonString(h.NoFundsProperty)...))
	}
	return cuts
}

func jsonString(s string) []byte {
	b := encodeLine(s)
	return b[:len(b)-1] // the encoder's newline
}

func cutOnce(b, sub []byte) []byte {
	i := bytes.Index(b, sub)
	if i < 0 {
		return b
	}
	return append(b[:i], b[i+len(sub):]...)
}

// RedactURL replaces the userinfo of a URL with REDACTED, so a scan never
// echoes credentials: "http://user:pw@host/p" is written
// "http://REDACTED@host/p". It works on the text, so it also covers URLs
// that do not parse or that a rule before url_userinfo refused (a URL over
// the length limit, a scheme other than http or https, a URL that is not
// absolute). The authority starts after a scheme that is followed by a
// slash ("http://", "http:/", "http:\\") and the run of slashes or
// backslashes that follows (so "//user:pw@host" too), or at the start when
// there is no such scheme ("user:pw@host", where "user:" may be a name as
// well as a scheme); it runs to the first '/', '?' or '#', and everything in
// it up to its last '@' is userinfo. A "://" later in the text (a query
// carrying another URL) does not move the start.
func RedactURL(raw string) string {
	start := 0
	if i := strings.IndexByte(raw, ':'); i > 0 && isScheme(raw[:i]) && i+1 < len(raw) && isSlash(raw[i+1]) {
		start = i + 1
	}
	for start < len(raw) && isSlash(raw[start]) {
		start++
	}
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at < 0 {
		return raw
	}
	return raw[:start] + "REDACTED" + raw[start+at:]
}

func isSlash(c byte) bool { return c == '/' || c == '\\' }

// isScheme reports whether s has the form of a URL scheme (RFC 3986 §3.1):
// a letter, then letters, digits, '+', '-' or '.'.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
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
