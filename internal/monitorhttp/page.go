package monitorhttp

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

//go:embed templates/status.html
var templatesFS embed.FS

var pages = template.Must(template.ParseFS(templatesFS, "templates/status.html"))

// recentRows is how many observations the detail page lists.
const recentRows = 50

type opRow struct {
	Op      string
	Seen    bool
	Outcome string
	State   string
	Reasons []string
	At      string
}

type dayCell struct {
	Date, Text, Mark string
	Outcome          monitor.DayOutcome
}

type changeView struct {
	Op, From, To, At, State string
	Reasons                 []string
}

type endpointPage struct {
	ID, Link, Status, StatusSource string
	Every                          string
	Ops                            []opRow
	Days                           []dayCell
	Checks                         int
	Percent                        string
	Change                         *changeView
}

var dayMarks = map[monitor.DayOutcome]string{
	monitor.DayPassing: "✓", monitor.DayMixed: "~", monitor.DayFailing: "✗", monitor.DayNone: "·",
}

func dayText(d monitor.Day) string {
	switch d.Outcome {
	case monitor.DayNone:
		return "no check"
	case monitor.DayPassing:
		return "all " + strconv.Itoa(d.Checks) + " checks passed"
	case monitor.DayFailing:
		return "none of " + strconv.Itoa(d.Checks) + " checks passed"
	}
	return strconv.Itoa(d.Passing) + " of " + strconv.Itoa(d.Checks) + " checks passed"
}

// window is the 30 days' observations of e, oldest first.
func (h *Handler) window(r *http.Request, e monitor.Endpoint) ([]store.Observation, error) {
	now := h.cfg.Monitor.NowTime()
	since := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(monitor.StripDays - 1))
	return h.cfg.Monitor.History.Observations(r.Context(), e.ID, "", since, maxWindow)
}

// maxWindow bounds one endpoint's 30 days read for the page, the badge and
// the record: 30 days of 5 ops every 10 s is 1.3 million, so the newest
// ones are read and the count says so.
const maxWindow = 200000

func (h *Handler) endpointPage(r *http.Request, e monitor.Endpoint, link string) (endpointPage, []store.Observation, error) {
	m := h.cfg.Monitor
	latest, err := m.Latest(r.Context(), e)
	if err != nil {
		return endpointPage{}, nil, err
	}
	obs, err := h.window(r, e)
	if err != nil {
		return endpointPage{}, nil, err
	}
	p := endpointPage{ID: e.ID, Link: link, Status: string(m.StatusNow(e, latest)), StatusSource: monitor.StatusSource(e), Every: e.Every.String()}
	for _, op := range e.Ops {
		row := opRow{Op: op}
		if o, ok := latest[op]; ok {
			row = opRow{Op: op, Seen: true, Outcome: string(monitor.OutcomeOf(o)), State: o.State, Reasons: o.Reasons, At: criteria.Timestamp(o.At)}
		}
		p.Ops = append(p.Ops, row)
	}
	for _, d := range monitor.Strip(obs, m.NowTime(), monitor.StripDays) {
		p.Days = append(p.Days, dayCell{Date: d.Date, Text: dayText(d), Mark: dayMarks[d.Outcome], Outcome: d.Outcome})
	}
	var pct *float64
	p.Checks, pct = monitor.Share(obs)
	if pct != nil {
		p.Percent = strconv.FormatFloat(*pct, 'f', 1, 64)
	}
	if cs := monitor.Changes(obs); len(cs) > 0 {
		c := cs[len(cs)-1]
		p.Change = &changeView{Op: c.Op, From: string(c.From), To: string(c.To), At: criteria.Timestamp(c.At), State: c.State, Reasons: c.Reasons}
	}
	return p, obs, nil
}

func (h *Handler) link(path string) string {
	return strings.TrimSuffix(h.cfg.PublicURL, "/") + path
}

func (h *Handler) statusIndex(w http.ResponseWriter, r *http.Request) {
	data := struct {
		Title, Now, Version string
		Endpoints           []endpointPage
	}{Title: "Endpoint status", Now: criteria.Timestamp(h.cfg.Monitor.NowTime()), Version: buildinfo.Version}
	for _, e := range h.cfg.Monitor.Config.Endpoints {
		p, _, err := h.endpointPage(r, e, h.link("/status/"+e.ID))
		if err != nil {
			writeError(w, 0, "internal_error")
			return
		}
		data.Endpoints = append(data.Endpoints, p)
	}
	render(w, "index", data)
}

func (h *Handler) statusDetail(w http.ResponseWriter, r *http.Request) {
	e, ok := h.cfg.Monitor.Config.Endpoint(r.PathValue("id"))
	if !ok {
		writeHTMLNotFound(w)
		return
	}
	p, obs, err := h.endpointPage(r, e, "")
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	recent := slices.Clone(obs[max(len(obs)-recentRows, 0):])
	slices.Reverse(recent)
	var rows []ObservationView
	for _, o := range recent {
		rows = append(rows, viewOf(o))
	}
	data := struct {
		Title, Now, Version, Back string
		Endpoint                  endpointPage
		Recent                    []ObservationView
	}{Title: "Status of " + e.ID, Now: criteria.Timestamp(h.cfg.Monitor.NowTime()), Version: buildinfo.Version,
		Back: h.link("/status"), Endpoint: p, Recent: rows}
	render(w, "detail", data)
}

func render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(buf.Bytes())
}

func writeHTMLNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte("<!doctype html><html lang=\"en\"><title>Not found</title><h1>No such endpoint</h1></html>\n"))
}
