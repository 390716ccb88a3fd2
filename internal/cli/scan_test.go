package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// scanFetcher is safe for the scan's concurrent use: every GET answers the
// same populated challenge for goldenURL's shape.
type scanFetcher struct{ calls atomic.Int64 }

func (f *scanFetcher) Get(_ context.Context, url string) capture.Capture {
	f.calls.Add(1)
	c := fleetCapture("pv-abcdef123")
	if url != goldenURL {
		c.Status = 200 // any other URL: NOT-A-402
	}
	return c
}

func (f *scanFetcher) Do(ctx context.Context, r target.Request) capture.Capture {
	return f.Get(ctx, r.URL)
}

func (f *scanFetcher) RunProbes(ctx context.Context, url string) []capture.Capture {
	cs := make([]capture.Capture, 7)
	for i := range cs {
		cs[i] = f.Get(ctx, url)
	}
	return cs
}

func runScanCLI(t *testing.T, ctx context.Context, f ops.Fetcher, terminal bool, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{
		Getenv:     func(string) string { return "" },
		Stdin:      strings.NewReader(stdin),
		Stdout:     &out,
		Stderr:     &errb,
		NewFetcher: func(bool) ops.Fetcher { return f },
		Now:        func() time.Time { return fixedEnd },
		IsTerminal: func(io.Writer) bool { return terminal },
	}
	code = e.Run(ctx, append([]string{"scan"}, args...))
	return out.String(), errb.String(), code
}

type scanLine struct {
	Line    int              `json:"line"`
	URL     string           `json:"url"`
	Report  *json.RawMessage `json:"report"`
	Refused *struct {
		Rule string `json:"rule"`
	} `json:"refused"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// scanLines decodes the records of scan's output, after its header record
// (which must come first).
func scanLines(t *testing.T, out string) map[int]scanLine {
	t.Helper()
	got := map[int]scanLine{}
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		if i == 0 {
			if !strings.HasPrefix(l, `{"header":{"op":`) {
				t.Fatalf("the first line is not the header: %q", l)
			}
			continue
		}
		var rec scanLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("not a JSON line record: %q: %v", l, err)
		}
		got[rec.Line] = rec
	}
	return got
}

const scanInput = "# my routes\n" + goldenURL + "\nhttps://seller.example/free\n\nftp://seller.example/x\n"

func TestScanJSONLinesAndSummary(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := &scanFetcher{}
	stdout, stderr, code := runScanCLI(t, context.Background(), f, false, scanInput, "--op", "check", "-")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	recs := scanLines(t, stdout)
	if len(recs) != 3 {
		t.Fatalf("records = %d, want 3:\n%s", len(recs), stdout)
	}
	var rep ops.CheckReport
	if r := recs[2]; r.URL != goldenURL || r.Report == nil || json.Unmarshal(*r.Report, &rep) != nil || rep.State != "POPULATED" {
		t.Errorf("line 2 = %+v (%+v), want a POPULATED report", r, rep)
	}
	if r := recs[3]; r.Report == nil {
		t.Errorf("line 3 = %+v, want a report", r)
	}
	if r := recs[5]; r.Refused == nil || r.Refused.Rule != "url_scheme" || r.Report != nil {
		t.Errorf("line 5 = %+v, want refused url_scheme", r)
	}
	squeezed := strings.Join(strings.Fields(stderr), " ")
	for _, want := range []string{"scan --op check: 3 URLs", "POPULATED 1", "NOT-A-402 1", "refused 1 (url_scheme 1)", "errors 0"} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Errorf("escape codes on a non-terminal stderr:\n%q", stderr)
	}
	if f.calls.Load() != 2 {
		t.Errorf("fetches = %d, want 2 (a refusal is never fetched)", f.calls.Load())
	}
}

// --full: no header, and every record carries every report field.
func TestScanFullRepeatsEveryField(t *testing.T) {
	stdout, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, goldenURL+"\n", "--op", "check", "--full")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1 || strings.HasPrefix(lines[0], `{"header"`) {
		t.Fatalf("lines = %q, want one record and no header", lines)
	}
	for _, k := range []string{`"disclosure_sentence":`, `"honesty_line":`, `"retention":`} {
		if !strings.Contains(lines[0], k) {
			t.Errorf("the --full record lacks %s", k)
		}
	}
}

func TestScanOutFileAndInputFile(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	inPath := filepath.Join(dir, "urls.json")
	if err := os.WriteFile(inPath, []byte("[\n\""+goldenURL+"\",\n7\n]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(dir, "out.jsonl")
	stdout, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, "", inPath, "--op", "probe", "--out", outPath, "--concurrency", "2", "--per-host", "1")
	if code != ExitOK || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	recs := scanLines(t, string(data))
	if r := recs[2]; len(recs) != 2 || r.Report == nil || r.Refused != nil || recs[3].Refused == nil {
		t.Fatalf("records = %+v", recs)
	}
	var rep ops.ProbeReport
	if err := json.Unmarshal(*recs[2].Report, &rep); err != nil || rep.Op != "probe" || len(rep.Probes) != 7 {
		t.Errorf("probe report = %+v, %v", rep, err)
	}
	if !strings.Contains(stderr, "direct ") || !strings.Contains(stderr, "entry_not_a_string 1") {
		t.Errorf("summary:\n%s", stderr)
	}
}

func TestScanUsageAndInputErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		msg   string
	}{
		{"no op", "", []string{}, exitUsage, "--op must be one of"},
		{"unknown op", "", []string{"--op", "dance"}, exitUsage, "--op must be one of"},
		{"zero concurrency", "", []string{"--op", "check", "--concurrency", "0"}, exitUsage, "at least 1"},
		{"zero per-host", "", []string{"--op", "check", "--per-host", "0"}, exitUsage, "at least 1"},
		{"two inputs", "", []string{"--op", "check", "a.txt", "b.txt"}, exitUsage, "usage: payability scan"},
		{"missing input file", "", []string{"--op", "check", filepath.Join(t.TempDir(), "nope.txt")}, ExitInternal, "cannot open the input"},
		{"malformed JSON", "[\"" + goldenURL + "\",\n oops", []string{"--op", "check"}, ExitInternal, "input line 2: the JSON input does not parse; the entries before it were scanned"},
		{"unwritable out", goldenURL, []string{"--op", "check", "--out", filepath.Join(t.TempDir(), "no", "such", "dir")}, ExitInternal, "cannot create the output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.msg) {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant it to say %q", code, tt.code, stderr, tt.msg)
			}
		})
	}
}

func TestScanEmptyInputIsOK(t *testing.T) {
	stdout, stderr, code := runScanCLI(t, context.Background(), &scanFetcher{}, false, "# nothing yet\n", "--op", "memo")
	if code != ExitOK || len(scanLines(t, stdout)) != 0 || !strings.Contains(stderr, "scan --op memo: 0 URLs") || !strings.Contains(stderr, "BOUND") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func TestScanInterruptedStillSummarises(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, stderr, code := runScanCLI(t, ctx, &scanFetcher{}, false, scanInput, "--op", "check")
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	for _, want := range []string{"interrupted: no new URLs", "scan --op check:", "interrupted ("} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestScanProgressOnlyOnATerminal(t *testing.T) {
	defer goleak.VerifyNone(t)
	// The op does not finish before the progress line it waits for has been
	// drawn, so the test never races the redraw interval.
	drawn := &drawnWriter{want: " done", drawn: make(chan struct{})}
	_, code := runScanCLIStderr(t, drawn.waitingFetcher(), drawn, goldenURL+"\n", "--op", "check")
	if stderr := drawn.String(); code != ExitOK || !strings.Contains(stderr, "\r\x1b[K0 done") {
		t.Errorf("exit %d; no progress line on a terminal:\n%q", code, stderr)
	}
	inPath := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(inPath, []byte(goldenURL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	total := &drawnWriter{want: "] 0/1  ", drawn: make(chan struct{})}
	if _, code := runScanCLIStderr(t, total.waitingFetcher(), total, "", "--op", "check", inPath); code != ExitOK {
		t.Errorf("exit %d; no total on the progress line of a file input:\n%q", code, total.String())
	}
	immediate := fetcherFunc(func(ctx context.Context, url string) capture.Capture {
		return capture.Capture{Outcome: capture.OK, Status: http.StatusPaymentRequired, Body: []byte{}}
	})
	_, stderr, _ := runScanCLI(t, context.Background(), immediate, true, goldenURL+"\n", "--op", "check", "--quiet")
	if strings.Contains(stderr, "\x1b[") {
		t.Errorf("progress drawn with --quiet:\n%q", stderr)
	}
}

// drawnWriter is a terminal's stderr that closes drawn once a progress
// line ("\r\x1b[K…") containing want has been written.
type drawnWriter struct {
	want  string
	drawn chan struct{}
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
}

func (d *drawnWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.buf.Write(p)
	if s := string(p); strings.HasPrefix(s, "\r\x1b[K") && strings.Contains(s, d.want) {
		d.once.Do(func() { close(d.drawn) })
	}
	return len(p), nil
}

func (d *drawnWriter) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf.String()
}

// waitingFetcher answers a 402 once the progress line has been drawn.
func (d *drawnWriter) waitingFetcher() ops.Fetcher {
	return fetcherFunc(func(ctx context.Context, url string) capture.Capture {
		select {
		case <-d.drawn:
		case <-time.After(time.Minute): // turns a missing line into a failure only
		}
		return capture.Capture{Outcome: capture.OK, Status: http.StatusPaymentRequired, Body: []byte{}}
	})
}

// runScanCLIStderr is runScanCLI on a terminal with the given stderr.
func runScanCLIStderr(t *testing.T, f ops.Fetcher, stderr io.Writer, stdin string, args ...string) (stdout string, code int) {
	t.Helper()
	var out bytes.Buffer
	e := Env{
		Getenv:     func(string) string { return "" },
		Stdin:      strings.NewReader(stdin),
		Stdout:     &out,
		Stderr:     stderr,
		NewFetcher: func(bool) ops.Fetcher { return f },
		Now:        func() time.Time { return fixedEnd },
		IsTerminal: func(io.Writer) bool { return true },
	}
	code = e.Run(context.Background(), append([]string{"scan"}, args...))
	return out.String(), code
}

type fetcherFunc func(ctx context.Context, url string) capture.Capture

func (f fetcherFunc) Get(ctx context.Context, url string) capture.Capture { return f(ctx, url) }
func (f fetcherFunc) Do(ctx context.Context, r target.Request) capture.Capture {
	return f(ctx, r.URL)
}
func (f fetcherFunc) RunProbes(ctx context.Context, url string) []capture.Capture {
	return []capture.Capture{f(ctx, url)}
}

// TestScanSaysWhenTheGuardRefusedLoopback: without --allow-private a loopback
// URL that could not be fetched earns one note naming the flag, as check's
// does; a public URL that failed, or any URL with the flag, earns none.
func TestScanSaysWhenTheGuardRefusedLoopback(t *testing.T) {
	failed := fetcherFunc(func(context.Context, string) capture.Capture { return capture.Capture{Outcome: capture.Failed} })
	const note = "use --allow-private"
	for _, op := range []string{"check", "memo", "probe"} {
		_, stderr, code := runScanCLI(t, context.Background(), failed, false, "http://127.0.0.1:8080/paid\nhttp://localhost/paid\n", "--op", op)
		if code != ExitOK || strings.Count(stderr, note) != 1 {
			t.Errorf("%s: exit %d, want one note:\n%s", op, code, stderr)
		}
	}
	if _, stderr, _ := runScanCLI(t, context.Background(), failed, false, goldenURL+"\n", "--op", "check"); strings.Contains(stderr, note) {
		t.Errorf("a public URL that failed earned the note:\n%s", stderr)
	}
	if _, stderr, _ := runScanCLI(t, context.Background(), failed, false, "http://127.0.0.1:8080/paid\n", "--op", "check", "--allow-private"); strings.Contains(stderr, note) {
		t.Errorf("--allow-private earned the note:\n%s", stderr)
	}
}
