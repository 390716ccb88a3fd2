package monitorhttp

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

//go:embed templates/status.html
var templatesFS embed.FS

// pages is parsed on first use, not at start-up.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(templatesFS, "templates/status.html"))
})

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

// trend is what the page, the badge and the record read of an endpoint's
// 30 days: the daily counts (exact, aggregated by the database) and the
// newest observations (for the last change and an incident's run).
type trend struct {
	days   []monitor.Day
	recent []store.Observation // oldest first, at most recentWindow
}

// recentWindow bounds the observations read for the detail page and the
// current run of an incident: the newest ones in the 30 days.
const recentWindow = 5000

func stripSince(now time.Time) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(monitor.StripDays - 1))
}

// trend reads the daily counts and, with recent, the newest observations.
func (h *Handler) trend(r *http.Request, e monitor.Endpoint, recent bool) (trend, error) {
	m := h.cfg.Monitor
	now := m.NowTime()
	since := stripSince(now)
	counts, err := m.History.DailyCounts(r.Context(), e.ID, since)
	if err != nil {
		return trend{}, err
	}
	if !recent {
		return trend{days: monitor.Strip(counts, now, monitor.StripDays)}, nil
	}
	obs, err := m.History.Observations(r.Context(), e.ID, "", since, recentWindow)
	if err != nil {
		return trend{}, err
	}
	return trend{days: monitor.Strip(counts, now, monitor.StripDays), recent: obs}, nil
}

// endpointPage is one endpoint's part of the page, read from the summary
// (latest per op, daily counts, last change per op): its cost does not grow
// with the history. With recent (the detail page) the newest observations
// are read too.
func (h *Handler) endpointPage(r *http.Request, e monitor.Endpoint, latest map[string]store.Observation, link string, recent bool) (endpointPage, []store.Observation, error) {
	m := h.cfg.Monitor
	if latest == nil {
		var err error
		if latest, err = m.Latest(r.Context(), e); err != nil {
			return endpointPage{}, nil, err
		}
	}
	tr, err := h.trend(r, e, recent)
	if err != nil {
		return endpointPage{}, nil, err
	}
	obs := tr.recent
	p := endpointPage{ID: e.ID, Link: link, Status: string(m.StatusNow(e, latest)), StatusSource: monitor.StatusSource(e), Every: e.Every.String()}
	for _, op := range e.Ops {
		row := opRow{Op: op}
		if o, ok := latest[op]; ok {
			row = opRow{Op: op, Seen: true, Outcome: string(monitor.OutcomeOf(o)), State: o.State, Reasons: o.Reasons, At: criteria.Timestamp(o.At)}
		}
		p.Ops = append(p.Ops, row)
	}
	for _, d := range tr.days {
		p.Days = append(p.Days, dayCell{Date: d.Date, Text: dayText(d), Mark: dayMarks[d.Outcome], Outcome: d.Outcome})
	}
	var pct *float64
	p.Checks, pct = monitor.Share(tr.days)
	if pct != nil {
		p.Percent = strconv.FormatFloat(*pct, 'f', 1, 64)
	}
	changes, err := m.History.LastChanges(r.Context(), e.ID)
	if err != nil {
		return endpointPage{}, nil, err
	}
	if c, ok := monitor.LastChange(e, changes, stripSince(m.NowTime())); ok {
		p.Change = &changeView{Op: c.Op, From: string(c.From), To: string(c.To), At: criteria.Timestamp(c.At), State: c.State, Reasons: c.Reasons}
	}
	return p, obs, nil
}

func (h *Handler) link(path string) string {
	return strings.TrimSuffix(h.cfg.PublicURL, "/") + path
}

func (h *Handler) statusIndex(w http.ResponseWriter, r *http.Request) {
	q, pg, ok := pageOf(r)
	if !ok {
		writeError(w, 0, "bad_page")
		return
	}
	eps, total, err := h.cfg.Monitor.Endpoints(r.Context(), q)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	pg.finish(total, h.link("/status"))
	latest, err := h.cfg.Monitor.LatestOf(r.Context(), eps)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	data := struct {
		Title, Now, Version string
		Endpoints           []endpointPage
		Paging              paging
		Filters             []filterLink
		Filtered            string
	}{Title: "Endpoint status", Now: criteria.Timestamp(h.cfg.Monitor.NowTime()), Version: buildinfo.Version, Paging: pg,
		Filters: h.statusFilters(q.Status), Filtered: filteredText(q)}
	for _, e := range eps {
		p, _, err := h.endpointPage(r, e, latest[e.ID], h.link("/status/"+e.ID), false)
		if err != nil {
			writeError(w, 0, "internal_error")
			return
		}
		data.Endpoints = append(data.Endpoints, p)
	}
	render(w, "index", data)
}

func (h *Handler) statusDetail(w http.ResponseWriter, r *http.Request) {
	e, ok, err := h.cfg.Monitor.Endpoint(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	if !ok {
		writeHTMLNotFound(w)
		return
	}
	p, obs, err := h.endpointPage(r, e, nil, "", true)
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

func render(w http.ResponseWriter, name string, data any) { renderWith(w, pages(), name, data) }

func renderWith(w http.ResponseWriter, tmpl *template.Template, name string, data any) {
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, data); err != nil {
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

// filterLink is one status filter of the index page.
type filterLink struct {
	Word, Link string
	Current    bool
}

// statusFilters are the index page's links to each status (no script: a
// link per filter).
func (h *Handler) statusFilters(cur monitor.Status) []filterLink {
	out := []filterLink{{Word: "all", Link: h.link("/status"), Current: cur == ""}}
	for _, st := range []monitor.Status{monitor.Critical, monitor.Degraded, monitor.Unknown, monitor.Operational, monitor.Retired} {
		out = append(out, filterLink{Word: string(st), Link: h.link("/status?status=" + string(st)), Current: cur == st})
	}
	return out
}

// filteredText says which filters select the page's endpoints.
func filteredText(q monitor.Query) string {
	var parts []string
	if q.Status != "" {
		parts = append(parts, "status "+string(q.Status))
	}
	if q.Network != "" {
		parts = append(parts, "network "+q.Network)
	}
	if q.Source != "" {
		parts = append(parts, "source "+q.Source)
	}
	return strings.Join(parts, ", ")
}
