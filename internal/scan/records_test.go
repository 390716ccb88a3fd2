package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pw@creds.example/p?q=1", "https://REDACTED@creds.example/p?q=1"},
		{"http://@host/", "http://REDACTED@host/"},
		{"http://a@b@host:8080/x@y", "http://REDACTED@host:8080/x@y"},
		{"ftp://user:pw@files.example/x", "ftp://REDACTED@files.example/x"},
		{"user:pw@host/path", "REDACTED@host/path"},
		{"https://host/path@not-userinfo?x=a@b#c@d", "https://host/path@not-userinfo?x=a@b#c@d"},
		{"https://host:99999/", "https://host:99999/"},
		{"", ""},
		// Forms that are not "scheme://" still carry an authority: a
		// scheme-relative URL, a scheme with one slash or a backslash (as
		// browsers read them), and a "://" that is only in the query.
		{"//user:pw@host/p", "//REDACTED@host/p"},
		{"http:/user:pw@host/p", "http:/REDACTED@host/p"},
		{`http:\\user:pw@host/p`, `http:\\REDACTED@host/p`},
		{"user:pw@host/p?next=http://other/", "REDACTED@host/p?next=http://other/"},
		{"http:user:pw@host/p", "REDACTED@host/p"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A URL with credentials is never echoed, whichever rule refused it.
func TestCredentialsAreNeverEchoed(t *testing.T) {
	input := strings.Join([]string{
		"https://alice:s3cret@creds.example/paid",
		"ftp://bob:s3cret@files.example/",
		`https://carol:s3cret@long.example/` + strings.Repeat("x", target.MaxURLBytes),
		"https://:s3cret@creds.example:99999/",
		"//dave7:s3cret@creds.example/paid",
		"http:/erin7:s3cret@creds.example/paid",
	}, "\n")
	for _, full := range []bool{false, true} {
		var out bytes.Buffer
		sc := New(Options{Op: ops.OpCheck, Runner: ops.Runner{Fetcher: &fakeFetcher{}}, Out: &out, Full: full})
		sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input)))
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		_ = sum.WriteText(&text)
		for _, where := range []string{out.String(), text.String(), sc.Progress().Line(0)} {
			if strings.Contains(where, "s3cret") || strings.Contains(where, "alice") || strings.Contains(where, "bob") ||
				strings.Contains(where, "dave7") || strings.Contains(where, "erin7") {
				t.Fatalf("credentials echoed:\n%s", where)
			}
		}
		if !strings.Contains(out.String(), `"url":"https://REDACTED@creds.example/paid"`) {
			t.Errorf("the refused URL is not written redacted:\n%s", out.String())
		}
		if sum.RefusedBy[target.RuleUserinfo] != 2 || sum.Refused != 6 {
			t.Errorf("refused %d %v", sum.Refused, sum.RefusedBy)
		}
	}
}

// probeFetcher answers the seven probes of a fail-open gate (the direct probe
// and HEAD get 200) for every URL.
type probeFetcher struct{ fakeFetcher }

func (f *probeFetcher) RunProbes(ctx context.Context, url string) []capture.Capture {
	cs := f.fakeFetcher.RunProbes(ctx, url)
	cs[1] = capture.Capture{Outcome: capture.OK, Status: 200, Header: capture.Header{}, Body: []byte{}}
	cs[3] = capture.Capture{Outcome: capture.OK, Status: 200, Header: capture.Header{}, Body: []byte("{}")}
	return cs
}

func TestHeaderCarriesTheTextsOnceAndFullRepeatsThem(t *testing.T) {
	for _, op := range []string{ops.OpCheck, ops.OpMemo, ops.OpProbe} {
		t.Run(op, func(t *testing.T) {
			input := "https://one.example/a\nhttps://two.example/b\n"
			var short, full bytes.Buffer
			for _, run := range []struct {
				out  *bytes.Buffer
				full bool
			}{{&short, false}, {&full, true}} {
				sc := New(Options{Op: op, Runner: ops.Runner{Fetcher: &fakeFetcher{}, Now: func() time.Time { return time.Unix(0, 0) }}, Out: run.out, Full: run.full})
				if _, err := sc.Run(context.Background(), NewInput(strings.NewReader(input))); err != nil {
					t.Fatal(err)
				}
			}
			shortLines := strings.Split(strings.TrimSpace(short.String()), "\n")
			fullLines := strings.Split(strings.TrimSpace(full.String()), "\n")
			if len(shortLines) != 3 || len(fullLines) != 2 {
				t.Fatalf("lines: %d with a header, %d full; want 3 and 2", len(shortLines), len(fullLines))
			}
			var h struct{ Header Header }
			if err := json.Unmarshal([]byte(shortLines[0]), &h); err != nil {
				t.Fatal(err)
			}
			want := NewHeader(op)
			if h.Header.Op != op || h.Header.DisclosureSentence != want.DisclosureSentence || h.Header.HonestyLine == "" || h.Header.Retention == "" {
				t.Fatalf("header = %+v", h.Header)
			}
			if (op == ops.OpProbe) != (h.Header.NoFundsProperty == criteria.RailProbe().NoFundsProperty) {
				t.Errorf("no_funds_property in the header = %q", h.Header.NoFundsProperty)
			}
			// Records: without the texts, and otherwise exactly the full
			// record (same fields, same order, same bytes).
			byURL := func(lines []string) map[string]map[string]json.RawMessage {
				m := map[string]map[string]json.RawMessage{}
				for _, l := range lines {
					var rec struct {
						URL    string
						Report map[string]json.RawMessage
					}
					if err := json.Unmarshal([]byte(l), &rec); err != nil {
						t.Fatal(err)
					}
					m[rec.URL] = rec.Report
				}
				return m
			}
			s, f := byURL(shortLines[1:]), byURL(fullLines)
			for u, fr := range f {
				sr := s[u]
				for _, k := range h.Header.Omitted {
					if _, ok := sr[k]; ok {
						t.Errorf("%s: the record repeats %s", u, k)
					}
					if _, ok := fr[k]; !ok {
						t.Errorf("%s: the --full record lacks %s", u, k)
					}
					delete(fr, k)
				}
				if len(sr) != len(fr) {
					t.Errorf("%s: %d fields, want %d", u, len(sr), len(fr))
				}
				for k, v := range fr {
					if !bytes.Equal(sr[k], v) {
						t.Errorf("%s: %s = %s, want %s", u, k, sr[k], v)
					}
				}
			}
			for _, l := range shortLines[1:] {
				if strings.Contains(l, want.DisclosureSentence) || strings.Contains(l, want.Retention) {
					t.Errorf("a record carries a header text: %s", l)
				}
			}
		})
	}
}

// Lint reports carry no criteria texts: the header names the op and omits
// nothing, and every record is exactly the --full one.
func TestLintHeaderOmitsNothing(t *testing.T) {
	var short, full bytes.Buffer
	for _, run := range []struct {
		out  *bytes.Buffer
		full bool
	}{{&short, false}, {&full, true}} {
		sc := New(Options{Op: ops.OpLint, Runner: ops.Runner{Fetcher: &fakeFetcher{}, Now: func() time.Time { return time.Unix(0, 0) }}, Out: run.out, Full: run.full})
		if _, err := sc.Run(context.Background(), NewInput(strings.NewReader("https://one.example/a\n"))); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitN(short.String(), "\n", 2)
	if lines[0] != `{"header":{"op":"lint","omitted":[]}}` || lines[1] != full.String() {
		t.Fatalf("with a header:\n%s\nfull:\n%s", short.String(), full.String())
	}
}

func TestProbeSummaryCountsExposures(t *testing.T) {
	input := "https://one.example/a\nhttps://two.example/b\nftp://refused.example/\n"
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpProbe, Runner: ops.Runner{Fetcher: &probeFetcher{}}, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input)))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Exposed != 2 || sum.Exposures["FAIL-OPEN:direct"] != 2 || sum.Exposures["METHOD-UNPAID-2XX:HEAD"] != 2 {
		t.Fatalf("exposed %d, exposures %v", sum.Exposed, sum.Exposures)
	}
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "exposed") || !strings.Contains(text.String(), "FAIL-OPEN:direct 2") {
		t.Errorf("summary text:\n%s", text.String())
	}
}

// One connection scope per run: the run's ops reuse connections to a host
// (at most PerHost in flight, so at most PerHost connections) and every
// connection is closed when Run returns.
func TestRunReusesConnectionsAndClosesThemAtTheEnd(t *testing.T) {
	var opened atomic.Int64
	closed := make(chan struct{}, 256)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, b := challengeFor("http://" + r.Host + r.URL.Path)
		w.Header().Set("PAYMENT-REQUIRED", h)
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write([]byte(b))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	var input strings.Builder
	for i := range 40 {
		input.WriteString(srv.URL + "/paid/" + string(rune('a'+i%26)) + "\n")
	}
	var out bytes.Buffer
	sc := New(Options{Op: ops.OpMemo, Runner: loopbackRunner(), Concurrency: 8, PerHost: 2, Out: &out})
	sum, err := sc.Run(context.Background(), NewInput(strings.NewReader(input.String())))
	if err != nil || sum.Reports != 40 {
		t.Fatalf("reports %d, err %v", sum.Reports, err)
	}
	n := opened.Load()
	if n < 1 || n > 2 {
		t.Fatalf("80 GETs over %d connections, want at most 2 (PerHost)", n)
	}
	deadline := time.After(time.Minute) // turns a hang into a failure only
	for i := range n {
		select {
		case <-closed:
		case <-deadline:
			t.Fatalf("%d of %d connections closed after the run", i, n)
		}
	}
}
