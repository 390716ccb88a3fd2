package target

import (
	"context"
	"net"
	"net/url"
	"sync"
)

// spares are TCP connections a Session dials ahead of need: while a probe's
// HEAD goes out on an HTTP/1 connection that will not be reused, the
// connection the next probe needs is dialled at the same time, so its TCP
// handshake overlaps the HEAD's round trip instead of following it. A spare
// is dialled by the guarded dialer, like every connection, carries nothing
// until the transport takes it for the next request (and does the TLS
// handshake on it then), and is closed with the scope if nothing took it.
type spares struct {
	mu      sync.Mutex
	pending map[string]chan dialed // by dial address (host:port)
	ctx     context.Context        // ends with the scope
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type dialed struct {
	conn net.Conn
	err  error
}

func newSpares() *spares {
	ctx, cancel := context.WithCancel(context.Background())
	return &spares{pending: map[string]chan dialed{}, ctx: ctx, cancel: cancel}
}

// dialAddr is the address the transport dials for rawURL: the host and the
// port, the scheme's default when none is given.
func dialAddr(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// prepare starts dialling a spare connection to addr, unless one is already
// waiting there.
func (sp *spares) prepare(dial func(context.Context, string, string) (net.Conn, error), addr string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if _, ok := sp.pending[addr]; ok || sp.ctx.Err() != nil || addr == "" {
		return
	}
	ch := make(chan dialed, 1)
	sp.pending[addr] = ch
	sp.wg.Go(func() {
		conn, err := dial(sp.ctx, "tcp", addr)
		ch <- dialed{conn, err}
	})
}

// take returns the spare connection to addr, if one was prepared and its
// dial succeeded.
func (sp *spares) take(ctx context.Context, addr string) (net.Conn, bool) {
	sp.mu.Lock()
	ch, ok := sp.pending[addr]
	delete(sp.pending, addr)
	sp.mu.Unlock()
	if !ok {
		return nil, false
	}
	select {
	case d := <-ch:
		if d.err != nil {
			return nil, false
		}
		return d.conn, true
	case <-ctx.Done():
		// The spare is left to close; the caller dials (and fails) itself.
		go func() {
			if d := <-ch; d.conn != nil {
				d.conn.Close()
			}
		}()
		return nil, false
	}
}

// close ends every dial in progress and closes every spare nobody took.
func (sp *spares) close() {
	sp.mu.Lock()
	sp.cancel()
	left := sp.pending
	sp.pending = map[string]chan dialed{}
	sp.mu.Unlock()
	sp.wg.Wait()
	for _, ch := range left {
		if d := <-ch; d.conn != nil {
			d.conn.Close()
		}
	}
}
