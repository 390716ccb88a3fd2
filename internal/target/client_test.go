package target

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
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

// Every target in these tests is an httptest server on loopback.

// testTimeout is long on purpose: no test here passes or fails by a margin
// of wall-clock time. Tests that are about the timeout use shortClient
// against targets that never finish, so the timeout is the only way out and
// how long it takes does not matter.
const testTimeout = time.Minute

// shortTimeout bounds the fetches of targets that never finish.
const shortTimeout = 50 * time.Millisecond

func privateClient() *Client {
	return New(Options{AllowPrivate: true, UserAgent: "payability/test", Timeout: testTimeout})
}

// shortClient is for targets that never finish: its timeout always fires.
func shortClient() *Client {
	return New(Options{AllowPrivate: true, UserAgent: "payability/test", Timeout: shortTimeout})
}

// seen is what a test target observed of one request.
type seen struct {
	Method string
	Header http.Header
	Body   []byte
}

// recorder is a handler that records every request and answers with answer.
type recorder struct {
	mu     sync.Mutex
	got    []seen
	answer http.HandlerFunc
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.got = append(rec.got, seen{Method: r.Method, Header: r.Header.Clone(), Body: b})
	rec.mu.Unlock()
	if rec.answer != nil {
		rec.answer(w, r)
		return
	}
	w.WriteHeader(http.StatusPaymentRequired)
	_, _ = io.WriteString(w, `{"x402Version":1}`)
}

func (rec *recorder) requests() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.got...)
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newServerV6(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestGuardRefusesLoopbackByDefault(t *testing.T) {
	rec := &recorder{}
	v4 := newServer(t, rec)
	v6 := newServerV6(t, rec)
	_, port, _ := net.SplitHostPort(v4.Listener.Addr().String())
	urls := map[string]string{
		"127.0.0.1":        v4.URL + "/paid",
		"[::1]":            v6.URL + "/paid",
		"::ffff:127.0.0.1": "http://[::ffff:127.0.0.1]:" + port + "/paid",
	}
	guarded := New(Options{Timeout: testTimeout})
	for name, u := range urls {
		t.Run("default client refuses "+name, func(t *testing.T) {
			got := guarded.Get(context.Background(), u)
			want := capture.Capture{Outcome: capture.Failed}
			if got.Outcome != want.Outcome || got.Status != 0 || got.Header != nil || got.Body != nil {
				t.Fatalf("capture = %+v, want %+v", got, want)
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("a guarded client reached the loopback target %d times", n)
	}
	allowed := privateClient()
	for _, name := range []string{"127.0.0.1", "[::1]"} {
		t.Run("AllowPrivate reaches "+name, func(t *testing.T) {
			got := allowed.Get(context.Background(), urls[name])
			if got.Outcome != capture.OK || got.Status != http.StatusPaymentRequired {
				t.Fatalf("capture = %v %d, want ok 402", got.Outcome, got.Status)
			}
		})
	}
}

func TestGetCapturesResponse(t *testing.T) {
	rec := &recorder{answer: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Payment-Required", "e30=")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"accepts":[]}`)
	}}
	srv := newServer(t, rec)
	got := privateClient().Get(context.Background(), srv.URL+"/paid")
	if got.Outcome != capture.OK || got.Status != 402 || string(got.Body) != `{"accepts":[]}` {
		t.Fatalf("capture = %v %d %q", got.Outcome, got.Status, got.Body)
	}
	if v, ok := got.Header.Get("PAYMENT-REQUIRED"); !ok || v != "e30=" {
		t.Errorf("PAYMENT-REQUIRED = %q %v", v, ok)
	}
	if v := got.Header["X-Multi"]; len(v) != 2 {
		t.Errorf("X-Multi = %v, want both values", v)
	}
}

func TestGetSendsOnlyHostAndUserAgent(t *testing.T) {
	rec := &recorder{answer: func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "tracking"})
		w.WriteHeader(http.StatusPaymentRequired)
	}}
	srv := newServer(t, rec)
	c := privateClient()
	for range 2 { // the second request proves no cookie came back
		if got := c.Get(context.Background(), srv.URL+"/paid"); got.Outcome != capture.OK {
			t.Fatalf("outcome = %v", got.Outcome)
		}
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("target saw %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != http.MethodGet {
			t.Errorf("request %d method = %s", i, r.Method)
		}
		if got := r.Header.Get("User-Agent"); got != "payability/test" {
			t.Errorf("request %d User-Agent = %q", i, got)
		}
		// The only other field is the transport's own framing: this client
		// never keeps a connection, so it says so.
		if got := r.Header.Get("Connection"); got != "close" {
			t.Errorf("request %d Connection = %q, want close", i, got)
		}
		for name := range r.Header {
			if name != "User-Agent" && name != "Connection" {
				t.Errorf("request %d carried header %s: %q", i, name, r.Header[name])
			}
		}
		if len(r.Body) != 0 {
			t.Errorf("request %d carried a body", i)
		}
	}
}

func TestDefaultUserAgent(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, rec)
	New(Options{AllowPrivate: true, Timeout: testTimeout}).Get(context.Background(), srv.URL)
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].Header.Get("User-Agent") != DefaultUserAgent {
		t.Fatalf("requests = %+v, want one with User-Agent %q", reqs, DefaultUserAgent)
	}
}

func TestBodyIsNeverDecompressed(t *testing.T) {
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	_, _ = zw.Write([]byte(`{"accepts":[]}`))
	_ = zw.Close()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write(raw.Bytes())
	}))
	got := privateClient().Get(context.Background(), srv.URL)
	if got.Outcome != capture.OK || !bytes.Equal(got.Body, raw.Bytes()) {
		t.Fatalf("capture = %v %q, want the gzip bytes as received", got.Outcome, got.Body)
	}
}

func writeN(w http.ResponseWriter, n int) {
	_, _ = w.Write(bytes.Repeat([]byte("x"), n))
}

// stall waits until the client gives up: the handler never answers.
func stall(r *http.Request) {
	<-r.Context().Done()
}

// reset closes the connection with an RST (linger 0) after writing prefix.
func reset(t *testing.T, w http.ResponseWriter, prefix string) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if prefix != "" {
		_, _ = io.WriteString(conn, prefix)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// hangUp closes the connection (an orderly close) after writing prefix.
func hangUp(t *testing.T, w http.ResponseWriter, prefix string) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if prefix != "" {
		_, _ = io.WriteString(conn, prefix)
	}
	_ = conn.Close()
}

func TestFetchEdges(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		method     string
		wantOut    capture.Outcome
		wantStatus int
		wantBody   int // body length for OK captures
	}{
		{
			name:       "body of exactly the cap is ok",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(402); writeN(w, capture.BodyCapBytes) },
			wantOut:    capture.OK,
			wantStatus: 402,
			wantBody:   capture.BodyCapBytes,
		},
		{
			name:       "body one byte over the cap is over cap",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(402); writeN(w, capture.BodyCapBytes+1) },
			wantOut:    capture.OverCap,
			wantStatus: 402,
		},
		{
			name:       "70 KB body is over cap",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(402); writeN(w, 70*1000) },
			wantOut:    capture.OverCap,
			wantStatus: 402,
		},
		{
			name: "endless body is over cap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(402)
				chunk := bytes.Repeat([]byte("y"), 4096)
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			},
			wantOut:    capture.OverCap,
			wantStatus: 402,
		},
		{
			name: "body trickling past the timeout is a timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(402)
				rc := http.NewResponseController(w)
				for r.Context().Err() == nil {
					if _, err := w.Write([]byte("z")); err != nil {
						return
					}
					_ = rc.Flush()
					time.Sleep(20 * time.Millisecond)
				}
			},
			wantOut: capture.Timeout,
		},
		{
			name:    "headers that never come are a timeout",
			handler: func(w http.ResponseWriter, r *http.Request) { stall(r) },
			wantOut: capture.Timeout,
		},
		{
			name: "oversized response headers fail",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Big", strings.Repeat("h", 40<<10))
				w.WriteHeader(402)
			},
			wantOut: capture.Failed,
		},
		{
			name: "headers within the cap are ok",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Big", strings.Repeat("h", 16<<10))
				w.WriteHeader(402)
			},
			wantOut:    capture.OK,
			wantStatus: 402,
		},
		{
			name: "connection closed before a response fails",
			handler: func(w http.ResponseWriter, r *http.Request) {
				hangUp(t, w, "")
			},
			wantOut: capture.Failed,
		},
		{
			name:    "connection reset before a response fails",
			handler: func(w http.ResponseWriter, r *http.Request) { reset(t, w, "") },
			wantOut: capture.Failed,
		},
		{
			name: "connection reset mid-body fails",
			handler: func(w http.ResponseWriter, r *http.Request) {
				reset(t, w, "HTTP/1.1 402 Payment Required\r\nContent-Length: 100\r\n\r\npartial")
			},
			wantOut: capture.Failed,
		},
		{
			name: "malformed status line fails",
			handler: func(w http.ResponseWriter, r *http.Request) {
				hangUp(t, w, "NOT-HTTP garbage\r\n\r\n")
			},
			wantOut: capture.Failed,
		},
		{
			name: "HEAD is captured with an empty body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodHead {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Length", "1234")
				w.WriteHeader(402)
			},
			method:     http.MethodHead,
			wantOut:    capture.OK,
			wantStatus: 402,
		},
		{
			name:       "a 500 is a response like any other",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500); writeN(w, 3) },
			wantOut:    capture.OK,
			wantStatus: 500,
			wantBody:   3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			c := privateClient()
			if tt.wantOut == capture.Timeout {
				c = shortClient() // the target never finishes
			}
			got := c.Do(context.Background(), Request{Method: tt.method, URL: srv.URL + "/paid"})
			if got.Outcome != tt.wantOut || got.Status != tt.wantStatus {
				t.Fatalf("capture = %v %d, want %v %d", got.Outcome, got.Status, tt.wantOut, tt.wantStatus)
			}
			switch got.Outcome {
			case capture.OK:
				if len(got.Body) != tt.wantBody || got.Body == nil {
					t.Errorf("body length = %d (nil %v), want %d", len(got.Body), got.Body == nil, tt.wantBody)
				}
				if !got.Usable() {
					t.Error("an ok capture is not Usable")
				}
			case capture.OverCap:
				if got.Body != nil || got.Header == nil {
					t.Errorf("over cap keeps body %d bytes, header %v", len(got.Body), got.Header)
				}
				if !got.OverCapBody() || got.Usable() {
					t.Error("over cap capture misreported")
				}
			default:
				if got.Body != nil || got.Header != nil {
					t.Error("a failed or timed-out capture keeps response data")
				}
			}
		})
	}
}

func TestCallerDeadlineIsATimeout(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stall(r) }))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := New(Options{AllowPrivate: true}) // default 5 s; the caller's deadline comes first
	if got := c.Get(ctx, srv.URL); got.Outcome != capture.Timeout {
		t.Fatalf("outcome = %v, want timeout", got.Outcome)
	}
}

func TestSmallerCapsAreHonoured(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pad", strings.Repeat("p", 2000))
		writeN(w, 11)
	}))
	body := New(Options{AllowPrivate: true, Timeout: testTimeout, BodyCap: 10}).Get(context.Background(), srv.URL)
	if body.Outcome != capture.OverCap {
		t.Errorf("BodyCap 10 with 11 bytes: outcome = %v, want over_cap", body.Outcome)
	}
	head := New(Options{AllowPrivate: true, Timeout: testTimeout, HeaderCap: 1024}).Get(context.Background(), srv.URL)
	if head.Outcome != capture.Failed {
		t.Errorf("HeaderCap 1024 with 2000-byte header: outcome = %v, want failed", head.Outcome)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(402)
	}))
	var landed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landing", http.StatusFound)
	})
	mux.HandleFunc("/off", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/keep-method", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landing", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/landing", func(w http.ResponseWriter, r *http.Request) {
		landed.Add(1)
		w.WriteHeader(402)
	})
	srv := newServer(t, mux)
	tests := []struct {
		name, path, method, location string
		status                       int
	}{
		{"same-host 302", "/same", http.MethodGet, "/landing", http.StatusFound},
		{"off-host 301", "/off", http.MethodGet, other.URL + "/landing", http.StatusMovedPermanently},
		{"POST 307", "/keep-method", http.MethodPost, "/landing", http.StatusTemporaryRedirect},
	}
	c := privateClient()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Do(context.Background(), Request{Method: tt.method, URL: srv.URL + tt.path, Body: []byte("{}")})
			if got.Outcome != capture.OK || got.Status != tt.status {
				t.Fatalf("capture = %v %d, want ok %d", got.Outcome, got.Status, tt.status)
			}
			if loc, _ := got.Header.Get("Location"); loc != tt.location {
				t.Errorf("Location = %q, want %q", loc, tt.location)
			}
		})
	}
	if n := landed.Load() + elsewhere.Load(); n != 0 {
		t.Fatalf("a redirect was followed %d times", n)
	}
}

func TestRequestsThisPackageWillNotSend(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, rec)
	host := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name string
		r    Request
	}{
		{"URL with credentials", Request{URL: "http://user:pw@" + host + "/"}},
		{"URL with an empty userinfo", Request{URL: "http://@" + host + "/"}},
		{"scheme outside the policy", Request{URL: "ftp://" + host + "/"}},
		{"method outside GET, HEAD, POST", Request{Method: http.MethodDelete, URL: srv.URL}},
		{"an Authorization header", Request{URL: srv.URL, Header: map[string]string{"Authorization": "Bearer x"}}},
		{"a Cookie header", Request{URL: srv.URL, Header: map[string]string{"cookie": "a=b"}}},
		{"a User-Agent header", Request{URL: srv.URL, Header: map[string]string{"User-Agent": "spoof"}}},
		{"a Host header", Request{URL: srv.URL, Header: map[string]string{"Host": "elsewhere"}}},
		{"an Accept-Encoding header", Request{URL: srv.URL, Header: map[string]string{"Accept-Encoding": "gzip"}}},
		{"one header named twice", Request{URL: srv.URL, Header: map[string]string{"X-Payment": "a", "x-payment": "b"}}},
		{"one empty header named twice", Request{URL: srv.URL, Header: map[string]string{"X-Payment": "", "x-payment": ""}}},
		{"a header value with a newline", Request{URL: srv.URL, Header: map[string]string{"X-Payment": "a\r\nInjected: 1"}}},
	}
	c := privateClient()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Do(context.Background(), tt.r); got.Outcome != capture.Failed {
				t.Fatalf("outcome = %v, want failed", got.Outcome)
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("target saw %d requests, want none", n)
	}
}

func TestClosedTargetFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close() // nothing listens on the port any more
	if got := privateClient().Get(context.Background(), u); got.Outcome != capture.Failed {
		t.Fatalf("outcome = %v, want failed", got.Outcome)
	}
}

func TestConcurrentUse(t *testing.T) {
	var n atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(402)
		fmt.Fprint(w, r.URL.Path)
	}))
	c := privateClient()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path := fmt.Sprintf("/p%d", i)
			got := c.Get(context.Background(), srv.URL+path)
			if got.Outcome != capture.OK || string(got.Body) != path {
				t.Errorf("capture = %v %q, want ok %q", got.Outcome, got.Body, path)
			}
		})
	}
	wg.Wait()
	if n.Load() != 8 {
		t.Fatalf("target saw %d requests, want 8", n.Load())
	}
}

// The refusal above is the guard's, not some other dial failure: a dialer
// with only the guard hook gets errGuard for the loopback listener.
func TestGuardIsWhatRefusesLoopback(t *testing.T) {
	srv := newServer(t, http.NotFoundHandler())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	d := &net.Dialer{Control: guardControl, Timeout: testTimeout}
	for _, addr := range []string{srv.Listener.Addr().String(), "[::ffff:127.0.0.1]:" + port} {
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
			t.Fatalf("dial %s succeeded through the guard", addr)
		}
		if !errors.Is(err, errGuard) {
			t.Fatalf("dial %s: %v, want the guard's refusal", addr, err)
		}
		if strings.Contains(errGuard.Error(), "127.0.0.1") {
			t.Fatal("the guard's refusal names the address")
		}
	}
}
