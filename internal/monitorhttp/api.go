// Package monitorhttp is the monitor's HTTP surface: the JSON API, the status
// page, badges, metrics and the signed reliability record. Handlers only read
// the history through the monitor and render; they never fetch a target.
package monitorhttp

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// MaxHistory is the most observations one history answer carries (the
// newest ones); a caller pages back with since.
const MaxHistory = 5000

// Config wires a Handler.
type Config struct {
	Monitor *monitor.Monitor
	// Registry, when set, is served at MetricsPath (default /metrics).
	Registry    prometheus.Gatherer
	MetricsPath string
	// Key signs reliability records; KeySet is published at
	// /.well-known/jwks.json when ServeJWKS (serve --monitor publishes its
	// own). Without a key there is no record route.
	Key       *report.Key
	KeySet    *report.KeySet
	ServeJWKS bool
	// PublicURL is the monitor's base URL as the public reaches it (for
	// links in the page and badges); empty means relative links.
	PublicURL string
	// OpsToken, when set, is the bearer token that changes the endpoint
	// set (POST, PATCH, DELETE /api/v1/endpoints…); without one the API is
	// read-only.
	OpsToken []byte
	// Changed, when set, is told after the endpoint set changed through
	// the API (the scheduler picks the change up).
	Changed func()
}

// Routes are the path patterns the monitor serves, for a process that
// serves it beside other routes (serve --monitor).
var Routes = []string{"/api/v1/endpoints", "/api/v1/endpoints/", "/api/v1/reliability/", "/status", "/status/", "/badge/", "/probe", "/report", "/api/v1/report"}

// Handler serves every monitor route.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	report reportCache
}

// New builds the handler.
func New(cfg Config) *Handler {
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /api/v1/endpoints", h.endpoints)
	h.mux.HandleFunc("GET /api/v1/endpoints/{id}", h.endpoint)
	h.mux.HandleFunc("GET /api/v1/endpoints/{id}/history", h.history)
	h.mux.HandleFunc("POST /api/v1/endpoints", h.addEndpoints)
	h.mux.HandleFunc("PATCH /api/v1/endpoints/{id}", h.patchEndpoint)
	h.mux.HandleFunc("DELETE /api/v1/endpoints/{id}", h.deleteEndpoint)
	h.mux.HandleFunc("GET /status", h.statusIndex)
	h.mux.HandleFunc("GET /status/{id}", h.statusDetail)
	h.mux.HandleFunc("GET /badge/{file}", h.badge)
	h.mux.HandleFunc("GET /probe", h.probe)
	h.mux.HandleFunc("GET /api/v1/reliability/{id}", h.reliability)
	h.mux.HandleFunc("GET /report", h.reportHTML)
	h.mux.HandleFunc("GET /api/v1/report", h.reportJSON)
	if cfg.ServeJWKS && cfg.KeySet != nil {
		h.mux.HandleFunc("GET /.well-known/jwks.json", h.jwks)
	}
	if cfg.Registry != nil {
		h.mux.Handle("GET "+cmp.Or(cfg.MetricsPath, "/metrics"), promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !changesEndpoints(r) {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Error codes of the API, each with its status: one table.
var errorStatus = map[string]int{
	"not_found":          http.StatusNotFound,
	"bad_op":             http.StatusBadRequest,
	"bad_since":          http.StatusBadRequest,
	"bad_page":           http.StatusBadRequest,
	"bad_limit":          http.StatusBadRequest,
	"bad_endpoint":       http.StatusBadRequest,
	"bad_content_type":   http.StatusUnsupportedMediaType,
	"body_too_large":     http.StatusRequestEntityTooLarge,
	"unauthorized":       http.StatusUnauthorized,
	"read_only":          http.StatusForbidden,
	"exists":             http.StatusConflict,
	"too_many_endpoints": http.StatusConflict,
	"method_not_allowed": http.StatusMethodNotAllowed,
	"internal_error":     http.StatusInternalServerError,
}

func writeError(w http.ResponseWriter, status int, code string) {
	if s, ok := errorStatus[code]; ok {
		status = s
	}
	writeJSON(w, status, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	writeJSONBody(w, v)
}

func writeJSONBody(w http.ResponseWriter, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ObservationView is one observation as the API shows it.
type ObservationView struct {
	Op          string   `json:"op"`
	At          string   `json:"at"`
	Slot        int64    `json:"slot"`
	Outcome     string   `json:"outcome"`
	State       string   `json:"state"`
	Reasons     []string `json:"reasons"`
	DurationMS  int64    `json:"duration_ms"`
	TermsSHA256 *string  `json:"terms_sha256"`
}

func viewOf(o store.Observation) ObservationView {
	v := ObservationView{
		Op: o.Op, At: criteria.Timestamp(o.At), Slot: o.Slot, Outcome: string(monitor.OutcomeOf(o)),
		State: o.State, Reasons: o.Reasons, DurationMS: o.DurationMS,
	}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	if o.TermsSHA256 != "" {
		t := o.TermsSHA256
		v.TermsSHA256 = &t
	}
	return v
}

// EndpointView is one endpoint and its latest observations.
type EndpointView struct {
	ID           string   `json:"id"`
	URL          string   `json:"url"`
	Ops          []string `json:"ops"`
	EverySeconds int64    `json:"every_seconds"`
	Status       string   `json:"status"`
	// StatusSource is the op the status is read from (preflight, lint) or
	// null when the endpoint has neither (its status is then unknown).
	StatusSource  *string                    `json:"status_source"`
	LastCheckedAt *string                    `json:"last_checked_at"`
	Latest        map[string]ObservationView `json:"latest"`
	// Sources are what lists the endpoint: config, api, or catalogs' URLs.
	Sources []string `json:"sources"`
	// RetiredAt is when no source listed it any more (it is no longer
	// checked; its history is kept), null while it is checked.
	RetiredAt *string `json:"retired_at"`
}

func (h *Handler) view(r *http.Request, e monitor.Endpoint) (EndpointView, error) {
	latest, err := h.cfg.Monitor.Latest(r.Context(), e)
	if err != nil {
		return EndpointView{}, err
	}
	return h.viewWith(e, latest), nil
}

func (h *Handler) viewWith(e monitor.Endpoint, latest map[string]store.Observation) EndpointView {
	m := h.cfg.Monitor
	v := EndpointView{
		ID: e.ID, URL: e.URL, Ops: e.Ops, EverySeconds: int64(e.Every / time.Second),
		Status: string(m.StatusNow(e, latest)), Latest: map[string]ObservationView{}, Sources: e.Sources,
	}
	if v.Sources == nil {
		v.Sources = []string{store.SourceConfig}
	}
	if !e.Retired.IsZero() {
		s := criteria.Timestamp(e.Retired)
		v.RetiredAt = &s
	}
	if src := monitor.StatusSource(e); src != "" {
		v.StatusSource = &src
	}
	var last time.Time
	for op, o := range latest {
		v.Latest[op] = viewOf(o)
		if o.At.After(last) {
			last = o.At
		}
	}
	if !last.IsZero() {
		s := criteria.Timestamp(last)
		v.LastCheckedAt = &s
	}
	return v
}

// endpoints answers one page of the endpoints the filters select, read in
// two queries (the page, and the newest observations of its endpoints).
func (h *Handler) endpoints(w http.ResponseWriter, r *http.Request) {
	q, pg, ok := pageOf(r)
	if !ok {
		writeError(w, 0, "bad_page")
		return
	}
	m := h.cfg.Monitor
	eps, total, err := m.Endpoints(r.Context(), q)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	pg.finish(total, "/api/v1/endpoints")
	latest, err := m.LatestOf(r.Context(), eps)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	out := struct {
		Endpoints []EndpointView `json:"endpoints"`
		Page      int            `json:"page"`
		PerPage   int            `json:"per_page"`
		Total     int            `json:"total"`
		Next      *string        `json:"next"`
	}{Endpoints: []EndpointView{}, Page: pg.Page, PerPage: pg.PerPage, Total: pg.Total}
	if pg.Next != "" {
		out.Next = &pg.Next
	}
	for _, e := range eps {
		out.Endpoints = append(out.Endpoints, h.viewWith(e, latest[e.ID]))
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup finds the endpoint of the path's id (retired ones too); it answers
// the request itself when there is none.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, id string) (monitor.Endpoint, bool) {
	e, ok, err := h.cfg.Monitor.Endpoint(r.Context(), id)
	if err != nil {
		writeError(w, 0, "internal_error")
		return e, false
	}
	if !ok {
		writeError(w, 0, "not_found")
	}
	return e, ok
}

func (h *Handler) endpoint(w http.ResponseWriter, r *http.Request) {
	e, ok := h.lookup(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	v, err := h.view(r, e)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// history answers the observations of one endpoint (one op with ?op=),
// since ?since= (RFC 3339; default the retention ago), oldest first: the
// newest ?limit= of them (1 to MaxHistory, the default).
func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	m := h.cfg.Monitor
	e, ok := h.lookup(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	q := r.URL.Query()
	op := q.Get("op")
	if op != "" && !e.Has(op) {
		writeError(w, 0, "bad_op")
		return
	}
	since := m.NowTime().Add(-m.Config.Retention)
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			writeError(w, 0, "bad_since")
			return
		}
		since = t
	}
	limit := MaxHistory
	if v := q["limit"]; len(v) > 0 {
		n, err := strconv.Atoi(v[0])
		if len(v) > 1 || err != nil || n < 1 || n > MaxHistory || v[0][0] == '+' {
			writeError(w, 0, "bad_limit")
			return
		}
		limit = n
	}
	obs, err := m.History.Observations(r.Context(), e.ID, op, since, limit)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	out := struct {
		Endpoint     string            `json:"endpoint"`
		Op           *string           `json:"op"`
		Since        string            `json:"since"`
		Observations []ObservationView `json:"observations"`
	}{Endpoint: e.ID, Since: criteria.Timestamp(since), Observations: []ObservationView{}}
	if op != "" {
		out.Op = &op
	}
	for _, o := range obs {
		out.Observations = append(out.Observations, viewOf(o))
	}
	writeJSON(w, http.StatusOK, out)
}
