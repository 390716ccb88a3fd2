package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/format"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/scan"
	"github.com/exchangerebel/payability/internal/target"
)

// ExitInterrupted is scan's exit status when it was interrupted before every
// entry had a record (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// progressEvery is how often the progress bar is redrawn.
const progressEvery = 200 * time.Millisecond

func init() {
	register(command{"scan", "run check, memo, probe or lint over many URLs at once (JSON Lines out)", runScan})
}

func runScan(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "scan", "scan --op check|memo|probe|lint [--origin] [--concurrency 64] [--per-host 4] [--host-conns 6] [--allow-private] [--quiet] [--full] [--out FILE] [--json] [--format FORMAT[=FILE]]... [--fail-on LEVEL] [--config FILE] [--write-baseline FILE] [URLS.txt | -]",
		`Input (a file, or stdin when none or -): one URL per line (blank and # lines ignored), a JSON
array of URLs, or an x402 Bazaar discovery document (resources[].resource). Output: JSON Lines,
one record per entry in completion order, after a header record that carries the texts every
report shares (--full: no header, every field on every record); a summary on stderr
(docs/performance.md). The other formats (docs/ci.md) are written once the scan has finished,
one entry each, in input order.
exit status: 0 every entry has a record (refusals included); 1 unreadable or malformed input,
or a failed write; 2 bad usage; 3 the overall reached --fail-on; 130 interrupted.`)
	op := fs.String("op", "", "the op to run on every URL (required): `OP` is check, memo, probe or lint (lint sends one GET)")
	concurrency := fs.Int("concurrency", scan.DefaultConcurrency, "at most `N` ops in flight overall")
	perHost := fs.Int("per-host", scan.DefaultPerHost, "at most `N` ops in flight to one host (hostname:port)")
	hostConns := fs.Int("host-conns", target.DefaultHostConns, "at most `N` simultaneous connections to one host (hostname, any port), retries and dials ahead included")
	allowPrivate := fs.Bool("allow-private", false, "allow loopback and private target addresses (a seller's staging)")
	quiet := fs.Bool("quiet", false, "no progress bar (it is drawn only when stderr is a terminal)")
	outPath := fs.String("out", "", "write stdout's output (the JSON Lines unless --format says otherwise) to `FILE`")
	outFlags := addOutputFlags(fs, format.FailOnNever)
	originMode := fs.Bool("origin", false, "with --op lint: every entry is an origin (scheme://host[:port]), linted as lint --origin does: its discovery documents and every resource they list")
	full := fs.Bool("full", false, "repeat every report field on every JSON Lines record (default: a header record first carries the texts every report shares)")
	sup := addSuppressFlags(fs)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if err := outFlags.check("json"); err != nil {
		return usageError(e, fs, "%v", err)
	}
	if *outPath != "" && *outPath != "-" && outFlags.hasPath(*outPath) {
		return usageError(e, fs, "--out and a --format name the same file")
	}
	switch {
	case !oneOf(*op, scan.Ops):
		fmt.Fprintf(e.Stderr, "payability scan: --op must be one of %s\n", quoteList(scan.Ops))
		return exitUsage
	case *originMode && *op != ops.OpLint:
		return usageError(e, fs, "--origin needs --op lint")
	case *concurrency < 1 || *perHost < 1 || *hostConns < 1:
		fmt.Fprintln(e.Stderr, "payability scan: --concurrency, --per-host and --host-conns must be at least 1")
		return exitUsage
	case len(pos) > 1:
		return usageError(e, fs, "give at most one input (a file, or - for stdin)")
	}
	if err := sup.load(e); err != nil {
		return usageError(e, fs, "%v", err)
	}

	// Input: a file (its entries are counted on a second handle, so the
	// progress bar knows the total) or stdin.
	var in io.Reader = e.Stdin
	inPath := ""
	if len(pos) == 1 && pos[0] != "-" {
		inPath = pos[0]
		outFlags.artifact = inPath // SARIF locates every result in the input file
		f, err := os.Open(inPath)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability: cannot open the input: %v\n", errors.Unwrap(err))
			return ExitInternal
		}
		defer f.Close()
		in = f
	}
	if in == nil {
		in = eofReader{}
	}

	var out io.Writer = e.Stdout
	var outFile *os.File
	if *outPath != "" && *outPath != "-" {
		f, err := os.Create(*outPath)
		if err != nil {
			fmt.Fprintf(e.Stderr, "payability: cannot create the output: %v\n", errors.Unwrap(err))
			return ExitInternal
		}
		outFile = f
		out = f
	}
	sink, err := outFlags.scanSink(*op, out)
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: %v\n", err)
		return ExitInternal
	}
	sink.sup = sup

	if e.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(scan.GCPercent))
	}

	fetcher := e.fetcherLimited(*allowPrivate, *hostConns)
	var guarded *guardWatch
	if !*allowPrivate {
		guarded = newGuardWatch(fetcher)
		fetcher = guarded
	}
	sc := scan.New(scan.Options{
		Op:          *op,
		Origin:      *originMode,
		Runner:      ops.Runner{Fetcher: fetcher, Now: e.now()},
		Concurrency: *concurrency,
		PerHost:     *perHost,
		Out:         sink.jsonOut,
		Observe:     sink.observer(),
		Full:        *full,
	})

	// stderr is shared by the progress bar, the interruption notice and the
	// summary.
	var errMu sync.Mutex
	bar := !*quiet && e.isTerminal(e.Stderr)
	var stopBar func()
	if bar {
		if inPath != "" {
			countCtx, stopCount := context.WithCancel(ctx)
			counted := make(chan struct{})
			go func() {
				defer close(counted)
				countInput(countCtx, inPath, sc)
			}()
			defer func() { stopCount(); <-counted }()
		}
		stopBar = drawProgress(sc, e.Stderr, &errMu)
	}
	noticed := make(chan struct{})
	stopNotice := context.AfterFunc(ctx, func() {
		defer close(noticed)
		errMu.Lock()
		defer errMu.Unlock()
		if bar {
			fmt.Fprint(e.Stderr, "\r\x1b[K")
		}
		fmt.Fprintf(e.Stderr, "payability: interrupted: no new URLs; in-flight ones get %s to finish\n", scan.DefaultGrace)
	})

	sum, runErr := sc.Run(ctx, scan.NewInput(in))
	if !stopNotice() {
		<-noticed
	}
	if stopBar != nil {
		stopBar()
	}
	code := ExitOK
	fmtOverall, fmtErr := sink.finish()
	if fmtErr != nil && runErr == nil {
		runErr = fmtErr
	}
	if outFile != nil {
		if err := outFile.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}

	errMu.Lock()
	defer errMu.Unlock()
	if err := sum.WriteText(e.Stderr); err != nil {
		code = ExitInternal
	}
	sup.warn(e)
	if guarded.seen() {
		fmt.Fprintln(e.Stderr, "payability: note: some URLs name a loopback or private address and could not be fetched: the address guard refuses them; use --allow-private to scan a staging endpoint")
	}
	var ie *scan.InputError
	switch {
	case errors.As(runErr, &ie):
		fmt.Fprintf(e.Stderr, "payability: %v; the entries before it were scanned\n", ie)
		code = ExitInternal
	case runErr != nil:
		fmt.Fprintf(e.Stderr, "payability: scan stopped: %v\n", runErr)
		code = ExitInternal
	case sum.Interrupted:
		code = ExitInterrupted
	case code == ExitOK && outFlags.tripped(e, fmtOverall):
		code = ExitUnexpected
	}
	return code
}

// countInput counts the entries of the input file for the progress bar's
// total. It reads a second handle, so the scan itself still streams.
func countInput(ctx context.Context, path string, sc *scan.Scanner) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return // a pipe or a device cannot be read twice
	}
	n, err := scan.Count(readerCtx{ctx, f})
	if err == nil {
		sc.SetTotal(n)
	}
}

// readerCtx stops a read loop once ctx is done.
type readerCtx struct {
	ctx context.Context
	r   io.Reader
}

func (r readerCtx) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// drawProgress redraws the progress line on w until the returned function is
// called, which erases it.
func drawProgress(sc *scan.Scanner, w io.Writer, mu *sync.Mutex) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				mu.Lock()
				fmt.Fprint(w, "\r\x1b[K")
				mu.Unlock()
				return
			case <-t.C:
				line := sc.Progress().Line(terminalWidth(w) - 1)
				mu.Lock()
				fmt.Fprint(w, "\r\x1b[K"+line)
				mu.Unlock()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// isTerminal reports whether w is a terminal (no NO_COLOR concern here: the
// progress bar is not colour).
func (e Env) isTerminal(w io.Writer) bool {
	if e.IsTerminal != nil {
		return e.IsTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 20 {
			return width
		}
	}
	return 100
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// guardWatch notes whether a URL that names a loopback or private address
// literally (or localhost) could not be fetched: without --allow-private the
// address guard refused it, and the summary says how to reach it.
type guardWatch struct {
	ops.Fetcher
	refused *atomic.Bool
}

func newGuardWatch(f ops.Fetcher) *guardWatch {
	return &guardWatch{Fetcher: f, refused: new(atomic.Bool)}
}

// Scope watches the scan run's connection scope the same way, when the
// fetcher opens scopes.
func (g *guardWatch) Scope(idlePerHost int) target.Scope {
	s, ok := ops.OpenScope(g.Fetcher, idlePerHost)
	if !ok {
		return guardScope{g, func() {}}
	}
	return guardScope{&guardWatch{Fetcher: s, refused: g.refused}, s.Close}
}

// guardScope is a watched connection scope.
type guardScope struct {
	*guardWatch
	close func()
}

func (s guardScope) Close() { s.close() }

func (g *guardWatch) Get(ctx context.Context, url string) capture.Capture {
	c := g.Fetcher.Get(ctx, url)
	g.note(url, c)
	return c
}

// Do forwards to a fetcher that can send any request (ops.Requester); one
// that cannot sends nothing (a request it will not send).
func (g *guardWatch) Do(ctx context.Context, r target.Request) capture.Capture {
	req, ok := g.Fetcher.(ops.Requester)
	if !ok {
		return capture.Capture{Outcome: capture.Failed, Error: capture.ProtocolError}
	}
	c := req.Do(ctx, r)
	g.note(r.URL, c)
	return c
}

func (g *guardWatch) RunProbes(ctx context.Context, url string) []capture.Capture {
	cs := g.Fetcher.RunProbes(ctx, url)
	if len(cs) > 0 {
		g.note(url, cs[0])
	}
	return cs
}

func (g *guardWatch) note(url string, c capture.Capture) {
	if c.Outcome == capture.Failed && !g.refused.Load() && nonPublicLiteral(url) {
		g.refused.Store(true)
	}
}

func (g *guardWatch) seen() bool { return g != nil && g.refused.Load() }
