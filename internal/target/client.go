package target

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
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
}

// Client fetches targets under fixed limits. It is safe for concurrent use.
type Client struct {
	hc        *http.Client
	userAgent string
	timeout   time.Duration
	bodyCap   int
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
	dialer := &net.Dialer{Timeout: o.Timeout}
	if !o.AllowPrivate {
		dialer.Control = guardControl
	}
	tr := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    o.Timeout,
		DisableKeepAlives:      true, // one connection per request, nothing pooled
		DisableCompression:     true, // no Accept-Encoding; the body stays as received
		MaxResponseHeaderBytes: o.HeaderCap,
	}
	return &Client{
		hc: &http.Client{
			Transport: tr,
			// The 3xx itself is the capture: redirects are never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       o.Timeout,
		},
		userAgent: o.UserAgent,
		timeout:   o.Timeout,
		bodyCap:   o.BodyCap,
	}
}

// Request is one request to a target. Header holds only what a probe names;
// Host and User-Agent are set by the client.
type Request struct {
	Method string // GET (when empty), HEAD or POST
	URL    string
	Header map[string]string
	Body   []byte
}

// Get fetches url once with a plain unauthenticated GET.
func (c *Client) Get(ctx context.Context, url string) capture.Capture {
	return c.Do(ctx, Request{Method: http.MethodGet, URL: url})
}

// Do sends one request and reports what it observed. It never returns an
// error: a refused, broken, slow or oversized target is an Outcome. A request
// that this package will not send (URL outside the policy, a method other than
// GET, HEAD or POST, or a header the client owns) is Outcome failed, unsent.
func (c *Client) Do(ctx context.Context, r Request) capture.Capture {
	return c.do(ctx, r, c.userAgent)
}

// reservedHeaders are set by the client or must never be sent to a target.
var reservedHeaders = map[string]bool{
	"Host": true, "User-Agent": true, "Cookie": true, "Authorization": true,
	"Proxy-Authorization": true, "Accept-Encoding": true, "Connection": true,
	"Content-Length": true, "Transfer-Encoding": true,
}

func (c *Client) do(ctx context.Context, r Request, userAgent string) capture.Capture {
	failed := capture.Capture{Outcome: capture.Failed}
	if CheckURL(r.URL) != nil {
		return failed
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodPost {
		return failed
	}
	header := make(http.Header, len(r.Header)+1)
	named := make(map[string]bool, len(r.Header))
	for k, v := range r.Header {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if reservedHeaders[ck] || named[ck] {
			return failed
		}
		named[ck] = true
		// Stored as named (not canonicalised) so the wire carries the
		// published spelling, e.g. PAYMENT-SIGNATURE.
		header[k] = []string{v}
	}
	header["User-Agent"] = []string{userAgent}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		return failed
	}
	req.Header = header

	resp, err := c.hc.Do(req)
	if err != nil {
		return capture.Capture{Outcome: classify(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.bodyCap)+1))
	if len(data) > c.bodyCap {
		// Status and headers arrived; the body is past the cap and not kept.
		return capture.Capture{Outcome: capture.OverCap, Status: resp.StatusCode, Header: capture.Header(resp.Header)}
	}
	if err != nil {
		// An exchange that did not finish is not a response: keep nothing of it.
		return capture.Capture{Outcome: classify(err)}
	}
	if data == nil {
		data = []byte{}
	}
	return capture.Capture{Outcome: capture.OK, Status: resp.StatusCode, Header: capture.Header(resp.Header), Body: data}
}

// classify tells a timeout (the deadline passed, in any phase) from any other
// failure (refused, reset, guard refusal, malformed or oversized headers).
func classify(err error) capture.Outcome {
	if errors.Is(err, context.DeadlineExceeded) {
		return capture.Timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return capture.Timeout
	}
	return capture.Failed
}
