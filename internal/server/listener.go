package server

import (
	"net"
	"sync"
)

// DefaultMaxConns is serve's default cap on open client connections. It is
// sized for a 2-core host under the common 1,024 open-file limit: a paid
// connection may hold two more descriptors while its op runs (the target
// fetch and the RPC node or facilitator), so 256 connections stay under
// about 770 descriptors, beside the store's. Two cores are kept busy by far
// fewer connections: the ops wait on the network, not the CPU.
const DefaultMaxConns = 256

// LimitListener caps the connections a listener keeps open at once: Accept
// waits while n accepted connections are open, so a crowd of slow clients
// waits in the kernel's backlog instead of holding unbounded descriptors
// and goroutines. A slot is freed when its connection is closed.
type LimitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// NewLimitListener caps l at n open connections (n ≥ 1).
func NewLimitListener(l net.Listener, n int) *LimitListener {
	return &LimitListener{Listener: l, slots: make(chan struct{}, max(n, 1)), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *LimitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, free: func() { <-l.slots }}, nil
}

// Open is the number of accepted connections not closed yet.
func (l *LimitListener) Open() int { return len(l.slots) }

// Close stops accepting; a waiting Accept returns net.ErrClosed.
func (l *LimitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
