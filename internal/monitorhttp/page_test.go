package monitorhttp_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/store"
)

func TestStatusPageWithoutJavaScript(t *testing.T) {
	good, bad := newSeller(t), newSeller(t)
	bad.broken.Store(true)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"check"}},
		monitor.Endpoint{ID: "bad", URL: bad.URL + "/paid", Ops: []string{"check"}},
	))
	h.check("good", "check")
	h.check("bad", "check")
	code, hdr, body := h.get("/status")
	page := string(body)
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /status: %d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{`<html lang="en">`, "<h1>Endpoint status</h1>", `id="ep-good"`, `id="ep-bad"`,
		`<code>NOT-A-402</code>`, "<code>status_not_402</code>", "all 1 checks passed", "none of 1 checks passed",
		"Checks passing, last 30 days: <strong>100.0%</strong> of 1.", "not rated: no preflight or lint", "<script"} {
		if want == "<script" {
			if strings.Contains(page, want) {
				t.Error("the page has a script: it must work without JavaScript")
			}
			continue
		}
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if code, _, body := h.get("/status/good"); code != 200 || !strings.Contains(string(body), "<h1>Status of good</h1>") {
		t.Errorf("GET /status/good: %d", code)
	}
	if code, _, _ := h.get("/status/nope"); code != 404 {
		t.Errorf("GET /status/nope: %d, want 404", code)
	}
}

func TestBadges(t *testing.T) {
	good, bad := newSeller(t), newSeller(t)
	bad.broken.Store(true)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"check", "memo"}},
		monitor.Endpoint{ID: "bad", URL: bad.URL + "/paid", Ops: []string{"check"}},
		monitor.Endpoint{ID: "never", URL: bad.URL + "/paid", Ops: []string{"check"}},
	))
	h.check("good", "check")
	h.check("good", "memo")
	h.check("bad", "check")
	for id, want := range map[string]monitorhttp.Badge{
		"good": {Message: "passing", Color: "brightgreen"}, "bad": {Message: "failing", Color: "red"}, "never": {Message: "unknown", Color: "lightgrey"},
	} {
		code, hdr, body := h.get("/badge/" + id + ".json")
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil || code != 200 {
			t.Fatalf("%s.json: %d %v", id, code, err)
		}
		if v["schemaVersion"] != float64(1) || v["label"] != "x402" || v["message"] != want.Message || v["color"] != want.Color || len(v) != 4 {
			t.Errorf("%s.json: %v (%s), want %+v", id, v, hdr.Get("Content-Type"), want)
		}
		code, hdr, body = h.get("/badge/" + id + ".svg")
		svg := string(body)
		if code != 200 || hdr.Get("Content-Type") != "image/svg+xml" {
			t.Fatalf("%s.svg: %d %s", id, code, hdr.Get("Content-Type"))
		}
		assertSelfContainedSVG(t, svg)
		if !strings.Contains(svg, "<title>x402: "+want.Message+"</title>") || !strings.Contains(svg, ">"+want.Message+"</text>") {
			t.Errorf("%s.svg does not say %s: %s", id, want.Message, svg)
		}
	}
	// Two intervals later nothing is fresh: unknown.
	h.advance(2*time.Minute + time.Millisecond)
	var v map[string]any
	_, _, body := h.get("/badge/good.json")
	json.Unmarshal(body, &v)
	if v["message"] != "unknown" {
		t.Errorf("stale badge says %v, want unknown", v["message"])
	}
	for _, p := range []string{"/badge/nope.svg", "/badge/good.png", "/badge/good"} {
		if code, _, _ := h.get(p); code != 404 {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

// TestBadgeOfStatusSource: with preflight or lint configured, the badge is
// the source's state in its status's colour.
func TestBadgeOfStatusSource(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m := &monitor.Monitor{Now: func() time.Time { return now }}
	e := monitor.Endpoint{ID: "a", Ops: []string{"preflight", "check"}, Every: time.Minute}
	for state, want := range map[string]monitorhttp.Badge{
		"GO": {"GO", "brightgreen"}, "HOLD": {"HOLD", "yellow"}, "STOP": {"STOP", "red"},
	} {
		got := monitorhttp.BadgeOf(m, e, map[string]store.Observation{"preflight": {Op: "preflight", State: state, At: now}})
		if got != want {
			t.Errorf("%s: %+v, want %+v", state, got, want)
		}
	}
	l := monitor.Endpoint{ID: "b", Ops: []string{"lint"}, Every: time.Minute}
	if got := monitorhttp.BadgeOf(m, l, map[string]store.Observation{"lint": {Op: "lint", State: "warnings", At: now}}); got != (monitorhttp.Badge{"warnings", "yellow"}) {
		t.Errorf("lint warnings: %+v", got)
	}
}

// assertSelfContainedSVG: well-formed XML with no reference outside itself.
func assertSelfContainedSVG(t *testing.T, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "svg", "title", "rect", "g", "text":
			default:
				t.Errorf("element %s in a badge", se.Name.Local)
			}
			for _, a := range se.Attr {
				if a.Name.Local == "href" || strings.Contains(a.Value, "url(") || strings.Contains(a.Value, "http") && a.Name.Local != "xmlns" {
					t.Errorf("external reference %s=%q", a.Name.Local, a.Value)
				}
			}
		}
	}
	for _, bad := range []string{"@import", "<image", "<use", "<style", "<script", "<a "} {
		if strings.Contains(svg, bad) {
			t.Errorf("badge has %s", bad)
		}
	}
}

var _ = http.StatusOK

// TestBadgeIDsWithDots: ids may contain dots; the badge route takes the
// whole id before the last ".svg" or ".json" (it once cut at the first dot
// and answered 404 for every such id).
func TestBadgeIDsWithDots(t *testing.T) {
	good, bad := newSeller(t), newSeller(t)
	bad.broken.Store(true)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "search.v2", URL: good.URL + "/paid", Ops: []string{"check"}},
		monitor.Endpoint{ID: "api.svg", URL: bad.URL + "/paid", Ops: []string{"check"}},
		monitor.Endpoint{ID: "api", URL: good.URL + "/paid", Ops: []string{"check"}},
	))
	h.check("search.v2", "check")
	h.check("api.svg", "check")
	h.check("api", "check")
	for path, want := range map[string]string{
		"/badge/search.v2.json": "passing", "/badge/api.svg.json": "failing", "/badge/api.json": "passing",
	} {
		var v map[string]any
		if code := h.getJSON(path, &v); code != 200 || v["message"] != want {
			t.Errorf("GET %s: %d %v, want %s", path, code, v["message"], want)
		}
	}
	for path, want := range map[string]string{"/badge/search.v2.svg": "passing", "/badge/api.svg.svg": "failing"} {
		code, _, body := h.get(path)
		if code != 200 || !strings.Contains(string(body), "<title>x402: "+want+"</title>") {
			t.Errorf("GET %s: %d, want a %s badge", path, code, want)
		}
	}
	for _, p := range []string{"/badge/search.v2", "/badge/search.svg", "/badge/.svg", "/badge/search.v2.png"} {
		if code, _, _ := h.get(p); code != 404 {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}
