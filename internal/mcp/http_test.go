package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer serves NewServer over the transport on a loopback httptest
// server.
func httpServer(t *testing.T, o HTTPOptions) (*httptest.Server, *HTTPHandler, *sdk.Server) {
	t.Helper()
	s := NewServer(loopbackConfig())
	h := NewHTTPHandler(s, o)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		for ss := range s.Sessions() {
			ss.Close()
		}
		h.Close()
	})
	return srv, h, s
}

// headerTransport adds headers to every request of the SDK's client.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func dial(ctx context.Context, url string, hdr map[string]string) (*sdk.ClientSession, error) {
	return sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: headerTransport(hdr)}}, nil)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// post sends one raw JSON-RPC POST and returns the status, the session id
// and the body.
func post(t *testing.T, url, body string, hdr map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestOriginIsValidated: the streamable HTTP transport's security warning
// (servers MUST validate Origin, against DNS rebinding): any Origin that is
// neither loopback nor listed is refused with 403 and a JSON-RPC error, and
// creates no session.
func TestOriginIsValidated(t *testing.T) {
	srv, h, _ := httpServer(t, HTTPOptions{AllowOrigins: []string{"https://Agent.Example:443"}})
	tests := []struct {
		origin string
		code   int
	}{
		{"", http.StatusOK},
		{"http://127.0.0.1:3000", http.StatusOK},
		{"http://localhost", http.StatusOK},
		{"http://[::1]:8080", http.StatusOK},
		{"https://agent.example", http.StatusOK},
		{"https://evil.example", http.StatusForbidden},
		{"http://agent.example", http.StatusForbidden},
		{"https://agent.example:8443", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://127.0.0.1.evil.example", http.StatusForbidden},
		{"https://agent.example/path", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.origin != "" {
				hdr["Origin"] = tt.origin
			}
			before := h.Sessions()
			code, id, body := post(t, srv.URL, initBody, hdr)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, body)
			}
			if code == http.StatusForbidden {
				if !strings.Contains(body, `"origin_refused:`) || id != "" || h.Sessions() != before {
					t.Errorf("refusal body %q, session %q, sessions %d→%d", body, id, before, h.Sessions())
				}
				if strings.Contains(body, tt.origin) && tt.origin != "null" {
					t.Errorf("the refusal echoes the origin: %s", body)
				}
			}
		})
	}
	// The SDK's own client, from a refused origin, cannot connect.
	if cs, err := dial(context.Background(), srv.URL, map[string]string{"Origin": "https://evil.example"}); err == nil {
		cs.Close()
		t.Fatal("connected from a refused origin")
	}
}

func TestHostHeaderIsChecked(t *testing.T) {
	srv, h, _ := httpServer(t, HTTPOptions{})
	code, _, body := post(t, srv.URL, initBody, map[string]string{"Host": "rebound.example"})
	if code != http.StatusForbidden || !strings.Contains(body, "host_refused") || h.Sessions() != 0 {
		t.Errorf("status %d %s", code, body)
	}
	if code, _, _ := post(t, srv.URL, initBody, map[string]string{"Host": "localhost"}); code != http.StatusOK {
		t.Errorf("localhost Host: %d", code)
	}
}

func TestBearerToken(t *testing.T) {
	const token = "0123456789abcdef-token"
	srv, h, _ := httpServer(t, HTTPOptions{Token: token})
	for _, auth := range []string{"", "Bearer wrong-token-0123456789", "Basic " + token, token} {
		hdr := map[string]string{}
		if auth != "" {
			hdr["Authorization"] = auth
		}
		if code, _, body := post(t, srv.URL, initBody, hdr); code != http.StatusUnauthorized || strings.Contains(body, token) {
			t.Errorf("%q: status %d %s", auth, code, body)
		}
	}
	if h.Sessions() != 0 {
		t.Fatalf("an unauthenticated request made a session")
	}
	ctx := context.Background()
	cs, err := dial(ctx, srv.URL, map[string]string{"Authorization": "Bearer " + token})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 8 {
		t.Fatalf("tools %v %v", res, err)
	}
	// Health probes need no token.
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", p, resp, err)
		}
		resp.Body.Close()
	}
}

// TestSessionsAreCapped is the finding's repro: many initialize calls (raw
// and by the SDK's client, in parallel) never hold more live sessions than
// the cap; the oldest is evicted, and its next request is told so.
func TestSessionsAreCapped(t *testing.T) {
	const limit = 3
	srv, h, s := httpServer(t, HTTPOptions{MaxSessions: limit})
	ctx := context.Background()
	first, err := dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, rawID, _ := post(t, srv.URL, initBody, nil)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if code, _, body := post(t, srv.URL, initBody, nil); code != http.StatusOK && !strings.Contains(body, "sessions_full") {
				t.Errorf("initialize: %d %s", code, body)
			}
			if n := h.Sessions(); n > limit {
				t.Errorf("%d live sessions, cap %d", n, limit)
			}
		})
	}
	wg.Wait()
	h.Close() // the evictions under way end
	n := 0
	for range s.Sessions() {
		n++
	}
	if n > limit {
		t.Fatalf("%d sessions held after 40 initialize calls, cap %d", n, limit)
	}
	// The SDK's client reads the 404 as "session not found"; the body says
	// why, in closed form.
	if _, err = first.ListTools(ctx, nil); err == nil {
		t.Errorf("the evicted session still answers")
	}
	code, _, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": rawID, "Mcp-Protocol-Version": "2025-06-18"})
	if code != http.StatusNotFound || !strings.Contains(body, `"session_evicted: this server keeps at most 3 live sessions`) {
		t.Errorf("the evicted session's next request: %d %s", code, body)
	}
}

// TestIdleSessionsExpire: a session that receives no request for
// --session-idle is closed; its id then finds nothing.
func TestIdleSessionsExpire(t *testing.T) {
	srv, h, _ := httpServer(t, HTTPOptions{SessionIdle: time.Millisecond})
	code, id, _ := post(t, srv.URL, initBody, nil)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize %d %q", code, id)
	}
	waitFor(t, func() bool { return h.Sessions() == 0 })
	code, _, _ = post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
	if code != http.StatusNotFound {
		t.Errorf("an expired session answered %d", code)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	srv, h, _ := httpServer(t, HTTPOptions{})
	get := func(p string) int {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get("/healthz") != 200 || get("/readyz") != 200 {
		t.Fatal("not healthy and ready")
	}
	h.Drain()
	if get("/healthz") != 200 || get("/readyz") != 503 {
		t.Fatal("draining: healthz must stay 200, readyz 503")
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

// FuzzNormalOrigin: an accepted origin normalises to itself, is
// scheme://host[:port] of http or https with nothing after, and is accepted
// again.
func FuzzNormalOrigin(f *testing.F) {
	for _, s := range []string{"https://Agent.Example:443", "http://[::1]:80", "http://127.0.0.1:3000", "null", "https://a.example/x", "http://u@h", "HTTP://H:8/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := NormalOrigin(s)
		if !ok {
			return
		}
		again, ok2 := NormalOrigin(n)
		if !ok2 || again != n {
			t.Fatalf("%q -> %q -> %q %v", s, n, again, ok2)
		}
		rest, found := strings.CutPrefix(n, "https://")
		if !found {
			rest, found = strings.CutPrefix(n, "http://")
		}
		if !found || rest == "" || strings.ContainsAny(rest, "/?#@") {
			t.Fatalf("%q -> %q", s, n)
		}
	})
}
