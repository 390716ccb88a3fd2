// Package health is the daemons' probes: GET /healthz (the process is live
// and serving) and GET /readyz (every readiness check passes and the
// process is not draining). serve, monitor and mcp --http put them in front
// of their own routes. A load balancer routes on /readyz.
package health

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Paths of the probes.
const (
	LivePath  = "/healthz"
	ReadyPath = "/readyz"
)

// checkTimeout bounds one readiness check.
const checkTimeout = 2 * time.Second

// Check is one readiness condition, named by a closed-form word (its name
// is what a failing probe answers; its error is never echoed).
type Check struct {
	Name string
	Test func(ctx context.Context) error
}

// Probe answers the two probes for one process.
type Probe struct {
	checks   []Check
	draining atomic.Bool
}

// New is a probe ready when every check passes.
func New(checks ...Check) *Probe { return &Probe{checks: checks} }

// Drain marks the process as shutting down: /readyz answers 503 from now on
// (/healthz stays 200 while requests in flight finish).
func (p *Probe) Drain() { p.draining.Store(true) }

// Ready is nil when ready, else the name of the first condition that fails
// ("draining" or a check's name).
func (p *Probe) Ready(ctx context.Context) string {
	if p.draining.Load() {
		return "draining"
	}
	for _, c := range p.checks {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := c.Test(cctx)
		cancel()
		if err != nil {
			return c.Name
		}
	}
	return ""
}

// Wrap answers GET and HEAD of LivePath and ReadyPath and passes every other
// request to next.
func (p *Probe) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != LivePath && r.URL.Path != ReadyPath {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			write(w, http.StatusMethodNotAllowed, `{"error":"method_not_allowed"}`)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == LivePath {
			write(w, http.StatusOK, `{"status":"live"}`)
			return
		}
		if failing := p.Ready(r.Context()); failing != "" {
			write(w, http.StatusServiceUnavailable, `{"status":"not_ready","failing":"`+failing+`"}`)
			return
		}
		write(w, http.StatusOK, `{"status":"ready"}`)
	})
}

func write(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write([]byte(body + "\n"))
}
