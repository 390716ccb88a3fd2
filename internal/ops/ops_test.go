package ops

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/verdict"
)

func runner(t *testing.T) Runner {
	return Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: "payability/test"}),
		Now: func() time.Time { return time.Date(2026, 11, 29, 1, 2, 3, 4e6, time.UTC) }}
}

func TestPolicyRefusalSendsNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, op := range []string{OpCheck, OpMemo, OpProbe} {
		_, err := runner(t).Run(context.Background(), op, strings.Replace(srv.URL, "http://", "http://user@", 1))
		var pe *target.PolicyError
		if !errors.As(err, &pe) || pe.Rule != target.RuleUserinfo {
			t.Errorf("%s: err %v", op, err)
		}
	}
	if _, err := runner(t).Run(context.Background(), "refund", srv.URL); !errors.Is(err, ErrUnknownOp) {
		t.Errorf("unknown op: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the target", hits.Load())
	}
}

func TestEnvelopeAndCounts(t *testing.T) {
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	r := runner(t)

	c, err := r.Check(ctx, srv.URL)
	if err != nil || c.State != verdict.HeaderMissing {
		t.Fatalf("check: %v %s", err, c.State)
	}
	if c.URL != srv.URL || c.CheckedAt != "2026-11-29T01:02:03.004Z" || c.Service != criteria.ServicePayability ||
		c.Corpus != corpus.RefOf(criteria.ServicePayability) || c.VerdictLine != criteria.CheckLine("HEADER-MISSING", r.Now()) {
		t.Errorf("envelope %+v", c.Envelope)
	}
	if gets.Load() != 1 {
		t.Errorf("check sent %d GETs, want 1", gets.Load())
	}
	m, _ := r.Memo(ctx, srv.URL)
	if gets.Load() != 3 || m.State != verdict.MemoAbsent {
		t.Errorf("memo: %d GETs in all, state %s", gets.Load(), m.State)
	}
	p, _ := r.Probe(ctx, srv.URL)
	if p.Service != criteria.ServiceRailProbe || p.NoFundsProperty != criteria.RailProbe().NoFundsProperty || len(p.Probes) != 7 {
		t.Errorf("probe envelope %+v", p.Envelope)
	}
	b, _ := json.Marshal(p)
	for _, k := range []string{`"service"`, `"grades"`, `"no_funds_property"`, `"disclosure_sentence"`, `"corpus"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("probe report lacks %s", k)
		}
	}
}

// stamped records when the grader's input was gathered relative to the clock.
type stamped struct{ fetched bool }

func (s *stamped) Get(context.Context, string) capture.Capture {
	s.fetched = true
	return capture.Capture{Outcome: capture.Timeout}
}
func (s *stamped) RunProbes(context.Context, string) []capture.Capture { return nil }
func (s *stamped) Do(ctx context.Context, r target.Request) capture.Capture {
	return s.Get(ctx, r.URL)
}

func TestCheckEndIsStampedAfterTheFetch(t *testing.T) {
	f := &stamped{}
	r := Runner{Fetcher: f, Now: func() time.Time {
		if !f.fetched {
			t.Error("the clock was read before the fetch")
		}
		return time.Unix(0, 0)
	}}
	if rep, _ := r.Check(context.Background(), "https://seller.example/"); rep.State != verdict.NotA402 {
		t.Errorf("state %s", rep.State)
	}
}

// Each op runs in a connection scope of its own: memo's two GETs share one
// connection, probe's seven two (none is reused after HEAD over HTTP/1), and
// no connection outlives its op or serves another op.
func TestEachOpHasItsOwnConnectionScope(t *testing.T) {
	var opened, closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1}`)
	}))
	closedCh := make(chan struct{}, 64)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed.Add(1)
			closedCh <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	waitClosed := func(n int64) {
		t.Helper()
		deadline := time.After(time.Minute) // turns a hang into a failure only
		for closed.Load() < n {
			select {
			case <-closedCh:
			case <-deadline:
				t.Fatalf("%d of %d connections closed", closed.Load(), n)
			}
		}
	}
	r := runner(t)
	ctx := context.Background()
	if _, err := r.Memo(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if opened.Load() != 1 {
		t.Fatalf("memo opened %d connections, want 1", opened.Load())
	}
	waitClosed(1)
	if _, err := r.Probe(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if opened.Load() != 3 {
		t.Fatalf("probe opened %d connections, want 2", opened.Load()-1)
	}
	waitClosed(3)
	// Two memos at once (two callers of serve): four GETs, two connections.
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			r.Memo(ctx, srv.URL)
		}()
	}
	<-done
	<-done
	if opened.Load() != 5 {
		t.Fatalf("two memos opened %d connections, want 2", opened.Load()-3)
	}
	waitClosed(5)
}

func TestScopedLeavesAFetcherThatOpensNoScopes(t *testing.T) {
	f := &stamped{}
	r, done := Runner{Fetcher: f}.Scoped(4)
	done()
	if r.Fetcher != Fetcher(f) {
		t.Fatal("Scoped replaced a fetcher that opens no scopes")
	}
}

// wrapped embeds a Client to change its requests, as tests and tools do: a
// scope of the embedded Client would bypass its Get, so none is opened.
type wrapped struct {
	*target.Client
	gets atomic.Int64
}

func (w *wrapped) Get(ctx context.Context, url string) capture.Capture {
	w.gets.Add(1)
	return w.Client.Get(ctx, url)
}

func TestAWrapperOfAClientKeepsItsOwnMethods(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer srv.Close()
	w := &wrapped{Client: target.New(target.Options{AllowPrivate: true})}
	if _, err := (Runner{Fetcher: w}).Memo(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	if w.gets.Load() != 2 {
		t.Fatalf("the wrapper saw %d of memo's 2 GETs", w.gets.Load())
	}
	if _, ok := OpenScope(w, 1); ok {
		t.Fatal("OpenScope opened a scope under a wrapper")
	}
	s, ok := OpenScope(w.Client, 1)
	if !ok {
		t.Fatal("OpenScope opened no scope on a Client")
	}
	s.Close()
}
