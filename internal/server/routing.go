package server

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
)

// routeMux is a ServeMux that remembers every pattern registered on it, so
// a test can hold the OpenAPI document against the routes really served.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Patterns are the patterns registered, in order.
func (s *Server) Patterns() []string { return slices.Clone(s.mux.patterns) }

// servedServices are the services this worker sells, in a fixed order.
func (s *Server) servedServices() []string {
	if s.cfg.Service == ServeAll {
		return []string{criteria.ServicePayability, criteria.ServiceRailProbe, criteria.ServiceX402Preflight}
	}
	return []string{s.cfg.Service}
}

// prefixOf is the route prefix of a service.
func prefixOf(service string) string {
	switch service {
	case criteria.ServiceRailProbe:
		return PrefixRailProbe
	case criteria.ServiceX402Preflight:
		return PrefixX402
	}
	return PrefixPayability
}

// serviceOfOp is the service that sells op.
func serviceOfOp(op string) string {
	switch op {
	case ops.OpProbe:
		return criteria.ServiceRailProbe
	case ops.OpPreflight, ops.OpLint:
		return criteria.ServiceX402Preflight
	}
	return criteria.ServicePayability
}

// serviceRoots are the roots of the services this worker sells
// (/toll/payability/, /toll/rail-probe/).
func (s *Server) serviceRoots() []string {
	var roots []string
	for _, svc := range s.servedServices() {
		roots = append(roots, prefixOf(svc)+"/")
	}
	return roots
}

// offeredOps are the ops this worker sells.
func (s *Server) offeredOps() []string {
	var out []string
	for _, svc := range s.servedServices() {
		out = append(out, opsOf(svc)...)
	}
	return out
}

// notFound is the 404 of a path that is no route: it lists the service roots.
type notFound struct {
	Error    string   `json:"error"`
	Detail   string   `json:"detail"`
	Services []string `json:"services"`
}

func (s *Server) handleNotFound(w http.ResponseWriter, _ *http.Request) {
	s.count("not_found", "not_found")
	writeJSON(w, http.StatusNotFound, notFound{"not_found",
		"No such route. The services this worker sells are under the roots listed in services; GET / describes them and GET /openapi.json is the contract.",
		s.serviceRoots()})
}

// notCovered is the 404 of a POST to a path that is no route: it lists the
// ops this worker sells and, when the path names an op or a free route that
// lives elsewhere on this worker, where it lives.
type notCovered struct {
	Error    string   `json:"error"`
	Detail   string   `json:"detail"`
	Ops      []string `json:"ops"`
	Services []string `json:"services"`
	// Routes are where the op or free route the path names lives here.
	Routes []string `json:"routes,omitempty"`
}

func (s *Server) handleNotCovered(w http.ResponseWriter, r *http.Request) {
	s.count("not_covered", "not_covered")
	offered := s.offeredOps()
	body := notCovered{Error: "NOT COVERED", Ops: offered, Services: s.serviceRoots(),
		Detail: "This worker serves ops " + strings.Join(offered, ", ") + " only."}
	// Only a name from the closed set below is ever repeated back.
	name := path.Base(strings.TrimRight(r.URL.Path, "/"))
	switch {
	case slices.Contains(offered, name):
		route := prefixOf(serviceOfOp(name)) + "/" + name
		body.Routes = []string{route}
		body.Detail += " " + name + " is under " + prefixOf(serviceOfOp(name)) + "/: POST " + route + "."
	case slices.Contains([]string{ops.OpCheck, ops.OpMemo, ops.OpProbe, ops.OpPreflight, ops.OpLint}, name):
		body.Detail += " " + name + " belongs to " + serviceOfOp(name) + ", which this worker does not serve."
	case name == "precheck":
		for _, svc := range s.servedServices() {
			body.Routes = append(body.Routes, prefixOf(svc)+"/precheck")
		}
		body.Detail += " The free pre-check is under each service root: POST " + strings.Join(body.Routes, ", POST ") + "."
	}
	writeJSON(w, http.StatusNotFound, body)
}
