package monitorhttp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// reportHarness: a v2 seller that is GO, one that is broken (STOP,
// not_402), each with preflight and lint, observed once.
func reportHarness(t *testing.T) *harness {
	good, broken := newV2Seller(t), newV2Seller(t)
	broken.broken.Store(true)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"preflight", "lint"}},
		monitor.Endpoint{ID: "broken", URL: broken.URL + "/paid", Ops: []string{"preflight", "lint"}},
	))
	for _, id := range []string{"good", "broken"} {
		h.check(id, "preflight")
		h.check(id, "lint")
	}
	return h
}

// TestReportAPISigned: /api/v1/report is the ecosystem report signed with
// the monitor's key, verifiable with its JWKS; its counts are the
// observations'.
func TestReportAPISigned(t *testing.T) {
	h := reportHarness(t)
	code, hdr, body := h.get("/api/v1/report")
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/v1/report: %d %s", code, hdr.Get("Content-Type"))
	}
	_, _, jwks := h.get("/.well-known/jwks.json")
	keys, err := report.ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Verify(body, keys); err != nil {
		t.Fatalf("Verify with the served JWKS: %v", err)
	}
	var r monitor.EcosystemReport
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	pf := r.Ops[0]
	if pf.Op != "preflight" || pf.Endpoints != 2 {
		t.Fatalf("preflight: %+v, want 2 endpoints", pf)
	}
	got := map[string]int64{}
	for _, s := range pf.States {
		got[s.State] = s.Count
	}
	if got["GO"] != 1 || got["STOP"] != 1 {
		t.Errorf("preflight states %v, want 1 GO and 1 STOP", got)
	}
	if len(pf.BySource) != 1 || pf.BySource[0].Value != monitor.SourceConfig || pf.BySource[0].Endpoints.Count != 2 {
		t.Errorf("by source %+v, want config: 2", pf.BySource)
	}
	if !hasCode(pf.TopCodes, "not_402") {
		t.Errorf("top codes %+v, want not_402", pf.TopCodes)
	}
	today := r.Daily[len(r.Daily)-1]
	if today.Ops[0].Checks != 2 || today.Ops[1].Checks != 2 {
		t.Errorf("today %+v, want 2 preflight and 2 lint checks", today)
	}
}

func hasCode(cs []monitor.CodeShare, code string) bool {
	for _, c := range cs {
		if c.Code == code && c.Count == 1 && c.Of == 2 {
			return true
		}
	}
	return false
}

// TestReportCached: within ReportCacheFor a new observation does not
// rebuild the report; after it, it does.
func TestReportCached(t *testing.T) {
	h := reportHarness(t)
	var a, b, c monitor.EcosystemReport
	h.getJSON("/api/v1/report", &a)
	late := store.Observation{Endpoint: "good", Op: "preflight", Slot: 1, At: h.clock(), Passing: true, State: "GO", Source: "config"}
	if _, err := h.st.AddObservation(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	h.getJSON("/api/v1/report", &b)
	h.advance(monitorhttp.ReportCacheFor)
	h.getJSON("/api/v1/report", &c)
	sum := func(r monitor.EcosystemReport) (n int64) {
		for _, d := range r.Daily {
			n += d.Ops[0].Checks
		}
		return n
	}
	if sum(a) != 2 || sum(b) != 2 || sum(c) != 3 {
		t.Errorf("preflight checks %d, %d, %d; want 2, 2 (cached), 3", sum(a), sum(b), sum(c))
	}
}

// TestReportPageInABrowser: /report with JavaScript off in headless
// Chromium: the op sections, their states with counts and denominators,
// the breakdowns, the top reason codes and the daily table.
func TestReportPageInABrowser(t *testing.T) {
	h := reportHarness(t)
	ctx := newBrowser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(h.api.URL+"/report"), chromedp.WaitVisible(chromedp.CSS("h1"))))
	headings := eval[string](t, ctx, `[...document.querySelectorAll("h1, h2")].map(e => e.textContent.trim()).join("|")`)
	goCell := text(t, ctx, `section[data-op="preflight"] table.states tr[data-state="GO"] td`)
	stop := text(t, ctx, `section[data-op="preflight"] table.states tr[data-state="STOP"] td`)
	source := text(t, ctx, `section[data-op="preflight"] table[data-dimension="source"] tr[data-value="config"] td`)
	code := text(t, ctx, `section[data-op="preflight"] table.codes tr[data-code="not_402"] td`)
	days := eval[int](t, ctx, `document.querySelectorAll("table.daily tbody tr").length`)
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, err)
	if headings != "x402 ecosystem report|preflight|lint|Daily" {
		t.Errorf("headings %q", headings)
	}
	if goCell != "1 of 2 (50.0%)" || stop != "1 of 2 (50.0%)" || source != "2 of 2 (100.0%)" || code != "1 of 2 (50.0%)" {
		t.Errorf("GO %q, STOP %q, source %q, not_402 %q", goCell, stop, source, code)
	}
	if days != 31 {
		t.Errorf("daily rows %d, want 31", days)
	}
	writeArtefact(t, "monitor-report.png", shot)
	if _, _, b := h.get("/report"); !strings.Contains(string(b), "/api/v1/report") {
		t.Error("the page does not link its signed JSON")
	}
}
