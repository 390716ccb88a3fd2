package scan

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// gauge tracks how many requests are in flight and the most ever seen.
// gauge counts requests in flight and their peak; when reached is set, it
// is closed once at requests are in flight together.
type gauge struct {
	now, peak atomic.Int64
	at        int64
	reached   chan struct{}
	once      sync.Once
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	if g.reached != nil && n >= g.at {
		g.once.Do(func() { close(g.reached) })
	}
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// challengeFor is a populated v1 body + v2 header 402 for url.
func challengeFor(url string) (header, body string) {
	body = fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111","resource":%q,"description":"one call","extra":{"usdc_token_account":"Token111","memo":"pv-abcdef123"}}]}`, url)
	hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111","extra":{"memo":"pv-abcdef123"}}]}`, url)
	return base64.StdEncoding.EncodeToString([]byte(hdr)), body
}

// seller is a loopback 402 target that counts requests in flight, overall
// (shared across sellers) and its own.
type seller struct {
	srv   *httptest.Server
	own   gauge
	hits  atomic.Int64
	delay time.Duration
}

func newSeller(t *testing.T, all *gauge, delay time.Duration) *seller {
	t.Helper()
	s := &seller{delay: delay}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		all.enter()
		s.own.enter()
		defer all.leave()
		defer s.own.leave()
		s.hits.Add(1)
		if all.reached != nil {
			select {
			case <-all.reached:
			case <-time.After(time.Minute): // turns a hang into a failure only
			}
		}
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		h, b := challengeFor("http://" + r.Host + r.URL.Path)
		w.Header().Set("PAYMENT-REQUIRED", h)
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write([]byte(b))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

type line struct {
	Line    int             `json:"line"`
	URL     string          `json:"url"`
	Report  json.RawMessage `json:"report"`
	Refused *Refusal        `json:"refused"`
	Error   *Problem        `json:"error"`
}

// decodeLines decodes the records of a scan's output, after its header
// (which must come first, once).
func decodeLines(t *testing.T, out []byte) []line {
	t.Helper()
	var got []line
	for i, l := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if i == 0 {
			var h struct {
				Header *Header `json:"header"`
			}
			dec := json.NewDecoder(bytes.NewReader(l))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&h); err != nil || h.Header == nil || h.Header.Op == "" {
				t.Fatalf("the first line is not a header: %s: %v", l, err)
			}
			continue
		}
		var rec line
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("not a record: %s: %v", l, err)
		}
		got = append(got, rec)
	}
	return got
}

func loopbackRunner() ops.Runner {
	return ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, Timeout: 3 * time.Second})}
}

func TestLimitsNeverExceeded(t *testing.T) {
	// No request is answered before three are in flight together (the
	// three hosts side by side), so that part never depends on timing.
	all := gauge{at: 3, reached: make(chan struct{})}
	sellers := []*seller{newSeller(t, &all, 15*time.Millisecond), newSeller(t, &all, 15*time.Millisecond), newSeller(t, &all, 15*time.Millisecond)}
	var input strings.Builder
	for i := 0; i < 24; i++ {
		for _, s := range sellers {
			fmt.Fprintf(&input, "%s/paid/%d\n", s.srv.URL, i)
		}
	}
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpCheck, Runner: loopbackRunner(), Concurrency: 5, PerHost: 2, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input.String())))
	if err != nil {
		t.Fatal(err)
	}
	if got := all.peak.Load(); got > 5 {
		t.Errorf("global peak in flight = %d, want at most 5", got)
	}
	if got := all.peak.Load(); got < 3 {
		t.Errorf("global peak in flight = %d: hosts did not run side by side", got)
	}
	for i, s := range sellers {
		if got := s.own.peak.Load(); got > 2 {
			t.Errorf("seller %d peak in flight = %d, want at most 2", i, got)
		}
		if s.hits.Load() != 24 {
			t.Errorf("seller %d got %d requests, want 24", i, s.hits.Load())
		}
	}
	recs := decodeLines(t, out.Bytes())
	if len(recs) != 72 || sum.Records != 72 || sum.Outcomes["POPULATED"] != 72 {
		t.Errorf("records = %d, summary %+v; want 72 POPULATED", len(recs), sum)
	}
	seen := map[int]bool{}
	for _, r := range recs {
		if seen[r.Line] {
			t.Errorf("line %d recorded twice", r.Line)
		}
		seen[r.Line] = true
	}
}

func TestProbeAndMemoTakeOneSlotEach(t *testing.T) {
	for _, op := range []string{ops.OpMemo, ops.OpProbe} {
		t.Run(op, func(t *testing.T) {
			var all gauge
			s := newSeller(t, &all, 2*time.Millisecond)
			var input strings.Builder
			for i := 0; i < 6; i++ {
				fmt.Fprintf(&input, "%s/paid/%d\n", s.srv.URL, i)
			}
			var out bytes.Buffer
			sc := New(Options{Op: op, Runner: loopbackRunner(), Concurrency: 8, PerHost: 1, Out: &out})
			sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input.String())))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.own.peak.Load(); got != 1 {
				t.Errorf("peak in flight at the seller = %d, want 1 (an op's requests are sequential)", got)
			}
			perURL := map[string]int64{ops.OpMemo: 2, ops.OpProbe: 7}[op]
			if got := s.hits.Load(); got != 6*perURL {
				t.Errorf("requests = %d, want %d", got, 6*perURL)
			}
			if sum.Reports != 6 {
				t.Errorf("reports = %d, want 6", sum.Reports)
			}
		})
	}
}

// fakeFetcher answers from a canned capture, after a delay chosen per URL,
// or once the channel wait gives for the URL is closed (nil: at once).
type fakeFetcher struct {
	delay func(url string) time.Duration
	wait  func(url string) <-chan struct{}
	calls atomic.Int64
}

func (f *fakeFetcher) Get(ctx context.Context, url string) capture.Capture {
	f.calls.Add(1)
	if f.wait != nil {
		if ch := f.wait(url); ch != nil {
			select {
			case <-ch:
			case <-time.After(time.Minute): // turns a hang into a failure only
			case <-ctx.Done():
				return capture.Capture{Outcome: capture.Failed}
			}
		}
	}
	if f.delay != nil {
		select {
		case <-time.After(f.delay(url)):
		case <-ctx.Done():
			return capture.Capture{Outcome: capture.Failed}
		}
	}
	h, b := challengeFor(url)
	return capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Payment-Required": {h}}, Body: []byte(b)}
}

func (f *fakeFetcher) Do(ctx context.Context, r target.Request) capture.Capture {
	return f.Get(ctx, r.URL)
}

func (f *fakeFetcher) RunProbes(ctx context.Context, url string) []capture.Capture {
	cs := make([]capture.Capture, 7)
	for i := range cs {
		cs[i] = f.Get(ctx, url)
	}
	return cs
}

// linesWriter is a scan's output that closes after once n lines (the header
// record included) have been written.
type linesWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	n     int
	after chan struct{}
}

func newLinesWriter(n int) *linesWriter { return &linesWriter{n: n, after: make(chan struct{})} }

func (w *linesWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := bytes.Count(w.buf.Bytes(), []byte("\n"))
	w.buf.Write(p)
	if now := bytes.Count(w.buf.Bytes(), []byte("\n")); before < w.n && now >= w.n {
		close(w.after)
	}
	return len(p), nil
}

func (w *linesWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

func TestRecordsInCompletionOrderWithLines(t *testing.T) {
	// The slow URL's fetch ends only once the header and the two fast
	// records are out: the order is the completion order, whatever the
	// machine's speed.
	out := newLinesWriter(3)
	f := &fakeFetcher{wait: func(url string) <-chan struct{} {
		if strings.Contains(url, "slow") {
			return out.after
		}
		return nil
	}}
	input := "https://slow.example/a\n# fast ones\nhttps://fast1.example/b\nhttps://fast2.example/c\n"
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Out: out})
	if _, err := sc.Run(context.Background(), NewInput(strings.NewReader(input))); err != nil {
		t.Fatal(err)
	}
	recs := decodeLines(t, out.Bytes())
	if len(recs) != 3 {
		t.Fatalf("records = %d, want 3", len(recs))
	}
	if last := recs[2]; last.Line != 1 || last.URL != "https://slow.example/a" {
		t.Errorf("last record = line %d %s, want the slow one (line 1)", last.Line, last.URL)
	}
	var rep ops.CheckReport
	if err := json.Unmarshal(recs[2].Report, &rep); err != nil || rep.State != "POPULATED" || rep.URL != recs[2].URL || rep.Op != "check" {
		t.Errorf("report = %+v, %v", rep, err)
	}
}

func TestHotHostDoesNotBlockOthers(t *testing.T) {
	// Every fetch of the hot host waits until the cool host's record is out
	// (the header and one record): if the cool URL queued behind the hot
	// host, the hang guard would fire and its record would not be first.
	out := newLinesWriter(2)
	f := &fakeFetcher{wait: func(url string) <-chan struct{} {
		if strings.Contains(url, "hot.example") {
			return out.after
		}
		return nil
	}}
	var input strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&input, "https://hot.example/%d\n", i)
	}
	input.WriteString("https://cool.example/x\n")
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Concurrency: 4, PerHost: 1, Out: out})
	if _, err := sc.Run(context.Background(), NewInput(strings.NewReader(input.String()))); err != nil {
		t.Fatal(err)
	}
	recs := decodeLines(t, out.Bytes())
	if len(recs) != 11 || recs[0].URL != "https://cool.example/x" {
		t.Errorf("first record = %+v; the cool host waited behind the hot one", recs[0])
	}
}

func TestRefusalsAreRecordsAndNeverAbort(t *testing.T) {
	f := &fakeFetcher{}
	input := strings.Join([]string{
		"https://ok.example/a",
		"ftp://files.example/x",
		"https://user:pw@creds.example/",
		"/relative/path",
		"https://ok.example/b?q=1&r=<2>",
		"http://:80/",
		"https://ok.example:99999/",
	}, "\n")
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input)))
	if err != nil {
		t.Fatal(err)
	}
	byLine := map[int]line{}
	for _, r := range decodeLines(t, out.Bytes()) {
		byLine[r.Line] = r
	}
	wantRule := map[int]string{2: target.RuleScheme, 3: target.RuleUserinfo, 4: target.RuleNotAbsolute, 6: target.RuleHostEmpty, 7: target.RulePort}
	for ln, rule := range wantRule {
		r := byLine[ln]
		if r.Refused == nil || r.Refused.Rule != rule || r.Report != nil {
			t.Errorf("line %d: %+v, want refused %s", ln, r, rule)
		}
	}
	for _, ln := range []int{1, 5} {
		if r := byLine[ln]; r.Report == nil || r.Refused != nil {
			t.Errorf("line %d: %+v, want a report", ln, r)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte(`"url":"https://ok.example/b?q=1&r=<2>"`)) {
		t.Errorf("URL not kept as written:\n%s", out.Bytes())
	}
	if sum.Refused != 5 || sum.Reports != 2 || sum.RefusedBy[target.RuleScheme] != 1 || f.calls.Load() != 2 {
		t.Errorf("summary = %+v, fetches = %d", sum, f.calls.Load())
	}
}

func TestInputErrorStillRunsWhatCameBefore(t *testing.T) {
	f := &fakeFetcher{}
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader("[\"https://a.example/\",\n\"https://b.example/\",\n oops]")))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 3 {
		t.Fatalf("err = %v, want an input error on line 3", err)
	}
	if sum.Reports != 2 {
		t.Errorf("reports = %d, want 2", sum.Reports)
	}
}

func TestCancelStopsNewWorkAndCancelsInFlight(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	arrived := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	defer close(release)

	var input strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&input, "%s/p/%d\n", srv.URL, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpCheck, Runner: loopbackRunner(), Concurrency: 3, PerHost: 3, Grace: -1, Out: &out})
	go func() {
		for i := 0; i < 3; i++ {
			<-arrived
		}
		cancel()
	}()
	sum, err := sc.Run(ctx, NewInput(strings.NewReader(input.String())))
	if err != nil {
		t.Fatal(err)
	}
	if got := started.Load(); got != 3 {
		t.Errorf("requests started = %d, want 3 (no new work after cancel)", got)
	}
	recs := decodeLines(t, out.Bytes())
	if len(recs) != 3 {
		t.Fatalf("records = %d, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Error == nil || r.Error.Code != CodeCancelled || r.Report != nil {
			t.Errorf("record %+v, want error cancelled (never a verdict from a cancelled fetch)", r)
		}
	}
	if !sum.Interrupted || sum.Errors != 3 || sum.ErrorsBy[CodeCancelled] != 3 || sum.NotStarted == 0 {
		t.Errorf("summary = %+v", sum)
	}
}

func TestCancelLetsInFlightFinishWithinGrace(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		h, b := challengeFor("http://" + r.Host + r.URL.Path)
		w.Header().Set("PAYMENT-REQUIRED", h)
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write([]byte(b))
	}))
	defer srv.Close()

	var input strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&input, "%s/p/%d\n", srv.URL, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpCheck, Runner: loopbackRunner(), Concurrency: 2, PerHost: 2, Grace: 10 * time.Second, Out: &out})
	go func() {
		<-arrived
		<-arrived
		cancel()
		close(release)
	}()
	sum, err := sc.Run(ctx, NewInput(strings.NewReader(input.String())))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reports != 2 || sum.Outcomes["POPULATED"] != 2 || sum.Errors != 0 || !sum.Interrupted {
		t.Errorf("summary = %+v, want the 2 in-flight checks finished as verdicts", sum)
	}
}

type brokenWriter struct{ n atomic.Int64 }

func (w *brokenWriter) Write(p []byte) (int, error) {
	w.n.Add(1)
	return 0, errors.New("no space left")
}

func TestWriteErrorStopsTheScan(t *testing.T) {
	f := &fakeFetcher{delay: func(string) time.Duration { return time.Millisecond }}
	var input strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&input, "https://h%d.example/\n", i)
	}
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Concurrency: 4, Out: &brokenWriter{}})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input.String())))
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v, want the write error", err)
	}
	if f.calls.Load() >= 20000 || sum.Interrupted {
		t.Errorf("fetches = %d, summary %+v: the scan went on after the output failed", f.calls.Load(), sum)
	}
}

func TestUnknownOp(t *testing.T) {
	sc := New(Options{Op: "dance", Runner: ops.Runner{Fetcher: &fakeFetcher{}}})
	if _, err := sc.Run(context.Background(), NewInput(strings.NewReader("https://a.example/"))); !errors.Is(err, ErrUnknownOp) {
		t.Errorf("err = %v, want ErrUnknownOp", err)
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://Seller.Example/a", "seller.example:443"},
		{"https://seller.example:443/b", "seller.example:443"},
		{"https://seller.example./c", "seller.example:443"},
		{"http://seller.example/a", "seller.example:80"},
		{"http://seller.example:8080/a", "seller.example:8080"},
		{"http://[::1]:8080/a", "[::1]:8080"},
		{"http://127.0.0.2/a", "127.0.0.2:80"},
	}
	for _, tt := range tests {
		if got := HostKey(tt.url); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestManyURLsStreamWithBoundedWaiting runs more entries than the waiting
// window against one host, so reading has to pause and resume.
func TestManyURLsStreamWithBoundedWaiting(t *testing.T) {
	f := &fakeFetcher{}
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(pw, "https://one.example/%d\n", i)
		}
		pw.Close()
	}()
	var out countingWriter
	sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: f}, Concurrency: 16, PerHost: 2, Out: &out})
	sc.window = 50
	sum, err := sc.Run(context.Background(), NewInput(pr))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reports != 2000 || out.lines.Load() != 2001 {
		t.Errorf("reports = %d, lines = %d, want 2000 and a header", sum.Reports, out.lines.Load())
	}
	if sc.peakWaiting == 0 || sc.peakWaiting > 50 {
		t.Errorf("peak entries waiting = %d, want 1..50 (the window), whatever the input's length", sc.peakWaiting)
	}
}

type countingWriter struct{ lines atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// TestLintOp: scan --op lint runs one GET per URL and counts the outcomes
// CONFORMS and DOES-NOT-CONFORM.
func TestLintOp(t *testing.T) {
	f := &fakeFetcher{}
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpLint, Runner: ops.Runner{Fetcher: f}, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader("https://a.example/x\nhttps://b.example/y\n")))
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeLines(t, out.Bytes())
	if len(recs) != 2 || f.calls.Load() != 2 {
		t.Fatalf("%d records, %d GETs", len(recs), f.calls.Load())
	}
	var rep ops.LintReport
	if err := json.Unmarshal(recs[0].Report, &rep); err != nil || rep.Op != "lint" || rep.Rules.ID != "x402-lint/v1" || rep.Status != 402 {
		t.Errorf("report = %+v, %v", rep, err)
	}
	if sum.Op != ops.OpLint || sum.Outcomes[ops.LintConforms]+sum.Outcomes[ops.LintDoesNotConform] != 2 {
		t.Errorf("summary %+v", sum)
	}
	if _, ok := sum.Outcomes[ops.LintConforms]; !ok {
		t.Errorf("outcomes lack CONFORMS: %v", sum.Outcomes)
	}
}
