package target

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

func TestHostLimitHandsSlotsOverInOrder(t *testing.T) {
	l := NewHostLimit(2)
	ctx := context.Background()
	for range 2 {
		if err := l.acquire(ctx, "seller.example"); err != nil {
			t.Fatal(err)
		}
	}
	ended, end := context.WithCancel(ctx)
	end()
	if l.acquire(ended, "seller.example") == nil {
		t.Fatal("a third slot was free at a limit of 2")
	}
	if l.acquire(ended, "other.example") != nil {
		t.Fatal("another host shares the limit")
	}
	// A waiter whose context ends leaves the line and holds nothing.
	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { gone <- l.acquire(cctx, "seller.example") }()
	waitFor(t, func() bool { return l.Waiting("seller.example") == 1 })
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("a cancelled wait took a slot")
	}
	// Two in line get the slots in the order they came.
	order := make(chan int, 2)
	for i := range 2 {
		go func() {
			if l.acquire(ctx, "seller.example") == nil {
				order <- i
			}
		}()
		waitFor(t, func() bool { return l.Waiting("seller.example") == i+1 })
	}
	l.release("seller.example")
	if got := <-order; got != 0 {
		t.Fatalf("first slot went to waiter %d", got)
	}
	l.release("seller.example")
	if got := <-order; got != 1 {
		t.Fatalf("second slot went to waiter %d", got)
	}
	if l.Open("seller.example") != 2 || l.Waiting("seller.example") != 0 {
		t.Fatalf("open %d waiting %d", l.Open("seller.example"), l.Waiting("seller.example"))
	}
	l.release("seller.example")
	l.release("seller.example")
	l.release("other.example")
	if len(l.hosts) != 0 {
		t.Fatalf("hosts left: %v", l.hosts)
	}
	if NewHostLimit(0).PerHost() != DefaultHostConns {
		t.Fatal("default")
	}
}

// waitFor polls a condition that will become true; the bound only turns a
// hang into a failure.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedSeller holds every request in its handler until release is closed,
// and records the most requests it ever had in hand at once.
type gatedSeller struct {
	mu       sync.Mutex
	inFlight int
	max      int
	release  chan struct{}
}

func (g *gatedSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.inFlight++
	g.max = max(g.max, g.inFlight)
	g.mu.Unlock()
	<-g.release
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	w.WriteHeader(http.StatusPaymentRequired)
}

// TestHostLimitBoundsConnectionsAtTheSeller: many callers — one-shot
// requests, op sessions and a scan pool, on two Clients sharing one limit —
// never hold more connections to one seller than the limit. While the seller
// holds every request, it has accepted exactly the limit's connections and
// everyone else waits in line (a handshake, not a timing); after release,
// every request is answered.
func TestHostLimitBoundsConnectionsAtTheSeller(t *testing.T) {
	const limit, callers = 3, 60
	g := &gatedSeller{release: make(chan struct{})}
	srv, cs := countedServer(t, g)
	hl := NewHostLimit(limit)
	a := New(Options{AllowPrivate: true, HostLimit: hl})
	b := New(Options{AllowPrivate: true, HostLimit: hl})
	pool := b.Pool(4)
	defer pool.Close()
	host := strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0]

	var wg sync.WaitGroup
	got := make(chan capture.Capture, 2*callers)
	for i := range callers {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				got <- a.Get(context.Background(), srv.URL+"/")
			case 1:
				s := a.Session()
				defer s.Close()
				got <- s.Get(context.Background(), srv.URL+"/")
				got <- s.Get(context.Background(), srv.URL+"/")
			default:
				got <- pool.Get(context.Background(), srv.URL+"/")
			}
		})
	}
	waitFor(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		// Every one-shot and session caller is in line, or in the handler;
		// the pool's own callers may queue in its transport instead.
		return g.inFlight == limit && hl.Waiting(host) >= callers*2/3-limit
	})
	if n := cs.opened.Load(); n != limit {
		t.Fatalf("the seller accepted %d connections with %d callers at a limit of %d", n, callers, limit)
	}
	close(g.release)
	wg.Wait()
	close(got)
	n := 0
	for c := range got {
		n++
		if c.Outcome != capture.OK || c.Status != http.StatusPaymentRequired {
			t.Errorf("capture %v %s %d", c.Outcome, c.Error, c.Status)
		}
	}
	if n != callers+callers/3 {
		t.Errorf("%d captures", n)
	}
	if g.max > limit {
		t.Errorf("the seller had %d requests in hand at once, limit %d", g.max, limit)
	}
}

func TestHostLimitIsPerClientByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c := New(Options{AllowPrivate: true})
	if c.opts.HostLimit == nil || c.opts.HostLimit.PerHost() != DefaultHostConns {
		t.Fatal("no default limit")
	}
	if got := c.Get(context.Background(), srv.URL); got.Outcome != capture.OK {
		t.Fatalf("%v", got.Outcome)
	}
	// The one-shot connection closes after the exchange, and its slot is free.
	waitFor(t, func() bool { return c.opts.HostLimit.Open("127.0.0.1") == 0 })
}

// fakeSleep is a spacing clock: sleeping advances it, and every sleep is
// recorded.
type fakeSleep struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (f *fakeSleep) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slept = append(f.slept, d)
	f.t = f.t.Add(d)
	return ctx.Err()
}

// TestPoliteHostLimitSpacesSlotsOfAHost: slots of one host are taken at
// least the spacing apart (each waits for its turn); another host has
// turns of its own; a wait whose context ends gives its slot back.
func TestPoliteHostLimitSpacesSlotsOfAHost(t *testing.T) {
	const spacing = 250 * time.Millisecond
	l := NewPoliteHostLimit(2, spacing)
	clock := &fakeSleep{t: time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)}
	l.now, l.sleep = clock.now, clock.sleep
	ctx := context.Background()
	var starts []time.Time
	for range 5 {
		if err := l.acquire(ctx, "seller.example"); err != nil {
			t.Fatal(err)
		}
		starts = append(starts, clock.now())
		l.release("seller.example")
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < spacing {
			t.Errorf("slots %d and %d of one host taken %v apart, spacing %v", i-1, i, d, spacing)
		}
	}
	// Another host is not behind the first one's turns.
	before := len(clock.slept)
	if err := l.acquire(ctx, "other.example"); err != nil {
		t.Fatal(err)
	}
	if len(clock.slept) != before {
		t.Errorf("the first slot of another host waited %v", clock.slept[before:])
	}
	l.release("other.example")
	// A turn waited for with an ended context gives the slot back.
	ended, end := context.WithCancel(ctx)
	end()
	if err := l.acquire(ended, "seller.example"); err == nil {
		t.Fatal("an ended wait for the host's turn took the slot")
	}
	if got := l.Open("seller.example"); got != 0 {
		t.Errorf("%d slots held after an ended wait, want 0", got)
	}
	if l.Spacing() != spacing || NewHostLimit(2).Spacing() != 0 {
		t.Errorf("spacing %v / %v", l.Spacing(), NewHostLimit(2).Spacing())
	}
}

// TestPoliteHostLimitBoundsInFlightAtTheSeller: many callers of two
// Clients sharing a polite limit never have more requests in the seller's
// hands than the limit (the spacing does not let a waiter slip past it).
func TestPoliteHostLimitBoundsInFlightAtTheSeller(t *testing.T) {
	const limit, callers = 2, 40
	g := &gatedSeller{release: make(chan struct{})}
	srv, cs := countedServer(t, g)
	hl := NewPoliteHostLimit(limit, time.Millisecond)
	a := New(Options{AllowPrivate: true, HostLimit: hl})
	b := New(Options{AllowPrivate: true, HostLimit: hl})
	host := strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0]
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			c := a
			if i%2 == 1 {
				c = b
			}
			if got := c.Get(context.Background(), srv.URL+"/"); got.Status != http.StatusPaymentRequired {
				t.Errorf("capture %v %d", got.Outcome, got.Status)
			}
		})
	}
	waitFor(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight == limit && hl.Waiting(host) == callers-limit
	})
	if n := cs.opened.Load(); n != limit {
		t.Fatalf("the seller accepted %d connections at a limit of %d", n, limit)
	}
	close(g.release)
	wg.Wait()
	if g.max > limit {
		t.Errorf("the seller had %d requests in hand at once, limit %d", g.max, limit)
	}
}
