package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/exchangerebel/payability/internal/browsertest"
	"github.com/exchangerebel/payability/internal/report"
)

// newBrowser starts the loopback-only headless Chromium of internal/browsertest.
func newBrowser(t *testing.T) context.Context {
	return browsertest.New(t, chromedp.WindowSize(1100, 900))
}

func artefactDir(t *testing.T) string { return browsertest.ArtefactDir(t) }

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
	return s
}

// submit clicks a form's button and waits for the page the server answers.
func submit(t *testing.T, ctx context.Context, button string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(button))))
	must(t, err)
}

// The page in a real browser: every section renders; the pre-check form
// returns a signed answer for an in-policy URL and the refusal naming the
// rule for a bad one; the verifier says verified for a real report and not
// verified for a tampered one; with JavaScript (the JSON API) and without
// (the form routes). Screenshots, light and dark, are written as artefacts.
func TestPageInABrowser(t *testing.T) {
	h := newHarness(t, ServeAll)
	res, _, _ := h.payAndPost("/toll/rail-probe/probe", sellerTarget(t).URL+"/paid")
	if res.status != 200 {
		t.Fatalf("paid probe: %d %s", res.status, res.body)
	}
	realReport := string(res.body)
	tampered := strings.Replace(realReport, `"probe"`, `"check"`, 1)
	ctx := newBrowser(t)
	dir := artefactDir(t)

	must(t, chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/")))
	for _, sel := range []string{"header nav", "main#main", "#about h1", "#ops", "#claims", "#precheck form", "#verify form", "#machines", "footer"} {
		if _, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(sel), chromedp.AtLeast(1))); err != nil {
			t.Errorf("section %s: %v", sel, err)
		}
	}
	ops := text(t, ctx, "#ops")
	for _, want := range []string{"$0.01 — 10000 USDC units per endpoint", "$0.02 — 20000 USDC units per endpoint", "payability-corpus/v1", "railprobe-corpus/v1"} {
		if !strings.Contains(ops, want) {
			t.Errorf("ops section lacks %q", want)
		}
	}
	if claims := text(t, ctx, "#claims"); !strings.Contains(claims, "it is not a guarantee that a payment will settle") {
		t.Errorf("claims section lacks the honesty line")
	}
	for _, scheme := range []string{"light", "dark"} {
		must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		})))
		bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
		must(t, err)
		if (scheme == "dark") != (bg != "rgb(255, 255, 255)") {
			t.Errorf("%s: body background %s", scheme, bg)
		}
		low, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](contrastJS))
		must(t, err)
		for _, l := range low {
			t.Errorf("%s: contrast below WCAG AA 4.5:1: %s", scheme, l)
		}
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "page-"+scheme+".png"), shot, 0o644))
		full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "page-"+scheme+"-full.png"), full, 0o644))
	}
	// A phone-sized viewport: the page reflows (no horizontal scrolling).
	must(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	if wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); err != nil || wide {
		t.Errorf("the page scrolls sideways at 390 px (%v)", err)
	}
	must(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.ID("ops"))))
	narrow, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "page-dark-narrow.png"), narrow, 0o644))
	must(t, chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900)))
	t.Logf("screenshots in %s", dir)
	// The page loads its own two assets and nothing from another origin.
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`performance.getEntriesByType("resource").map(e => e.name)`))
	must(t, err)
	if len(loaded) != 2 {
		t.Errorf("the page loaded %v, want its stylesheet and script", loaded)
	}
	for _, u := range loaded {
		if !strings.HasPrefix(u, h.srv.URL+"/static/") {
			t.Errorf("the page loaded %s", u)
		}
	}
	unlabelled, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("input, select, textarea")].filter(e => e.labels.length === 0).map(e => e.id || e.name)`))
	must(t, err)
	if len(unlabelled) != 0 {
		t.Errorf("form controls without a label: %v", unlabelled)
	}
	// Keyboard: the first Tab reaches the skip link.
	must(t, chromedp.Do(ctx, chromedp.KeyEvent("\t")))
	if focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.className`)); err != nil || focused != "skip" {
		t.Errorf("first Tab focuses %q (%v), want the skip link", focused, err)
	}

	t.Run("pre-check with JavaScript", func(t *testing.T) {
		must(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("precheck-url"), "https://example.com/paid"),
			chromedp.SetValue(chromedp.ID("precheck-op"), "check"),
			chromedp.SetValue(chromedp.ID("precheck-caller"), testPayTo),
			chromedp.Click(chromedp.CSS("#precheck-form button")),
			chromedp.WaitVisible(chromedp.CSS("#precheck-result .outcome.ok pre")),
		))
		signed := text(t, ctx, "#precheck-result pre")
		if kid, err := report.Verify([]byte(signed), h.keys); err != nil || kid != h.keys.Current.Kid {
			t.Errorf("the page's pre-check answer does not verify: %v\n%s", err, signed)
		}
		must(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("precheck-url"), "ftp://example.com/paid"),
			chromedp.Click(chromedp.CSS("#precheck-form button")),
			chromedp.WaitVisible(chromedp.CSS("#precheck-result .outcome.refused")),
		))
		if got := text(t, ctx, "#precheck-result"); !strings.Contains(got, "url_scheme") {
			t.Errorf("refusal does not name the rule: %q", got)
		}
	})

	t.Run("verifier with JavaScript", func(t *testing.T) {
		for _, c := range []struct{ doc, want, sel string }{
			{realReport, "Verified: signed by this server's current key (kid " + h.keys.Current.Kid + ")", ".outcome.ok"},
			{tampered, "Not verified: bad_signature", ".outcome.refused"},
		} {
			must(t, chromedp.Do(ctx,
				chromedp.Evaluate[chromedp.Void](`document.getElementById("verify-result").replaceChildren()`),
				chromedp.SetValue(chromedp.ID("verify-report"), c.doc),
				chromedp.Click(chromedp.CSS("#verify-form button")),
				chromedp.WaitVisible(chromedp.CSS("#verify-result "+c.sel)),
			))
			if got := text(t, ctx, "#verify-result"); !strings.Contains(got, c.want) {
				t.Errorf("verifier says %q, want %q", got, c.want)
			}
		}
	})

	t.Run("without JavaScript", func(t *testing.T) {
		h.clock.Add(10 * time.Second) // past the free tier's minimum interval
		must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		})))
		must(t, chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/toll/rail-probe/")))
		must(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("precheck-url"), "https://example.com/paid"),
			chromedp.SetValue(chromedp.ID("precheck-caller"), testPayTo),
		))
		submit(t, ctx, "#precheck-form button")
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/toll/rail-probe/precheck/page#precheck-result") {
			t.Fatalf("the form did not post to the form route: %s", loc)
		}
		signed := text(t, ctx, "#precheck-result pre")
		if _, err := report.Verify([]byte(signed), h.keys); err != nil || !strings.Contains(signed, `"precheck_op": "probe"`) {
			t.Errorf("no-JS pre-check answer: %v\n%s", err, signed)
		}
		must(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("precheck-url"), "http://user:pw@example.com/paid")))
		submit(t, ctx, "#precheck-form button")
		if got := text(t, ctx, "#precheck-result"); !strings.Contains(got, "url_userinfo") {
			t.Errorf("no-JS refusal does not name the rule: %q", got)
		}
		for _, c := range []struct{ doc, want string }{
			{realReport, "Verified: signed by this server's current key"},
			{tampered, "Not verified: bad_signature"},
		} {
			must(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("verify-report"), c.doc)))
			submit(t, ctx, "#verify-form button")
			if got := text(t, ctx, "#verify-result"); !strings.Contains(got, c.want) {
				t.Errorf("no-JS verifier says %q, want %q", got, c.want)
			}
			// The pasted report is not echoed into the answered page.
			if v, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("verify-report"))); v != "" {
				t.Errorf("the page echoes the pasted report")
			}
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "rail-probe-nojs-answered.png"), shot, 0o644))
	})
}

// contrastJS lists the text elements whose contrast against their
// effective background is below 4.5:1 (WCAG 2 AA for normal text), computed
// from the browser's own resolved colours.
const contrastJS = `(() => {
  const rgb = s => (s.match(/[0-9.]+/g) || []).map(Number);
  const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const bgOf = e => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0) return c; }
    return [255, 255, 255]; };
  const out = [];
  for (const e of document.querySelectorAll("h1, h2, h3, p, a, th, td, dt, dd, label, button, code, summary, li, .hint")) {
    if (!e.offsetParent && e.tagName !== "BODY") continue;
    const fg = rgb(getComputedStyle(e).color), bg = bgOf(e);
    const a = lum(fg), b = lum(bg), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) out.push(e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " " + ratio.toFixed(2));
  }
  return out;
})()`
