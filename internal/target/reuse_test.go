package target

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// conns counts the connections a test target accepted and closed.
type conns struct {
	opened atomic.Int32
	news   chan struct{} // one value per accepted connection
	closed chan struct{} // one value per closed connection
}

func newConns() *conns {
	return &conns{news: make(chan struct{}, 1024), closed: make(chan struct{}, 1024)}
}

func (c *conns) hook(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		c.opened.Add(1)
		c.news <- struct{}{}
	case http.StateClosed, http.StateHijacked:
		c.closed <- struct{}{}
	}
}

// waitClosed waits until n connections have closed. The bound only turns a
// hang into a failure; no assertion depends on how long it takes.
func (c *conns) waitClosed(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for i := range n {
		select {
		case <-c.closed:
		case <-deadline:
			t.Fatalf("%d of %d connections closed", i, n)
		}
	}
}

// countedServer is an httptest server whose connections are counted.
func countedServer(t *testing.T, h http.Handler) (*httptest.Server, *conns) {
	t.Helper()
	c := newConns()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = c.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// answer402 answers every request with a small 402 naming its method.
func answer402(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusPaymentRequired)
	_, _ = io.WriteString(w, r.Method)
}

func TestSessionReusesOneConnection(t *testing.T) {
	t.Run("memo's two GETs share one connection", func(t *testing.T) {
		srv, n := countedServer(t, http.HandlerFunc(answer402))
		s := privateClient().Session()
		for range 2 {
			if got := s.Get(context.Background(), srv.URL); got.Outcome != capture.OK || got.Status != 402 {
				t.Fatalf("capture = %v %d", got.Outcome, got.Status)
			}
		}
		s.Close()
		if got := n.opened.Load(); got != 1 {
			t.Fatalf("the target accepted %d connections, want 1", got)
		}
		n.waitClosed(t, 1) // Close closed it
	})
	t.Run("the probes use two connections over HTTP/1: none is reused after HEAD", func(t *testing.T) {
		srv, n := countedServer(t, http.HandlerFunc(answer402))
		got := privateClient().RunProbes(context.Background(), srv.URL)
		for i, c := range got {
			if c.Outcome != capture.OK || c.Status != 402 {
				t.Fatalf("probe %d = %v %d", i, c.Outcome, c.Status)
			}
		}
		if got := n.opened.Load(); got != 2 {
			t.Fatalf("the target accepted %d connections, want 2", got)
		}
		n.waitClosed(t, 2) // RunProbes closed its scope
	})
	t.Run("a Client alone keeps no connection", func(t *testing.T) {
		srv, n := countedServer(t, http.HandlerFunc(answer402))
		c := privateClient()
		for range 3 {
			c.Get(context.Background(), srv.URL)
		}
		if got := n.opened.Load(); got != 3 {
			t.Fatalf("the target accepted %d connections, want 3", got)
		}
		n.waitClosed(t, 3)
	})
	t.Run("two sessions never share a connection", func(t *testing.T) {
		srv, n := countedServer(t, http.HandlerFunc(answer402))
		c := privateClient()
		a, b := c.Session(), c.Session()
		a.Get(context.Background(), srv.URL)
		b.Get(context.Background(), srv.URL)
		a.Get(context.Background(), srv.URL)
		b.Get(context.Background(), srv.URL)
		a.Close()
		b.Close()
		if got := n.opened.Load(); got != 2 {
			t.Fatalf("the target accepted %d connections, want 2 (one per session)", got)
		}
		n.waitClosed(t, 2)
	})
}

func TestClosedSessionSendsNothing(t *testing.T) {
	srv, n := countedServer(t, http.HandlerFunc(answer402))
	s := privateClient().Session()
	s.Close()
	if got := s.Get(context.Background(), srv.URL); got.Outcome != capture.Failed || got.Error != capture.ProtocolError {
		t.Fatalf("capture = %+v, want failed unsent", got)
	}
	if got := n.opened.Load(); got != 0 {
		t.Fatalf("a closed session dialled %d connections", got)
	}
}

func TestPoolIsBoundedAndClosedWithTheRun(t *testing.T) {
	srv, n := countedServer(t, http.HandlerFunc(answer402))
	p := privateClient().Pool(2)
	const rounds, width = 5, 4
	for range rounds {
		var wg sync.WaitGroup
		for range width {
			wg.Go(func() {
				if got := p.Get(context.Background(), srv.URL); got.Outcome != capture.OK {
					t.Errorf("capture = %v", got.Outcome)
				}
			})
		}
		wg.Wait()
	}
	opened := int(n.opened.Load())
	// Never more than the pool's bound, though four requests were in flight
	// at once: they waited for a connection rather than dialling past it.
	if opened > 2 || opened < 1 {
		t.Fatalf("the target accepted %d connections for %d requests, want at most 2", opened, rounds*width)
	}
	p.Close()
	n.waitClosed(t, opened)
}

func TestServerConnectionCloseIsHonoured(t *testing.T) {
	srv, n := countedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		answer402(w, r)
	}))
	s := privateClient().Session()
	defer s.Close()
	for i := range 3 {
		if got := s.Get(context.Background(), srv.URL); got.Outcome != capture.OK || got.Status != 402 {
			t.Fatalf("request %d: capture = %v %d", i, got.Outcome, got.Status)
		}
	}
	if got := n.opened.Load(); got != 3 {
		t.Fatalf("the target accepted %d connections, want 3 (it closes each)", got)
	}
}

// rawTarget is a loopback HTTP/1.1 target written by hand, so a test can do
// what net/http's server never does. serve is called for each request with
// the connection's index and the request's index on that connection; it
// writes the answer itself and returns false to close the connection.
type rawTarget struct {
	ln       net.Listener
	mu       sync.Mutex
	requests []string // "conn/req METHOD", in arrival order
	wg       sync.WaitGroup
}

func newRawTarget(t *testing.T, serve func(conn, req int, r *http.Request, c net.Conn) bool) *rawTarget {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rt := &rawTarget{ln: ln}
	rt.wg.Go(func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			rt.wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for j := 0; ; j++ {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, r.Body)
					rt.mu.Lock()
					rt.requests = append(rt.requests, fmt.Sprintf("%d/%d %s", i, j, r.Method))
					rt.mu.Unlock()
					if !serve(i, j, r, c) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); rt.wg.Wait() })
	return rt
}

func (rt *rawTarget) url() string { return "http://" + rt.ln.Addr().String() + "/paid" }

func (rt *rawTarget) seen() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]string(nil), rt.requests...)
}

const keepAlive402 = "HTTP/1.1 402 Payment Required\r\nContent-Length: 2\r\n\r\n{}"

// A target that keeps the connection after its first answer, then closes it
// upon the next request without answering: what a target that closes idle
// connections looks like when the close crosses our next request.
func TestReusedConnectionClosedByTheTargetIsRetriedOnce(t *testing.T) {
	closesSecond := func(conn, req int, r *http.Request, c net.Conn) bool {
		if req == 1 {
			return false // read, never answered, closed
		}
		_, _ = io.WriteString(c, keepAlive402)
		return true
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			rt := newRawTarget(t, closesSecond)
			s := privateClient().Session()
			defer s.Close()
			for i := range 2 {
				got := s.Do(context.Background(), Request{Method: method, URL: rt.url(), Body: []byte("{}")})
				if got.Outcome != capture.OK || got.Status != 402 {
					t.Fatalf("request %d: capture = %v %d (%s)", i, got.Outcome, got.Status, got.Error)
				}
			}
			// The second request reached the closed connection once, then a
			// fresh one. For GET net/http's transport replays it itself; for
			// POST it does not, and the session does, once.
			want := []string{"0/0 " + method, "0/1 " + method, "1/0 " + method}
			if got := rt.seen(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("the target saw %v, want %v", got, want)
			}
		})
	}
}

// garbageOnReuse answers a 402 and keeps the connection, then answers the
// first connection's second request with bytes that are no HTTP response.
func garbageOnReuse(conn, req int, r *http.Request, c net.Conn) bool {
	if conn == 0 && req == 1 {
		_, _ = io.WriteString(c, "NOT-HTTP\r\n\r\n")
		return false
	}
	_, _ = io.WriteString(c, keepAlive402)
	return true
}

// What comes back on a reused connection may be no response at all: bytes
// the target sent after its previous answer, which net/http reads as this
// answer when it reuses the connection before it has seen them. A GET is
// sent once more on a connection of its own; the same bytes on a fresh
// connection are the target's answer.
func TestUnparsableAnswerOnAReusedConnectionIsRetriedOnceForAGet(t *testing.T) {
	rt := newRawTarget(t, garbageOnReuse)
	s := privateClient().Session()
	defer s.Close()
	for i := range 2 {
		if got := s.Get(context.Background(), rt.url()); got.Outcome != capture.OK || got.Status != 402 {
			t.Fatalf("request %d: capture = %v %d (%s)", i, got.Outcome, got.Status, got.Error)
		}
	}
	want := []string{"0/0 GET", "0/1 GET", "1/0 GET"}
	if got := rt.seen(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the target saw %v, want %v", got, want)
	}

	garbage := newRawTarget(t, func(conn, req int, r *http.Request, c net.Conn) bool {
		_, _ = io.WriteString(c, "NOT-HTTP\r\n\r\n")
		return false
	})
	s2 := privateClient().Session()
	defer s2.Close()
	if got := s2.Get(context.Background(), garbage.url()); got.Outcome != capture.Failed || got.Error != capture.ProtocolError {
		t.Fatalf("fresh connection: capture = %v (%s), want failed protocol_error", got.Outcome, got.Error)
	}
	if got := garbage.seen(); len(got) != 1 {
		t.Fatalf("the target saw %v, want one GET", got)
	}
}

func TestFailuresThatAreNotRetried(t *testing.T) {
	tests := []struct {
		name  string
		serve func(conn, req int, r *http.Request, c net.Conn) bool
		want  []string
	}{
		{
			// A fresh connection that fails is the target's answer.
			name:  "a fresh connection closed before any response byte",
			serve: func(conn, req int, r *http.Request, c net.Conn) bool { return false },
			want:  []string{"0/0 POST"},
		},
		{
			// What came back on the reused connection is no response, but a
			// POST is not replayed: the target has it.
			name:  "a reused connection answering a POST with no HTTP at all",
			serve: garbageOnReuse,
			want:  []string{"0/0 POST", "0/1 POST"},
		},
		{
			// A response began: the target answered, badly.
			name: "a reused connection closed after the first response byte",
			serve: func(conn, req int, r *http.Request, c net.Conn) bool {
				if req == 1 {
					_, _ = io.WriteString(c, "HTTP/1.1 402 Payment Required\r\nContent-Length: 10\r\n\r\n{}")
					return false
				}
				_, _ = io.WriteString(c, keepAlive402)
				return true
			},
			want: []string{"0/0 POST", "0/1 POST"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRawTarget(t, tt.serve)
			s := privateClient().Session()
			defer s.Close()
			var last capture.Capture
			for range len(tt.want) {
				last = s.Do(context.Background(), Request{Method: http.MethodPost, URL: rt.url(), Body: []byte("{}")})
			}
			if last.Outcome != capture.Failed {
				t.Fatalf("last capture = %v, want failed", last.Outcome)
			}
			if got := rt.seen(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("the target saw %v, want %v", got, tt.want)
			}
		})
	}
}

// quietLog captures the standard logger for one test: net/http's transport
// writes there when a target sends bytes nobody asked for, and those bytes
// are fetched content. The transport writes from its own goroutines, so the
// capture is read under the same lock.
func quietLog(t *testing.T) *lockedLog {
	l := &lockedLog{}
	prev := log.Writer()
	log.SetOutput(writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.buf.Write(p)
	}))
	t.Cleanup(func() { log.SetOutput(prev) })
	return l
}

type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestHeadWithAStrayBodyDoesNotLeakIntoTheNextProbe(t *testing.T) {
	logged := quietLog(t)
	rt := newRawTarget(t, func(conn, req int, r *http.Request, c net.Conn) bool {
		if r.Method == http.MethodHead {
			// A body after a HEAD answer, framed as if it were a response
			// of its own.
			_, _ = io.WriteString(c, "HTTP/1.1 402 Payment Required\r\nContent-Length: 25\r\n\r\n"+
				"HTTP/1.1 200 OK\r\n\r\nSTRAY")
			return true
		}
		_, _ = io.WriteString(c, keepAlive402)
		return true
	})
	got := privateClient().RunProbes(context.Background(), rt.url())
	for i, c := range got {
		if c.Outcome != capture.OK || c.Status != 402 {
			t.Fatalf("probe %d = %v %d, want ok 402", i, c.Outcome, c.Status)
		}
	}
	if len(got[1].Body) != 0 {
		t.Errorf("HEAD kept a body of %d bytes", len(got[1].Body))
	}
	if strings.Contains(logged.String(), "STRAY") {
		t.Errorf("the stray body reached the log: %q", logged.String())
	}
}

// tlsServer is a loopback TLS target; http2Only makes it offer and accept
// nothing but HTTP/2.
func tlsServer(t *testing.T, h http.Handler, http2Only bool) (*httptest.Server, *conns, *x509.CertPool) {
	t.Helper()
	c := newConns()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = c.hook
	if http2Only {
		srv.EnableHTTP2 = true
		p := new(http.Protocols)
		p.SetHTTP2(true)
		srv.Config.Protocols = p
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	if http2Only && !equal(srv.TLS.NextProtos, []string{"h2"}) {
		t.Fatalf("the target offers %v, want only h2", srv.TLS.NextProtos)
	}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return srv, c, roots
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// tlsSeen records the protocol and TLS resumption of each request.
type tlsSeen struct {
	mu   sync.Mutex
	got  []string
	resu []bool
}

func (s *tlsSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.got = append(s.got, r.Method+" "+r.Proto)
	s.resu = append(s.resu, r.TLS != nil && r.TLS.DidResume)
	s.mu.Unlock()
	answer402(w, r)
}

func TestHTTP2OnlyTargetOneConnection(t *testing.T) {
	rec := &tlsSeen{}
	srv, n, roots := tlsServer(t, rec, true)
	c := New(Options{AllowPrivate: true, Timeout: testTimeout, rootCAs: roots})
	got := c.RunProbes(context.Background(), srv.URL+"/paid")
	for i, cp := range got {
		if cp.Outcome != capture.OK || cp.Status != 402 {
			t.Fatalf("probe %d = %v %d (%s)", i, cp.Outcome, cp.Status, cp.Error)
		}
	}
	for _, g := range rec.got {
		if !strings.HasSuffix(g, "HTTP/2.0") {
			t.Fatalf("requests = %v, want all HTTP/2", rec.got)
		}
	}
	if got := n.opened.Load(); got != 1 {
		t.Fatalf("the target accepted %d connections, want 1 (HTTP/2 frames HEAD, so it is reused)", got)
	}
	n.waitClosed(t, 1)

	// The one-shot client speaks HTTP/2 to it too.
	if got := c.Get(context.Background(), srv.URL); got.Outcome != capture.OK {
		t.Fatalf("one-shot GET = %v (%s)", got.Outcome, got.Error)
	}
}

func TestTLSSessionIsResumedWithinTheScope(t *testing.T) {
	rec := &tlsSeen{}
	srv, n, roots := tlsServer(t, rec, false)
	c := New(Options{AllowPrivate: true, Timeout: testTimeout, rootCAs: roots})
	got := c.RunProbes(context.Background(), srv.URL+"/paid")
	for i, cp := range got {
		if cp.Outcome != capture.OK {
			t.Fatalf("probe %d = %v (%s)", i, cp.Outcome, cp.Error)
		}
	}
	if got := n.opened.Load(); got != 2 {
		t.Fatalf("the target accepted %d connections, want 2", got)
	}
	// GET and HEAD on the first connection (a full handshake), the POSTs on
	// the second, which resumed the first's TLS session.
	want := []bool{false, false, true, true, true, true, true}
	if fmt.Sprint(rec.resu) != fmt.Sprint(want) {
		t.Fatalf("resumed = %v, want %v (%v)", rec.resu, want, rec.got)
	}
	// A new scope starts from nothing: no session crosses scopes.
	rec.resu = nil
	c.RunProbes(context.Background(), srv.URL+"/paid")
	if !(len(rec.resu) == 7 && !rec.resu[0]) {
		t.Fatalf("a new scope resumed a session of another: %v", rec.resu)
	}
}

// A spare connection nobody took is closed with its scope; a spare is
// dialled by the guarded dialer like any other.
func TestSpareConnectionsAreClosedWithTheScope(t *testing.T) {
	srv, n := countedServer(t, http.HandlerFunc(answer402))
	s := privateClient().Session()
	s.spares.prepare(s.c.dial, dialAddr(srv.URL))
	select {
	case <-n.news: // the spare is connected (so Close cannot just cancel its dial)
	case <-time.After(time.Minute): // turns a hang into a failure only
		t.Fatal("the spare never connected")
	}
	s.Close()
	n.waitClosed(t, 1)
	if got := n.opened.Load(); got != 1 {
		t.Fatalf("the target accepted %d connections, want the one spare", got)
	}

	guarded := New(Options{Timeout: testTimeout}).Session()
	guarded.spares.prepare(guarded.c.dial, dialAddr(srv.URL))
	if _, ok := guarded.spares.take(context.Background(), dialAddr(srv.URL)); ok {
		t.Fatal("the guard let a spare connection through to loopback")
	}
	guarded.Close()
	if got := n.opened.Load(); got != 1 {
		t.Fatalf("a guarded spare reached the target (%d connections)", got)
	}
}

// A target that sends bytes after a bodiless answer on a reused connection:
// the next request still gets its own answer, on a fresh connection, and the
// bytes never reach the log (net/http would quote them there).
func TestBytesAfterAResponseNeverReachTheLog(t *testing.T) {
	logged := quietLog(t)
	rt := newRawTarget(t, func(conn, req int, r *http.Request, c net.Conn) bool {
		if conn == 0 {
			_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\nSTRAY-AFTER-204")
			return true
		}
		_, _ = io.WriteString(c, keepAlive402)
		return true
	})
	s := privateClient().Session() // New puts the filter in front of quietLog's writer
	defer s.Close()
	first := s.Get(context.Background(), rt.url())
	second := s.Get(context.Background(), rt.url())
	if first.Status != 204 || second.Outcome != capture.OK || second.Status != 402 {
		t.Fatalf("captures = %v %d, %v %d (%s); want 204 then 402", first.Outcome, first.Status, second.Outcome, second.Status, second.Error)
	}
	if strings.Contains(logged.String(), "STRAY") {
		t.Fatalf("fetched bytes reached the log: %q", logged.String())
	}
}

func TestScrubberPassesOtherLines(t *testing.T) {
	var buf bytes.Buffer
	sc := scrubber{&buf}
	sc.Write([]byte("2026/12/01 10:00:00 http: TLS handshake error from 127.0.0.1:1: EOF\n"))
	sc.Write([]byte("2026/12/01 10:00:00 Unsolicited response received on idle HTTP channel starting with \"secret\"; err=<nil>\n"))
	got := buf.String()
	if !strings.Contains(got, "TLS handshake error") || strings.Contains(got, "secret") || !strings.Contains(got, "2026/12/01 10:00:00 net/http: a target sent bytes") {
		t.Fatalf("log = %q", got)
	}
}
