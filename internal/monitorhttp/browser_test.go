package monitorhttp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/exchangerebel/payability/internal/browsertest"
	"github.com/exchangerebel/payability/internal/monitor"
)

// newBrowser starts the loopback-only headless Chromium of internal/browsertest.
func newBrowser(t *testing.T) context.Context {
	return browsertest.New(t, chromedp.WindowSize(1000, 1200), chromedp.Flag("blink-settings", "scriptEnabled=false"))
}

func artefactDir(t *testing.T) string { return browsertest.ArtefactDir(t) }

// TestStatusPageInABrowser: the page, with JavaScript off, in headless
// Chromium: each endpoint's heading, status word and latest outcome, a strip
// of 30 days each with its text, the share, the last change and why; then
// the detail page. Screenshots are written as artefacts.
func TestStatusPageInABrowser(t *testing.T) {
	good, flaky, paid := newSeller(t), newSeller(t), newV2Seller(t)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"check", "memo"}},
		monitor.Endpoint{ID: "flaky", URL: flaky.URL + "/paid", Ops: []string{"check"}},
		monitor.Endpoint{ID: "paid", URL: paid.URL + "/paid", Ops: []string{"preflight", "lint"}},
	))
	h.check("paid", "preflight")
	h.check("paid", "lint")
	h.check("good", "check")
	h.check("good", "memo")
	h.check("flaky", "check")
	h.advance(time.Minute)
	flaky.broken.Store(true)
	h.check("flaky", "check")

	ctx := newBrowser(t)
	must(t, chromedp.Do(ctx, chromedp.Navigate(h.api.URL+"/status"), chromedp.WaitVisible(chromedp.CSS("h1"))))
	headings := eval[string](t, ctx, `[...document.querySelectorAll("h1, h2")].map(e => e.textContent.trim()).join("|")`)
	status := text(t, ctx, `#ep-good ~ p .status`)
	flakyOutcome := text(t, ctx, `section[aria-labelledby="ep-flaky"] tr[data-op="check"] td .status`)
	change := text(t, ctx, `section[aria-labelledby="ep-flaky"] .change`)
	share := text(t, ctx, `section[aria-labelledby="ep-good"] .share`)
	legend := text(t, ctx, `#legend-good`)
	days := eval[int](t, ctx, `document.querySelectorAll('section[aria-labelledby="ep-flaky"] ol.strip li').length`)
	firstDay := eval[string](t, ctx, `document.querySelector('section[aria-labelledby="ep-flaky"] ol.strip li:first-child .sr-only').textContent`)
	lastDay := eval[string](t, ctx, `document.querySelector('section[aria-labelledby="ep-flaky"] ol.strip li:last-child .sr-only').textContent`)
	// Every text that carries a state (status, outcome, the strip's marks)
	// has at least 4.5:1 contrast with its own background (WCAG AA).
	worst := eval[float64](t, ctx, contrastJS)
	t.Logf("lowest contrast of a state's text: %.2f:1", worst)
	if worst < 4.5 {
		t.Errorf("lowest contrast of a state's text %.2f:1, want at least 4.5:1", worst)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, err)
	paidStatus := text(t, ctx, `#ep-paid ~ p .status`)
	paidState := text(t, ctx, `section[aria-labelledby="ep-paid"] tr[data-op="preflight"] td code`)
	if paidStatus != "operational" || paidState != "GO" {
		t.Errorf("paid: status %q, preflight %q; want operational and GO", paidStatus, paidState)
	}
	if headings != "Endpoint status|flaky|good|paid" { // ordered by id
		t.Errorf("headings %q", headings)
	}
	if status != "unknown" {
		t.Errorf("good's status %q: without preflight or lint the word is unknown", status)
	}
	if flakyOutcome != "failing" {
		t.Errorf("flaky's latest check %q, want the word failing", flakyOutcome)
	}
	if !strings.Contains(change, "went from passing to failing") || !strings.Contains(change, "NOT-A-402") || !strings.Contains(change, "status_not_402") {
		t.Errorf("last change %q", change)
	}
	if !strings.Contains(share, "100.0% of 2") {
		t.Errorf("share %q", share)
	}
	if days != monitor.StripDays || !strings.HasSuffix(firstDay, ": no check") || !strings.Contains(lastDay, "1 of 2 checks passed") {
		t.Errorf("strip: %d days, first %q, last %q", days, firstDay, lastDay)
	}
	if !strings.Contains(legend, "every check passed") {
		t.Errorf("legend %q", legend)
	}
	writeArtefact(t, "monitor-status.png", shot)

	must(t, chromedp.Do(ctx, chromedp.Navigate(h.api.URL+"/status/flaky"), chromedp.WaitVisible(chromedp.CSS("h1"))))
	detail := text(t, ctx, "h1")
	rows := eval[int](t, ctx, `document.querySelectorAll('section[aria-labelledby="recent"] tbody tr').length`)
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, err)
	if detail != "Status of flaky" || rows != 2 {
		t.Errorf("detail: %q with %d rows, want 2", detail, rows)
	}
	writeArtefact(t, "monitor-status-flaky.png", shot)
}

// contrastJS is the lowest WCAG contrast ratio between the text colour and
// the background colour of every .status and strip day.
const contrastJS = `(() => {
  const lum = c => { const [r, g, b] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  let worst = 21;
  for (const el of document.querySelectorAll(".status, ol.strip li")) {
    const s = getComputedStyle(el), a = lum(s.color), b = lum(s.backgroundColor);
    worst = Math.min(worst, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }
  return worst;
})()`

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	must(t, err)
	return strings.TrimSpace(s)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	must(t, err)
	return v
}

func writeArtefact(t *testing.T, name string, b []byte) {
	t.Helper()
	if len(b) == 0 {
		t.Fatalf("%s: empty screenshot", name)
	}
	p := filepath.Join(artefactDir(t), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}
