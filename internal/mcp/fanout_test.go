package mcp

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// heldSeller answers a challenge, but holds every request in its handler
// until release is closed; it counts the connections it accepted and the
// requests it had in hand at once.
type heldSeller struct {
	*httptest.Server
	release  chan struct{}
	opened   atomic.Int32
	mu       sync.Mutex
	inFlight int
	max      int
}

func newHeldSeller(t *testing.T) *heldSeller {
	s := &heldSeller{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.inFlight++
		s.max = max(s.max, s.inFlight)
		s.mu.Unlock()
		<-s.release
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
		doc := `{"x402Version":2,"resource":{"url":"http://` + r.Host + `/"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x1111111111111111111111111111111111111111","maxTimeoutSeconds":60}]}`
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(doc)))
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.opened.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *heldSeller) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// TestParallelChecksNeverExceedTheHostLimit is the amplifier finding's
// repro: 200 parallel x402_check calls against one seller. While the seller
// holds every request, it has accepted exactly the host limit's connections
// and every other call waits in line for the host (a handshake on the
// limit's own count, not a timing); released, every call is answered, and
// the seller never had more requests in hand than the limit.
func TestParallelChecksNeverExceedTheHostLimit(t *testing.T) {
	const calls, limit = 200, 4
	seller := newHeldSeller(t)
	hl := target.NewHostLimit(limit)
	cfg := loopbackConfig()
	cfg.Runner = ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, HostLimit: hl}), Now: fixedNow}
	cfg.MaxCalls = calls
	cs := connect(t, cfg)

	var wg sync.WaitGroup
	results := make(chan *sdk.CallToolResult, calls)
	for range calls {
		wg.Go(func() { results <- call(t, cs, ToolCheck, map[string]any{"url": seller.URL + "/"}) })
	}
	waitFor(t, func() bool { return seller.held() == limit && hl.Waiting("127.0.0.1") == calls-limit })
	if n := seller.opened.Load(); n != limit {
		t.Fatalf("the seller accepted %d connections from %d calls, limit %d", n, calls, limit)
	}
	close(seller.release)
	wg.Wait()
	close(results)
	for res := range results {
		if m := structured(t, res); res.IsError || m["op"] != "check" {
			t.Fatalf("a call failed: %q", text(res))
		}
	}
	if seller.max > limit {
		t.Errorf("the seller had %d requests in hand at once, limit %d", seller.max, limit)
	}
}

// TestCallsBeyondTheLimitFailBusy: with every call slot taken (the calls
// held at the seller: a handshake) and no wait allowed, the next call fails
// with the closed-form busy error; a local tool is bounded alike.
func TestCallsBeyondTheLimitFailBusy(t *testing.T) {
	seller := newHeldSeller(t)
	cfg := loopbackConfig()
	cfg.MaxCalls, cfg.CallWait = 2, -1
	cs := connect(t, cfg)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { call(t, cs, ToolCheck, map[string]any{"url": seller.URL + "/"}) })
	}
	waitFor(t, func() bool { return seller.held() == 2 })
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{ToolCheck, map[string]any{"url": seller.URL + "/"}}, {ToolTermsHash, map[string]any{"challenge": "{}"}}} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || text(res) != "busy: 2 tool calls are running, this server's limit (--max-calls); try again later" {
			t.Errorf("%s: isError %v %q", c.tool, res.IsError, text(res))
		}
	}
	close(seller.release)
	wg.Wait()
	if res := call(t, cs, ToolTermsHash, map[string]any{"challenge": "{}"}); strings.HasPrefix(text(res), "busy") {
		t.Errorf("still busy after the calls ended: %q", text(res))
	}
}

// TestGateQueuesThenServes: a call beyond the bound waits in line and runs
// when a slot frees; the line itself is bounded (4 × the bound).
func TestGateQueuesThenServes(t *testing.T) {
	g := newGate(1, DefaultCallWait)
	done, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		d, err := g.enter(context.Background())
		if err == nil {
			d()
		}
		got <- err
	}()
	waitFor(t, func() bool { return g.waiting.Load() == 1 })
	// The line holds 4; the fifth beyond the bound is busy at once.
	g.waiting.Add(3)
	if _, err := g.enter(context.Background()); err != g.busy {
		t.Errorf("a full line: %v", err)
	}
	g.waiting.Add(-3)
	done()
	if err := <-got; err != nil {
		t.Errorf("the queued call: %v", err)
	}
	// A caller that gives up while in line fails busy and holds nothing.
	done, _ = g.enter(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := g.enter(ctx); got <- err }()
	waitFor(t, func() bool { return g.waiting.Load() == 1 })
	cancel()
	if err := <-got; err != g.busy {
		t.Errorf("a cancelled wait: %v", err)
	}
	done()
	if len(g.slots) != 0 || g.waiting.Load() != 0 {
		t.Errorf("slots %d waiting %d", len(g.slots), g.waiting.Load())
	}
}
