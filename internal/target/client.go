package target

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// Published fetch limits (target_fetch in the criteria) and our header cap.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultBodyCap   = capture.BodyCapBytes
	DefaultHeaderCap = 32 << 10
	// DefaultUserAgent is sent when Options.UserAgent is empty, so the
	// transport never substitutes its own.
	DefaultUserAgent = "payability"
)

// Options are every limit of a Client, set once in New. The zero value is the
// published policy: guarded, 5 s, 65,536-byte body cap, 32 KiB header cap.
type Options struct {
	AllowPrivate bool          // let the guard through to loopback and private addresses (a seller's staging)
	UserAgent    string        // e.g. "payability/0.1.0"; probes always send ProbeUserAgent
	Timeout      time.Duration // the whole exchange of one request: connect, headers, body
	BodyCap      int           // response body bytes kept; one more byte means over cap
	HeaderCap    int64         // response header bytes accepted; more is a failed fetch
	// HostLimit bounds the simultaneous connections to one host; Clients
	// given the same one share it. nil: a limit of DefaultHostConns of this
	// Client's own.
	HostLimit *HostLimit

	// resolver replaces the system resolver (tests: a name that cannot
	// resolve, without a packet leaving the machine).
	resolver *net.Resolver
	// rootCAs replaces the system roots (tests: a loopback certificate).
	rootCAs *x509.CertPool
}

// Client fetches targets under fixed limits. It is safe for concurrent use.
//
// A Client itself keeps no connection: Get and Do open one connection per
// request and close it after. Connections are reused only inside a Session,
// a scope that one job owns (one op, or one scan run) and closes when it
// ends; RunProbes on a Client runs the seven probes in a Session of their own.
type Client struct {
	opts    Options
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	oneShot *http.Client
}

// New builds a Client with every target limit in one place.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.BodyCap <= 0 {
		o.BodyCap = DefaultBodyCap
	}
	if o.HeaderCap <= 0 {
		o.HeaderCap = DefaultHeaderCap
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	// The guard runs in Control, on the exact address of every new
	// connection, in every transport built from this dialer; a reused
	// connection was checked when it was dialled.
	dialer := &net.Dialer{Timeout: o.Timeout, Resolver: o.resolver}
	if !o.AllowPrivate {
		dialer.Control = guardControl
	}
	scrubTransportLog()
	if o.HostLimit == nil {
		o.HostLimit = NewHostLimit(DefaultHostConns)
	}
	c := &Client{opts: o, dial: o.HostLimit.limitedDial(dialer.DialContext)}
	c.oneShot = c.requestClient(c.transport(0, nil, c.dial))
	return c
}

// transport builds one transport under the client's limits. idlePerHost 0
// means no keep-alive: one connection per request, closed after it.
func (c *Client) transport(idlePerHost int, sessions tls.ClientSessionCache, dial func(context.Context, string, string) (net.Conn, error)) *http.Transport {
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetHTTP2(true) // over TLS, when the target offers h2 by ALPN
	tr := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            dial,
		TLSClientConfig:        &tls.Config{ClientSessionCache: sessions, RootCAs: c.opts.rootCAs},
		TLSHandshakeTimeout:    c.opts.Timeout,
		DisableCompression:     true, // no Accept-Encoding; the body stays as received
		MaxResponseHeaderBytes: c.opts.HeaderCap,
		Protocols:              protos,
	}
	if idlePerHost <= 0 {
		tr.DisableKeepAlives = true
	} else {
		// The bound is on every connection to a host, not only idle ones:
		// the job's requests to one host never hold more than this many
		// connections at once (a request waits for one to be free rather
		// than dialling past the bound).
		tr.MaxIdleConnsPerHost = idlePerHost
		tr.MaxConnsPerHost = idlePerHost
		tr.IdleConnTimeout = 30 * time.Second
	}
	return tr
}

func (c *Client) httpClient(tr *http.Transport) *http.Client {
	hc := c.requestClient(tr)
	hc.Timeout = c.opts.Timeout
	return hc
}

// requestClient is httpClient without a timeout of its own, for do's
// requests: each carries the fetch's deadline in its context (connect,
// headers and body alike), so a second timer per request would only cost.
func (c *Client) requestClient(tr *http.Transport) *http.Client {
	return &http.Client{
		Transport: tr,
		// The 3xx itself is the capture: redirects are never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Scope is one job's connection scope: what Session and Pool return, seen
// through an interface so callers that wrap a fetcher can wrap a scope too.
// (A Client has no method that returns one: a type that embeds a Client to
// wrap its requests must not open a scope that bypasses its own methods.)
type Scope interface {
	Get(ctx context.Context, url string) capture.Capture
	Do(ctx context.Context, r Request) capture.Capture
	RunProbes(ctx context.Context, url string) []capture.Capture
	Close()
}

// Session opens a connection scope for one op: its requests reuse
// connections (keep-alive, HTTP/2 when the target offers it by ALPN) and TLS
// sessions, never anyone else's. Close it when the op ends.
func (c *Client) Session() *Session { return c.Pool(1) }

// Pool opens a connection scope shared by the ops of one job that runs many
// at once (a scan run): at most idlePerHost connections per host (at least
// 1), busy or idle; a retry after a reused connection failed takes one more,
// closed after it. Close the scope when the job ends.
func (c *Client) Pool(idlePerHost int) *Session {
	// Never more pooled connections to a host than the host limit: the
	// scope's requests queue for its own connections rather than for slots.
	idlePerHost = min(max(idlePerHost, 1), c.opts.HostLimit.PerHost())
	sessions := tls.NewLRUClientSessionCache(64)
	s := &Session{c: c, spares: newSpares()}
	// Every connection of the scope is counted as the scope's (hostlimit.go).
	// A dial still waiting for its host's slot when the scope closes gives
	// up: nothing of the scope may connect after it.
	s.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(s.spares.ctx, stop)()
		conn, err := c.dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return s.held.track(limitHost(addr), conn), nil
	}
	// A new connection is a spare dialled ahead (spare.go) when one is
	// waiting for its address, else dialled now; both by the guarded dialer.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if conn, ok := s.spares.take(ctx, addr); ok {
			return conn, nil
		}
		return s.dial(ctx, network, addr)
	}
	s.pooled = c.requestClient(c.transport(idlePerHost, sessions, dial))
	c.opts.HostLimit.register(s)
	// A retry goes out on a connection of its own (same dialer, same guard,
	// same TLS session cache), never on another pooled one.
	s.fresh = c.requestClient(c.transport(0, sessions, s.dial))
	return s
}

// Request is one request to a target. Header holds only what a probe names;
// Host and User-Agent are set by the client.
type Request struct {
	Method string // GET (when empty), HEAD or POST
	URL    string
	Header map[string]string
	Body   []byte
}

// Get fetches url once with a plain unauthenticated GET, on a connection of
// its own.
func (c *Client) Get(ctx context.Context, url string) capture.Capture {
	return c.Do(ctx, Request{Method: http.MethodGet, URL: url})
}

// Do sends one request on a connection of its own and reports what it
// observed. It never returns an error: a refused, broken, slow or oversized
// target is an Outcome. A request that this package will not send (URL
// outside the policy, a method other than GET, HEAD or POST, or a header the
// client owns) is Outcome failed, unsent.
func (c *Client) Do(ctx context.Context, r Request) capture.Capture {
	return c.do(ctx, r, c.opts.UserAgent, nil)
}

// Session is one job's connection scope (see Client.Session and Client.Pool).
// It is safe for concurrent use. After Close its requests fail unsent.
type Session struct {
	c      *Client
	pooled *http.Client
	fresh  *http.Client
	closed atomic.Bool
	// h2 holds the origins that answered over HTTP/2 in this scope.
	h2     sync.Map
	spares *spares
	// dial is the client's dial, counting the scope's connections in held.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	held heldConns
}

// Get fetches url once with a plain unauthenticated GET, reusing a
// connection of this scope when one is idle.
func (s *Session) Get(ctx context.Context, url string) capture.Capture {
	return s.Do(ctx, Request{Method: http.MethodGet, URL: url})
}

// Do is Client.Do on this scope's connections.
func (s *Session) Do(ctx context.Context, r Request) capture.Capture {
	return s.c.do(ctx, r, s.c.opts.UserAgent, s)
}

// Close ends the scope: every idle connection is closed now, and so is any
// connection still busy as soon as its exchange ends (none is, once the job
// that owns the scope has returned).
func (s *Session) Close() {
	s.closed.Store(true)
	s.c.opts.HostLimit.unregister(s)
	s.spares.close()
	s.pooled.CloseIdleConnections()
	s.fresh.CloseIdleConnections()
}

// isH2 reports whether the origin of rawURL has answered over HTTP/2 in
// this scope.
func (s *Session) isH2(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	_, ok := s.h2.Load(u.Scheme + "://" + u.Host)
	return ok
}

// reservedHeaders are set by the client or must never be sent to a target.
var reservedHeaders = map[string]bool{
	"Host": true, "User-Agent": true, "Cookie": true, "Authorization": true,
	"Proxy-Authorization": true, "Accept-Encoding": true, "Connection": true,
	"Content-Length": true, "Transfer-Encoding": true,
}

// attempt records, through the request's trace, what the exchange did with
// its connection.
type attempt struct {
	reused    atomic.Bool // the last connection taken had carried a request before
	firstByte atomic.Bool // a response byte arrived
	unparsed  atomic.Bool // bytes arrived but no response could be read from them
	tlsFailed atomic.Bool // a TLS handshake ended in an error
}

func (a *attempt) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn:              func(info httptrace.GotConnInfo) { a.reused.Store(info.Reused) },
		GotFirstResponseByte: func() { a.firstByte.Store(true) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				a.tlsFailed.Store(true)
			}
		},
	}
}

func unsent() capture.Capture {
	return capture.Capture{Outcome: capture.Failed, Error: capture.ProtocolError}
}

// do sends one request: on a fresh connection when s is nil, else on the
// scope's connections.
func (c *Client) do(ctx context.Context, r Request, userAgent string, s *Session) capture.Capture {
	u, err := checkURL(r.URL)
	if err != nil {
		return unsent()
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodPost {
		return unsent()
	}
	header := make(http.Header, len(r.Header)+1)
	named := make(map[string]bool, len(r.Header))
	for k, v := range r.Header {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if reservedHeaders[ck] || named[ck] {
			return unsent()
		}
		named[ck] = true
		// Stored as named (not canonicalised) so the wire carries the
		// published spelling, e.g. PAYMENT-SIGNATURE.
		header[k] = []string{v}
	}
	header["User-Agent"] = []string{userAgent}

	// The host's turn is waited for before the deadline starts: a scope that
	// already holds a connection to the host reuses it (or waits inside its
	// own exchange); anything else reserves a slot now.
	if host := strings.ToLower(u.Hostname()); s == nil || !s.held.holds(host) {
		wait, done := ctx, func() {}
		if s != nil {
			wait, done = s.held.untilHeld(ctx, host)
		}
		res := &reservation{l: c.opts.HostLimit, host: host}
		err := res.l.acquire(wait, host)
		done()
		switch {
		case err == nil:
			defer res.done()
			ctx = context.WithValue(ctx, reservationKey{}, res)
		case ctx.Err() != nil:
			return failure(ctx.Err(), &attempt{})
		}
		// Otherwise the scope came to hold a connection to the host while
		// this request waited: it goes on without a reservation.
	}

	// One deadline for the fetch, retry included: reuse never makes a fetch
	// longer than the published timeout.
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	// Both attempts share header: net/http only reads a request's header (a
	// RoundTripper must not change it, and nothing here does), and
	// concurrent reads of a map are safe.
	build := func() (*http.Request, *attempt, error) {
		var body io.Reader
		if r.Body != nil {
			body = bytes.NewReader(r.Body)
		}
		a := &attempt{}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, a.trace()), method, r.URL, body)
		if err != nil {
			return nil, nil, err
		}
		req.Header = header
		return req, a, nil
	}

	if s == nil {
		req, a, err := build()
		if err != nil {
			return unsent()
		}
		return c.exchange(c.oneShot, req, a, nil)
	}
	if s.closed.Load() {
		return unsent()
	}
	req, a, err := build()
	if err != nil {
		return unsent()
	}
	origin := req.URL.Scheme + "://" + req.URL.Host
	if method == http.MethodHead {
		// An HTTP/1 response to HEAD has no framing of its own: bytes a
		// target sends after it (a stray body) would be read as the answer
		// to the next request. Its connection is not reused. HTTP/2 frames
		// every response, so there it is.
		if _, ok := s.h2.Load(origin); !ok {
			req.Close = true
		}
	}
	got := c.exchange(s.pooled, req, a, s)
	if got.Outcome == capture.Failed && a.reused.Load() && ctx.Err() == nil &&
		(!a.firstByte.Load() || (a.unparsed.Load() && method != http.MethodPost)) {
		// The reused connection failed before any response byte: the target
		// closed it while idle (or never read the request). Or, for a GET or
		// HEAD (idempotent, RFC 9110 §9.2.2), what came back was no response
		// at all: bytes the target sent after its previous answer, read as
		// this one's (net/http drops such a connection only when it sees the
		// bytes while the connection is idle, which races with its reuse).
		// Once more, on a connection of its own; never for any other failure.
		req, a, err := build()
		if err != nil {
			return unsent()
		}
		got = c.exchange(s.fresh, req, a, s)
	}
	return got
}

// exchange sends req on hc and reads the response under the body cap.
func (c *Client) exchange(hc *http.Client, req *http.Request, a *attempt, s *Session) capture.Capture {
	resp, err := hc.Do(req)
	if err != nil {
		got := failure(err, a)
		if a.firstByte.Load() && got.Outcome == capture.Failed && got.Error == capture.ProtocolError {
			a.unparsed.Store(true)
		}
		return got
	}
	defer resp.Body.Close()
	if s != nil && resp.ProtoMajor == 2 {
		s.h2.Store(req.URL.Scheme+"://"+req.URL.Host, true)
	}
	data, err := readBody(resp.Body, resp.ContentLength, c.opts.BodyCap)
	if len(data) > c.opts.BodyCap {
		// Status and headers arrived; the body is past the cap and not kept.
		// Closing the body early also drops the connection: nothing is read
		// past the cap to make it reusable.
		return capture.Capture{Outcome: capture.OverCap, Status: resp.StatusCode, Header: capture.Header(resp.Header)}
	}
	if err != nil {
		// An exchange that did not finish is not a response: keep nothing of it.
		return failure(err, a)
	}
	if data == nil {
		data = []byte{}
	}
	return capture.Capture{Outcome: capture.OK, Status: resp.StatusCode, Header: capture.Header(resp.Header), Body: data}
}

// failure is the capture of an exchange that ended in err.
func failure(err error, a *attempt) capture.Capture {
	out, why := classify(err, a)
	return capture.Capture{Outcome: out, Error: why}
}
