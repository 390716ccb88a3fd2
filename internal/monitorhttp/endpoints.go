package monitorhttp

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

// The authenticated half of the endpoints API: POST /api/v1/endpoints (one
// endpoint or a batch), PATCH and DELETE /api/v1/endpoints/{id}. Each needs
// the bearer token the monitor was started with (--ops-token-env); without
// one configured the API is read-only. Bodies are read as the configuration
// file is: strictly, within monitor.MaxRequestBytes.

// changesEndpoints reports whether r is one of the changing methods on the
// endpoints' paths (every other non-GET is refused before routing).
func changesEndpoints(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost:
		return r.URL.Path == "/api/v1/endpoints"
	case http.MethodPatch, http.MethodDelete:
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/endpoints/")
		return ok && rest != "" && !strings.Contains(rest, "/")
	}
	return false
}

// authorized answers 403 read_only when no token is configured and 401
// unauthorized when the request's bearer token is missing or wrong; the
// comparison takes the same time whatever the token sent.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if len(h.cfg.OpsToken) == 0 {
		writeError(w, 0, "read_only")
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256(h.cfg.OpsToken)
	if !ok || len(r.Header.Values("Authorization")) != 1 || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="payability-monitor"`)
		writeError(w, 0, "unauthorized")
		return false
	}
	return true
}

// readBody reads a JSON body of at most monitor.MaxRequestBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, 0, "bad_content_type")
		return nil, false
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, monitor.MaxRequestBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, 0, "body_too_large")
		} else {
			writeError(w, http.StatusBadRequest, "bad_endpoint")
		}
		return nil, false
	}
	return data, true
}

// badEndpoint answers a refused body: the field path and the static reason
// (never a value of the body).
func badEndpoint(w http.ResponseWriter, err error) {
	out := map[string]string{"error": "bad_endpoint"}
	var ce *monitor.ConfigError
	if errors.As(err, &ce) {
		if len(ce.Field) <= 128 {
			out["field"] = ce.Field
		}
		out["reason"] = ce.Reason
	}
	writeJSON(w, http.StatusBadRequest, out)
}

// guardRefused answers 400 for the first endpoint whose URL the address
// guard refuses as written (a literal loopback, private or link-local
// address, a localhost name) unless the monitor allows private addresses;
// a name that resolves to one is refused when its check dials.
func (h *Handler) guardRefused(w http.ResponseWriter, eps []monitor.Endpoint, batch bool) bool {
	for i, e := range eps {
		if monitor.GuardURL(e.URL, h.cfg.Monitor.AllowPrivate) {
			continue
		}
		field := "url"
		if batch {
			field = "endpoints[" + strconv.Itoa(i) + "].url"
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad_endpoint", "field": field, "reason": "refused by the address guard"})
		return true
	}
	return false
}

// unavailableOp reports an op this monitor cannot run (not built in).
func (h *Handler) unavailableOp(eps []monitor.Endpoint) bool {
	obs := h.cfg.Monitor.Observers
	if obs == nil {
		return false
	}
	for _, e := range eps {
		for _, op := range e.Ops {
			if _, ok := obs[op]; !ok {
				return true
			}
		}
	}
	return false
}

func (h *Handler) storeError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrEndpointExists):
		writeError(w, 0, "exists")
	case errors.Is(err, store.ErrTooManyEndpoints):
		writeError(w, 0, "too_many_endpoints")
	case errors.Is(err, store.ErrNoEndpoint):
		writeError(w, 0, "not_found")
	case errors.Is(err, monitor.ErrReadOnly):
		writeError(w, 0, "read_only")
	default:
		writeError(w, 0, "internal_error")
	}
}

func (h *Handler) changed() {
	if h.cfg.Changed != nil {
		h.cfg.Changed()
	}
}

// addEndpoints adds one endpoint or a batch (all or none): 201 with their
// ids; 409 exists when an id is taken, 409 too_many_endpoints past the
// store's limit.
func (h *Handler) addEndpoints(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	eps, err := monitor.ParseEndpoints(data)
	if err != nil {
		badEndpoint(w, err)
		return
	}
	if h.guardRefused(w, eps, monitor.IsBatch(data)) {
		return
	}
	if h.unavailableOp(eps) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad_endpoint", "field": "ops", "reason": "an op is not available in this build"})
		return
	}
	if err := h.cfg.Monitor.Add(r.Context(), eps); err != nil {
		h.storeError(w, err)
		return
	}
	h.changed()
	ids := make([]string, 0, len(eps))
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"added": len(ids), "ids": ids})
}

// patchEndpoint changes an endpoint's definition: the keys of the body (any
// of the configuration's but id) replace its own.
func (h *Handler) patchEndpoint(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	e, ok := h.lookup(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	next, err := monitor.ParsePatch(e, data)
	if err != nil {
		badEndpoint(w, err)
		return
	}
	if h.guardRefused(w, []monitor.Endpoint{next}, false) {
		return
	}
	if h.unavailableOp([]monitor.Endpoint{next}) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad_endpoint", "field": "ops", "reason": "an op is not available in this build"})
		return
	}
	if err := h.cfg.Monitor.Update(r.Context(), next); err != nil {
		h.storeError(w, err)
		return
	}
	h.changed()
	v, err := h.view(r, next)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	v.Sources = e.Sources
	writeJSON(w, http.StatusOK, v)
}

// deleteEndpoint removes an endpoint (204); its history stays until the
// retention prunes it.
func (h *Handler) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	ok, err := h.cfg.Monitor.Delete(r.Context(), r.PathValue("id"))
	if err != nil {
		h.storeError(w, err)
		return
	}
	if !ok {
		writeError(w, 0, "not_found")
		return
	}
	h.changed()
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
