package monitorhttp

import (
	"embed"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// ReportCacheFor is how long a built ecosystem report is served again
// before the store is asked anew: the report's aggregate queries read every
// endpoint's newest observation, so a burst of requests costs one build.
const ReportCacheFor = time.Minute

//go:embed templates/status.html templates/report.html
var reportFS embed.FS

var reportPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"portion": monitor.PortionText, "dims": dimsOf, "stateOf": monitor.DayOp.StateOf,
	}).
		ParseFS(reportFS, "templates/status.html", "templates/report.html"))
})

// reportCache holds the last report built and when (the monitor's clock).
type reportCache struct {
	mu    sync.Mutex
	built time.Time
	r     monitor.EcosystemReport
	ok    bool
}

// ecosystem returns the report, built at most once per ReportCacheFor;
// ok is false when the store answers no aggregate reads.
func (h *Handler) ecosystem(r *http.Request) (monitor.EcosystemReport, bool, error) {
	m := h.cfg.Monitor
	eco, ok := m.History.(store.Ecosystem)
	if !ok {
		return monitor.EcosystemReport{}, false, nil
	}
	c := &h.report
	c.mu.Lock() // one build at a time; the others wait for it
	defer c.mu.Unlock()
	now := m.NowTime()
	if c.ok && !now.Before(c.built) && now.Sub(c.built) < ReportCacheFor {
		return c.r, true, nil
	}
	rep, err := monitor.BuildReport(r.Context(), eco, now, m.Config.Retention)
	if err != nil {
		return monitor.EcosystemReport{}, true, err
	}
	c.r, c.built, c.ok = rep, now, true
	return rep, true, nil
}

// reportJSON serves the report signed with the monitor's key (the key of
// the reliability records, verifiable with the same JWKS).
func (h *Handler) reportJSON(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Key == nil {
		writeError(w, 0, "not_found")
		return
	}
	rep, ok, err := h.ecosystem(r)
	if !ok {
		writeError(w, 0, "not_found")
		return
	}
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	signed, err := report.Sign(rep, *h.cfg.Key)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(signed, '\n'))
}

func (h *Handler) reportHTML(w http.ResponseWriter, r *http.Request) {
	rep, ok, err := h.ecosystem(r)
	if !ok {
		writeHTMLNotFound(w)
		return
	}
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	data := struct {
		Title, Now, Version, JSON, Status string
		Signed                            bool
		Report                            monitor.EcosystemReport
	}{Title: "x402 ecosystem report", Now: criteria.Timestamp(h.cfg.Monitor.NowTime()), Version: buildinfo.Version,
		JSON: h.link("/api/v1/report"), Status: h.link("/status"), Signed: h.cfg.Key != nil, Report: rep}
	renderWith(w, reportPage(), "report", data)
}

// breakdownView is one dimension's table of an op.
type breakdownView struct {
	Dim, Title string
	States     []string
	Rows       []monitor.Breakdown
	Span       int
}

func dimsOf(o monitor.OpReport, dim, title string, rows []monitor.Breakdown) breakdownView {
	v := breakdownView{Dim: dim, Title: title, Rows: rows}
	for _, s := range o.States {
		v.States = append(v.States, s.State)
	}
	v.Span = 2 + len(v.States)
	return v
}
