package monitorhttp

import (
	"net/http"
	"strconv"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// RecordSource names the records this monitor signs.
const RecordSource = "payability"

// NotMeasuredPaidDelivery says payability never pays, so never measures a
// paid delivery.
const NotMeasuredPaidDelivery = "paid_delivery"

// Record is the signed reliability record of one endpoint: what a CORTX
// consumer needs (status, endpoint_url, last_verified_at, active_incident)
// plus payability's binding (terms_sha256 and network, the CAIP-2 network of
// the entry the latest preflight selected and hashed), never the payee,
// asset or amount. A figure that was not observed is absent or null, never made
// up: paid delivery is listed in not_measured.
type Record struct {
	Source      string `json:"source"`
	Version     string `json:"version"`
	ServiceID   string `json:"service_id"`
	Status      string `json:"status"`
	EndpointURL string `json:"endpoint_url"`
	// LastVerifiedAt is the latest observation of the status source; null
	// when there is none.
	LastVerifiedAt *string         `json:"last_verified_at"`
	ActiveIncident *RecordIncident `json:"active_incident"`
	Network        *string         `json:"network"`
	TermsSHA256    *string         `json:"terms_sha256"`
	Checks30d      int             `json:"checks_30d"`
	// PassingPercent30d is a decimal string with one place ("96.4"): a
	// signed document carries integers only. Null with no check.
	PassingPercent30d *string  `json:"passing_percent_30d"`
	NotMeasured       []string `json:"not_measured"`
	GeneratedAt       string   `json:"generated_at"`
}

// RecordIncident is the open incident of a record.
type RecordIncident struct {
	Severity     string `json:"severity"`
	FailureStage string `json:"failure_stage"`
	OpenedAt     string `json:"opened_at"`
}

// RecordOf builds e's record from its latest observations and its 30 days.
func RecordOf(m *monitor.Monitor, e monitor.Endpoint, latest map[string]store.Observation, days []monitor.Day, window []store.Observation) Record {
	r := Record{
		Source: RecordSource, Version: buildinfo.Version, ServiceID: e.ID, Status: string(m.StatusNow(e, latest)),
		EndpointURL: e.URL, NotMeasured: []string{NotMeasuredPaidDelivery}, GeneratedAt: criteria.Timestamp(m.NowTime()),
	}
	if n, err := reliability.Normalize(e.URL); err == nil {
		r.EndpointURL = n
	}
	src := monitor.StatusSource(e)
	if o, ok := latest[src]; ok && src != "" {
		s := criteria.Timestamp(o.At)
		r.LastVerifiedAt = &s
		var of []store.Observation
		for _, w := range window {
			if w.Op == src {
				of = append(of, w)
			}
		}
		if in := monitor.ActiveIncident(src, of); in != nil && r.Status == string(monitor.Critical) {
			r.ActiveIncident = &RecordIncident{Severity: "critical", FailureStage: in.FailureStage, OpenedAt: criteria.Timestamp(in.OpenedAt)}
		}
	}
	// The binding comes from the latest preflight: its terms hash and the
	// CAIP-2 network of the entry it selected (the entry the hash is of),
	// null when it selected none. The configured network only filters the
	// selection.
	if o, ok := latest["preflight"]; ok {
		if o.TermsSHA256 != "" {
			h := o.TermsSHA256
			r.TermsSHA256 = &h
		}
		if o.Network != "" {
			n := o.Network
			r.Network = &n
		}
	}
	var pct *float64
	r.Checks30d, pct = monitor.Share(days)
	if pct != nil {
		s := strconv.FormatFloat(*pct, 'f', 1, 64)
		r.PassingPercent30d = &s
	}
	return r
}

func (h *Handler) reliability(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Key == nil {
		writeError(w, 0, "not_found")
		return
	}
	e, ok := h.lookup(w, r, r.PathValue("id"))
	if !ok {
		return
	}
	latest, err := h.cfg.Monitor.Latest(r.Context(), e)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	tr, err := h.trend(r, e, true)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	signed, err := report.Sign(RecordOf(h.cfg.Monitor, e, latest, tr.days, tr.recent), *h.cfg.Key)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(signed, '\n'))
}

func (h *Handler) jwks(w http.ResponseWriter, r *http.Request) {
	b, err := report.MarshalJWKS(*h.cfg.KeySet)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "max-age=300")
	w.Write(b)
}
