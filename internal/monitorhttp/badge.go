package monitorhttp

import (
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

// badgeLabel is the left half of every badge.
const badgeLabel = "x402"

// Badge is what a badge says: a message word and its colour name, from a
// closed set.
type Badge struct {
	Message string
	Color   string // a shields.io colour name
}

// badgeColors are the shields.io colour names and the hex we paint.
var badgeColors = map[string]string{
	"brightgreen": "#2e7d32", "yellow": "#8a6d00", "red": "#c62828", "lightgrey": "#616161",
}

var statusColor = map[monitor.Status]string{
	monitor.Operational: "brightgreen", monitor.Degraded: "yellow", monitor.Critical: "red", monitor.Unknown: "lightgrey",
}

// BadgeOf is e's badge at now: the fresh latest state of its status source
// (GO, HOLD, STOP; conforms, warnings, errors) in the status's colour; for an
// endpoint with neither preflight nor lint, "passing" when every op's fresh
// latest observation passes, "failing" when one does not; "unknown" when
// anything needed was not observed within two intervals.
func BadgeOf(m *monitor.Monitor, e monitor.Endpoint, latest map[string]store.Observation) Badge {
	now := m.NowTime()
	if src := monitor.StatusSource(e); src != "" {
		st := m.StatusNow(e, latest)
		if st == monitor.Unknown {
			return Badge{"unknown", "lightgrey"}
		}
		return Badge{latest[src].State, statusColor[st]}
	}
	passing := true
	for _, op := range e.Ops {
		o, ok := latest[op]
		if !ok || !monitor.Fresh(e, o, now) {
			return Badge{"unknown", "lightgrey"}
		}
		passing = passing && o.Passing
	}
	if passing {
		return Badge{"passing", "brightgreen"}
	}
	return Badge{"failing", "red"}
}

func (h *Handler) badge(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	// An id may contain dots: the id is everything before the last one.
	i := strings.LastIndexByte(file, '.')
	if i < 0 {
		writeError(w, 0, "not_found")
		return
	}
	id, kind := file[:i], file[i+1:]
	if kind != "svg" && kind != "json" {
		writeError(w, 0, "not_found")
		return
	}
	e, found := h.lookup(w, r, id)
	if !found {
		return
	}
	latest, err := h.cfg.Monitor.Latest(r.Context(), e)
	if err != nil {
		writeError(w, 0, "internal_error")
		return
	}
	b := BadgeOf(h.cfg.Monitor, e, latest)
	w.Header().Set("Cache-Control", "max-age=60")
	if kind == "json" {
		writeShields(w, b)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Write([]byte(SVG(badgeLabel, b)))
}

// writeShields answers the shields.io endpoint schema.
func writeShields(w http.ResponseWriter, b Badge) {
	v := struct {
		SchemaVersion int    `json:"schemaVersion"`
		Label         string `json:"label"`
		Message       string `json:"message"`
		Color         string `json:"color"`
	}{1, badgeLabel, b.Message, b.Color}
	w.Header().Set("Content-Type", "application/json")
	writeJSONBody(w, v)
}

// charWidth approximates the advance of one character of an 11 px sans
// serif, so the halves fit their text; the text is also scaled to its box
// with textLength, so a wider font never spills.
const charWidth = 7

// SVG is a self-contained badge: two rectangles and two texts, no external
// font, image or link. It has a title and an accessible name.
func SVG(label string, b Badge) string {
	lw := len(label)*charWidth + 12
	mw := len(b.Message)*charWidth + 12
	total := lw + mw
	fill := badgeColors[b.Color]
	name := html.EscapeString(label + ": " + b.Message)
	l, m := html.EscapeString(label), html.EscapeString(b.Message)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s">`+
		`<title>%s</title>`+
		`<rect width="%d" height="20" fill="#444"/>`+
		`<rect x="%d" width="%d" height="20" fill="%s"/>`+
		`<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">`+
		`<text x="%d" y="14" textLength="%d" lengthAdjust="spacingAndGlyphs">%s</text>`+
		`<text x="%d" y="14" textLength="%d" lengthAdjust="spacingAndGlyphs">%s</text>`+
		`</g></svg>`+"\n",
		total, name, name, lw, lw, mw, fill,
		lw/2, lw-12, l, lw+mw/2, mw-12, m)
}
