package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the streamable HTTP transport's bounds (docs/mcp.md).
const (
	DefaultSessionIdle = 10 * time.Minute
	DefaultMaxSessions = 64
)

// rememberEvicted is how many evicted session ids are remembered, so that
// their next request is told why (about 30 KB).
const rememberEvicted = 1024

// HTTPOptions are the streamable HTTP transport's bounds and access control,
// set by the operator.
type HTTPOptions struct {
	// AllowOrigins are the browser origins (scheme://host[:port]) accepted
	// besides loopback ones; any other Origin is refused with 403.
	AllowOrigins []string
	// SessionIdle closes a session that received no request for this long
	// (DefaultSessionIdle when 0).
	SessionIdle time.Duration
	// MaxSessions bounds the live sessions; a new one evicts the oldest
	// (DefaultMaxSessions when 0).
	MaxSessions int
	// Token, when set, is the bearer token every MCP request must carry.
	Token string
}

// HTTPHandler serves the MCP server over streamable HTTP, with GET /healthz
// and GET /readyz beside it. It checks, in order: the Origin header, the
// bearer token, the session bound; then the SDK's handler checks the Host
// header (a loopback listener answers only loopback Host names).
type HTTPHandler struct {
	server   *sdk.Server
	mcp      http.Handler
	origins  map[string]bool
	max      int
	draining atomic.Bool

	mu       sync.Mutex
	creating int
	closing  map[*sdk.ServerSession]bool
	evicted  map[string]bool
	ring     []string // evicted ids, oldest first, at most rememberEvicted
	wg       sync.WaitGroup
}

// NewHTTPHandler wraps server (as NewServer built it) in the transport.
func NewHTTPHandler(server *sdk.Server, o HTTPOptions) *HTTPHandler {
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	h := &HTTPHandler{server: server, origins: map[string]bool{}, max: o.MaxSessions,
		closing: map[*sdk.ServerSession]bool{}, evicted: map[string]bool{}}
	for _, a := range o.AllowOrigins {
		if n, ok := NormalOrigin(a); ok {
			h.origins[n] = true
		}
	}
	var inner http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
		&sdk.StreamableHTTPOptions{SessionTimeout: o.SessionIdle})
	inner = h.bounded(inner)
	if o.Token != "" {
		want := sha256.Sum256([]byte(o.Token))
		verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			// Hashes of equal length, compared in constant time: neither the
			// token nor its length leaks through timing.
			got := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{UserID: "operator"}, nil
		}
		inner = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(inner)
	}
	h.mcp = inner
	return h
}

// NormalOrigin is the comparable form of an origin: lower-case
// scheme://host[:port], the scheme's default port dropped. ok is false for
// anything else (a path, a query, user info, "null").
func NormalOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" { // "http://:" or "http://:80": an authority with no host
		return "", false
	}
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// originAllowed: no Origin (a client that is not a browser), a loopback
// origin, or one the operator listed.
func (h *HTTPHandler) originAllowed(r *http.Request) bool {
	vs := r.Header.Values("Origin")
	if len(vs) == 0 {
		return true
	}
	if len(vs) != 1 {
		return false
	}
	n, ok := NormalOrigin(vs[0])
	if !ok {
		return false
	}
	if h.origins[n] {
		return true
	}
	u, _ := url.Parse(n)
	return loopbackHostPort(u.Host)
}

// hostAllowed: on a loopback listener, the Host header names loopback (a
// DNS-rebound name is refused).
func hostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil || !loopbackHostPort(la.String()) {
		return true
	}
	return loopbackHostPort(r.Host)
}

func loopbackHostPort(hp string) bool {
	host, _, err := net.SplitHostPort(hp)
	if err != nil {
		host = strings.Trim(hp, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Drain makes /readyz answer 503 (the server is stopping).
func (h *HTTPHandler) Drain() { h.draining.Store(true) }

// Close waits for the evictions under way.
func (h *HTTPHandler) Close() { h.wg.Wait() }

// Sessions is the number of live sessions (evicted ones still closing not
// counted).
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live()
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz", "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == "/readyz" && h.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"draining"}` + "\n"))
			return
		}
		w.Write([]byte(`{"status":"ok"}` + "\n"))
		return
	}
	if !hostAllowed(r) {
		// The SDK's handler makes the same check; made here first so that a
		// refused request never reaches the session bound.
		jsonRPCError(w, http.StatusForbidden, -32600, "host_refused: a loopback listener answers only loopback Host names")
		return
	}
	if !h.originAllowed(r) {
		// The transport: an invalid Origin MUST be answered 403; the body is
		// a JSON-RPC error without an id.
		jsonRPCError(w, http.StatusForbidden, -32600, "origin_refused: this server accepts loopback origins and those given by --allow-origin")
		return
	}
	h.mcp.ServeHTTP(w, r)
}

// bounded applies the session bound before the SDK's handler.
func (h *HTTPHandler) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id != "" {
			h.mu.Lock()
			ev := h.evicted[id]
			h.mu.Unlock()
			if ev {
				// 404: the client starts a new session (the transport's rule
				// for a session the server ended).
				jsonRPCError(w, http.StatusNotFound, -32001, "session_evicted: this server keeps at most "+strconv.Itoa(h.max)+" live sessions (--max-sessions) and this was the oldest; initialize again")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// A POST without a session id creates one.
		if !h.admit() {
			jsonRPCError(w, http.StatusServiceUnavailable, -32000, "sessions_full: "+strconv.Itoa(h.max)+" sessions are being created at once (--max-sessions); try again")
			return
		}
		defer func() {
			h.mu.Lock()
			h.creating--
			h.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// live counts the server's sessions not being evicted. h.mu is held.
func (h *HTTPHandler) live() int {
	n := 0
	for ss := range h.server.Sessions() {
		if !h.closing[ss] {
			n++
		}
	}
	return n
}

// admit makes room for one more session: while the live sessions and those
// being created reach the bound, the oldest live one is evicted. It is false
// when only sessions being created fill the bound.
func (h *HTTPHandler) admit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.live()+h.creating >= h.max {
		var oldest *sdk.ServerSession
		// Server.Sessions lists sessions in the order they connected.
		for ss := range h.server.Sessions() {
			if !h.closing[ss] {
				oldest = ss
				break
			}
		}
		if oldest == nil {
			return false
		}
		h.evict(oldest)
	}
	h.creating++
	return true
}

// evict closes ss in the background (Close waits for its calls under way)
// and remembers its id so its next request is told why. h.mu is held.
func (h *HTTPHandler) evict(ss *sdk.ServerSession) {
	h.closing[ss] = true
	if id := ss.ID(); id != "" {
		h.evicted[id] = true
		h.ring = append(h.ring, id)
		if len(h.ring) > rememberEvicted {
			delete(h.evicted, h.ring[0])
			h.ring = h.ring[1:]
		}
	}
	h.wg.Go(func() {
		ss.Close()
		h.mu.Lock()
		delete(h.closing, ss)
		h.mu.Unlock()
	})
}

func jsonRPCError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
