package target

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHostConns is the default bound on simultaneous connections to one
// target host (docs/operations.md, "Fan-out bounds").
const DefaultHostConns = 6

// HostLimit bounds the connections open at once to each target host (the
// hostname, any port), across every scope and transport of every Client
// built with it: the tool calls of one MCP server, a scan run and a
// monitor's checks alike. A connection holds its host's slot from the dial
// until it is closed; a dial waits, first come first served, for a free
// slot. With a spacing (NewPoliteHostLimit), two slots of one host are
// never taken less than the spacing apart: a slot taken too soon after the
// last one waits for its turn before it is used. It is safe for concurrent
// use.
type HostLimit struct {
	n       int
	spacing time.Duration
	mu      sync.Mutex
	hosts   map[string]*hostSlots
	scopes  map[*Session]struct{} // open scopes, whose idle connections give way to a waiter
	takes   int                   // slots taken, for the sweep of spaced hosts

	// now and sleep are the spacing's clock (tests inject theirs).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

type hostSlots struct {
	open int
	wait []*slotWaiter
	next time.Time // with a spacing: the earliest the next slot may be used
}

type slotWaiter struct {
	ch      chan struct{}
	granted bool
}

// NewHostLimit returns a limit of n simultaneous connections per host
// (DefaultHostConns when n <= 0).
func NewHostLimit(n int) *HostLimit {
	if n <= 0 {
		n = DefaultHostConns
	}
	return &HostLimit{n: n, hosts: map[string]*hostSlots{}, scopes: map[*Session]struct{}{}, now: time.Now, sleep: sleepCtx}
}

// NewPoliteHostLimit is NewHostLimit(n) with at least spacing between two
// slots of one host taken (a monitor's politeness: at most n connections
// open to a host, opened at most once per spacing).
func NewPoliteHostLimit(n int, spacing time.Duration) *HostLimit {
	l := NewHostLimit(n)
	l.spacing = max(spacing, 0)
	return l
}

// Spacing is the least time between two slots of one host.
func (l *HostLimit) Spacing() time.Duration { return l.spacing }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// register and unregister track the open scopes.
func (l *HostLimit) register(s *Session) {
	l.mu.Lock()
	l.scopes[s] = struct{}{}
	l.mu.Unlock()
}

func (l *HostLimit) unregister(s *Session) {
	l.mu.Lock()
	delete(l.scopes, s)
	l.mu.Unlock()
}

// makeRoom closes the idle connections of every open scope, giving their
// slots back: an idle connection kept for reuse never makes a request
// elsewhere wait for its host.
func (l *HostLimit) makeRoom() {
	l.mu.Lock()
	scopes := make([]*Session, 0, len(l.scopes))
	for s := range l.scopes {
		scopes = append(scopes, s)
	}
	l.mu.Unlock()
	for _, s := range scopes {
		s.pooled.CloseIdleConnections()
	}
}

// PerHost is the bound.
func (l *HostLimit) PerHost() int { return l.n }

// Open is the number of slots of host held now (open connections and
// reservations).
func (l *HostLimit) Open(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.hosts[strings.ToLower(host)]; h != nil {
		return h.open
	}
	return 0
}

// Waiting is the number of dials and requests waiting in line for a slot
// of host now.
func (l *HostLimit) Waiting(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.hosts[strings.ToLower(host)]; h != nil {
		return len(h.wait)
	}
	return 0
}

// acquire takes a slot of host, waiting in line until one is free or ctx
// ends, then, with a spacing, waits for the host's turn.
func (l *HostLimit) acquire(ctx context.Context, host string) error {
	if err := l.take(ctx, host); err != nil {
		return err
	}
	if l.spacing == 0 {
		return nil
	}
	l.mu.Lock()
	h := l.slots(host)
	now := l.now()
	at := h.next
	if at.Before(now) {
		at = now
	}
	h.next = at.Add(l.spacing)
	l.takes++
	if l.takes%4096 == 0 {
		l.sweep(now)
	}
	l.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		if err := l.sleep(ctx, d); err != nil {
			l.release(host)
			return err
		}
	}
	return nil
}

// sweep forgets the spaced hosts that hold nothing and whose turn has come
// (gc keeps a host whose next turn is still ahead).
func (l *HostLimit) sweep(now time.Time) {
	for host, h := range l.hosts {
		if h.open == 0 && len(h.wait) == 0 && !now.Before(h.next) {
			delete(l.hosts, host)
		}
	}
}

// take takes a slot of host, waiting in line until one is free or ctx ends.
func (l *HostLimit) take(ctx context.Context, host string) error {
	l.mu.Lock()
	h := l.slots(host)
	if h.open < l.n && len(h.wait) == 0 {
		h.open++
		l.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ch: make(chan struct{})}
	h.wait = append(h.wait, w)
	l.mu.Unlock()
	l.makeRoom()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.granted {
		// The slot was handed over as ctx ended: give it back.
		l.mu.Unlock()
		l.release(host)
		return ctx.Err()
	}
	for i, x := range h.wait {
		if x == w {
			h.wait = append(h.wait[:i], h.wait[i+1:]...)
			break
		}
	}
	l.gc(host, h)
	l.mu.Unlock()
	return ctx.Err()
}

// release frees a slot of host, handing it to the first in line.
func (l *HostLimit) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.slots(host)
	if len(h.wait) > 0 {
		w := h.wait[0]
		h.wait = h.wait[1:]
		w.granted = true
		close(w.ch)
		return
	}
	h.open--
	l.gc(host, h)
}

func (l *HostLimit) slots(host string) *hostSlots {
	h := l.hosts[host]
	if h == nil {
		h = &hostSlots{}
		l.hosts[host] = h
	}
	return h
}

func (l *HostLimit) gc(host string, h *hostSlots) {
	if h.open == 0 && len(h.wait) == 0 && (l.spacing == 0 || !l.now().Before(h.next)) {
		delete(l.hosts, host)
	}
}

// limitHost is a dial address's host (lowercased, without the port): the
// key of the limit.
func limitHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return strings.ToLower(host)
}

// reservation is a slot taken for one request before its deadline starts,
// so waiting for the host's turn never counts against the target's time.
// The request's dial uses it; when no dial did (a reused connection), it is
// given back when the request ends.
type reservation struct {
	l    *HostLimit
	host string
	used atomic.Bool
}

type reservationKey struct{}

// take hands the reserved slot to a dial to host (once).
func (r *reservation) take(host string) bool {
	return r != nil && r.host == host && r.used.CompareAndSwap(false, true)
}

// done gives the slot back unless a dial took it.
func (r *reservation) done() {
	if r != nil && r.used.CompareAndSwap(false, true) {
		r.l.release(r.host)
	}
}

// limitedDial wraps dial so that every connection holds a slot of its host
// until it is closed: the request's reservation when it carries one for the
// host, else a free slot, else one waited for in line.
func (l *HostLimit) limitedDial(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host := limitHost(addr)
		res, _ := ctx.Value(reservationKey{}).(*reservation)
		if !res.take(host) {
			if err := l.acquire(ctx, host); err != nil {
				return nil, err
			}
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			l.release(host)
			return nil, err
		}
		return &slotConn{Conn: conn, release: func() { l.release(host) }}, nil
	}
}

// slotConn gives its slot back when closed (once).
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// heldConns counts a Session's open connections per host.
type heldConns struct {
	mu    sync.Mutex
	n     map[string]int
	first map[string][]chan struct{} // closed when the scope opens a connection to the host
}

// untilHeld returns a context that ends with ctx or as soon as the scope
// holds a connection to host (a request of the scope waiting for a
// reservation then needs none: it queues for the scope's connection), and
// the function that releases it.
func (h *heldConns) untilHeld(ctx context.Context, host string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan struct{})
	h.mu.Lock()
	if h.first == nil {
		h.first = map[string][]chan struct{}{}
	}
	h.first[host] = append(h.first[host], ch)
	h.mu.Unlock()
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		h.mu.Lock()
		for i, c := range h.first[host] {
			if c == ch {
				h.first[host] = append(h.first[host][:i], h.first[host][i+1:]...)
				break
			}
		}
		if len(h.first[host]) == 0 {
			delete(h.first, host)
		}
		h.mu.Unlock()
	}
}

func (h *heldConns) holds(host string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[host] > 0
}

// track counts conn to host until it is closed.
func (h *heldConns) track(host string, conn net.Conn) net.Conn {
	h.mu.Lock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[host]++
	for _, ch := range h.first[host] {
		close(ch)
	}
	delete(h.first, host)
	h.mu.Unlock()
	return &slotConn{Conn: conn, release: func() {
		h.mu.Lock()
		h.n[host]--
		if h.n[host] == 0 {
			delete(h.n, host)
		}
		h.mu.Unlock()
	}}
}
