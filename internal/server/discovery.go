package server

import (
	"net/http"
	"strings"

	"github.com/exchangerebel/payability/internal/gate"
)

// paidRoute is one paid route of this worker.
type paidRoute struct {
	Path, Op, Service string
}

// paidRoutes are every paid route this worker serves: under each service
// root, and at the bare paths on a single-service worker.
func (s *Server) paidRoutes() []paidRoute {
	var out []paidRoute
	for _, svc := range s.servedServices() {
		for _, op := range opsOf(svc) {
			out = append(out, paidRoute{prefixOf(svc) + "/" + op, op, svc})
		}
	}
	if s.cfg.Service != ServeAll {
		for _, op := range opsOf(s.cfg.Service) {
			out = append(out, paidRoute{"/" + op, op, s.cfg.Service})
		}
	}
	return out
}

// baseURL is this worker's base URL as the client sees it.
func (s *Server) baseURL(r *http.Request) string {
	if base := strings.TrimRight(s.cfg.PublicURL, "/"); base != "" {
		return base
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// wellKnownX402 is x402scan's fan-out document (Merit-Systems/x402scan
// docs/DISCOVERY.md, "/.well-known/x402 Fan-Out"): the URL of every paid
// resource.
type wellKnownX402 struct {
	Version   int      `json:"version"`
	Resources []string `json:"resources"`
}

func (s *Server) handleWellKnownX402(w http.ResponseWriter, r *http.Request) {
	s.count("/.well-known/x402", "ok")
	doc := wellKnownX402{Version: 1, Resources: []string{}}
	base := s.baseURL(r)
	for _, p := range s.paidRoutes() {
		doc.Resources = append(doc.Resources, base+p.Path)
	}
	writeJSON(w, http.StatusOK, doc)
}

// The x402 per-origin discovery manifest (x402-foundation/x402
// specs/extensions/well-known-discovery.md, "Manifest shape"): one item per
// paid resource with its advisory accepts, how to call it and what it answers.
type (
	x402Manifest struct {
		X402Version int            `json:"x402Version"`
		LastUpdated int64          `json:"lastUpdated"`
		Items       []manifestItem `json:"items"`
	}
	manifestItem struct {
		Resource manifestResource   `json:"resource"`
		Type     string             `json:"type"`
		Accepts  []gate.Requirement `json:"accepts"`
		Input    manifestInput      `json:"input"`
		Output   manifestOutput     `json:"output"`
	}
	manifestResource struct {
		URL         string `json:"url"`
		Description string `json:"description"`
		MimeType    string `json:"mimeType"`
		ServiceName string `json:"serviceName"`
	}
	manifestInput struct {
		Method        string `json:"method"`
		RouteTemplate string `json:"routeTemplate"`
		BodyType      string `json:"bodyType"`
		Body          any    `json:"body"`
	}
	manifestOutput struct {
		MimeType string `json:"mimeType"`
		Example  any    `json:"example"`
	}
)

func (s *Server) handleWellKnownX402JSON(w http.ResponseWriter, r *http.Request) {
	s.count("/.well-known/x402.json", "ok")
	doc := x402Manifest{X402Version: 2, LastUpdated: s.web.started.Unix(), Items: []manifestItem{}}
	base := s.baseURL(r)
	for _, p := range s.paidRoutes() {
		offer := s.cfg.Gate.Offers[p.Op]
		doc.Items = append(doc.Items, manifestItem{
			Resource: manifestResource{URL: base + p.Path, Description: offer.Description, MimeType: "application/json", ServiceName: p.Service},
			Type:     "http",
			Accepts:  s.cfg.Gate.Terms.Requirements(offer),
			Input:    manifestInput{Method: http.MethodPost, RouteTemplate: p.Path, BodyType: "json", Body: exampleBody},
			Output:   manifestOutput{MimeType: "application/json", Example: exampleReport(p.Op)},
		})
	}
	writeJSON(w, http.StatusOK, doc)
}
