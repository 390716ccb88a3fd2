package target

import (
	"errors"
	"io"
	"net/http"
)

// ErrBodyOverCap is a response body read past a StreamClient's cap.
var ErrBodyOverCap = errors.New("target: response body over the cap")

// StreamClient is an http.Client under this Client's guard and limits, for
// a protocol client that reads the responses itself (the MCP SDK's
// streamable HTTP transport): the same guarded dialer, no proxy, no
// redirects, the header cap, one connection per request, each exchange
// within the timeout, and each response body failing once it is past
// maxBody bytes (never cut silently).
func (c *Client) StreamClient(maxBody int64) *http.Client {
	hc := c.httpClient(c.transport(0, nil, c.dial))
	hc.Transport = cappedTransport{hc.Transport, maxBody, c.opts.UserAgent}
	return hc
}

type cappedTransport struct {
	next      http.RoundTripper
	max       int64
	userAgent string
}

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", t.userAgent)
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.max}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrBodyOverCap
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, ErrBodyOverCap
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
