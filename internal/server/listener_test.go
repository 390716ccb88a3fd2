package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The connection cap at its edge: n connections are accepted and held; the
// (n+1)th is accepted only once one of them is closed; a connection closed
// twice frees one slot; Close ends a waiting Accept.
func TestLimitListenerAtItsEdge(t *testing.T) {
	const n = 3
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewLimitListener(inner, n)
	defer l.Close()
	var clients []net.Conn
	dial := func() {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var held []net.Conn
	for range n {
		dial()
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if got := l.Open(); got != n {
		t.Fatalf("Open = %d after %d accepts, want %d", got, n, n)
	}
	dial() // the (n+1)th waits in the backlog
	next := make(chan net.Conn)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		next <- c
	}()
	select {
	case c := <-next:
		t.Fatalf("connection %d accepted while %d were open", n+1, l.Open())
		c.Close()
	default:
	}
	held[0].Close()
	held[0].Close() // twice: one slot
	c := <-next
	if got := l.Open(); got != n {
		t.Errorf("Open = %d after one close and one accept, want %d", got, n)
	}
	c.Close()
	for _, h := range held[1:] {
		h.Close()
	}
	if got := l.Open(); got != 0 {
		t.Errorf("Open = %d after closing all, want 0", got)
	}

	// Full again, then Close: the waiting Accept ends.
	for range n {
		dial()
		if _, err := l.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error)
	go func() {
		_, err := l.Accept()
		errc <- err
	}()
	l.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
	}
}

// pruneStore counts prunes and says when one happened.
type pruneStore struct {
	store.Store
	mu    sync.Mutex
	times []time.Time
	done  chan struct{}
}

func (p *pruneStore) Prune(_ context.Context, now time.Time) (store.Pruned, error) {
	p.mu.Lock()
	p.times = append(p.times, now)
	p.mu.Unlock()
	p.done <- struct{}{}
	return store.Pruned{Free: 1}, nil
}

// The prune job runs at once and at every tick, at the tick's time, and
// ends with its context (goleak checks that its goroutine is gone).
func TestPrunerRunsAtStartAndEveryTick(t *testing.T) {
	st := &pruneStore{done: make(chan struct{})}
	ticks := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ended := make(chan struct{})
	go func() {
		RunPruner(ctx, st, ticks, func() time.Time { return start }, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(ended)
	}()
	<-st.done
	for i := 1; i <= 2; i++ {
		ticks <- start.Add(time.Duration(i) * time.Hour)
		<-st.done
	}
	cancel()
	<-ended
	if len(st.times) != 3 || !st.times[0].Equal(start) || !st.times[2].Equal(start.Add(2*time.Hour)) {
		t.Errorf("prunes at %v, want at start and at each of 2 ticks", st.times)
	}
}

func TestStartPrunerStops(t *testing.T) {
	st := &pruneStore{done: make(chan struct{}, 1)}
	stop := StartPruner(context.Background(), st, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	<-st.done
	stop()
}
