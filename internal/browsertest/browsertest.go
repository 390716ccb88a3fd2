// Package browsertest starts the headless Chromium that the page tests of
// internal/server and internal/monitorhttp drive: Debian's chromium, a fresh
// profile, and a browser that reaches loopback only. It is imported by tests
// alone.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds Debian's chromium (PAYABILITY_CHROMIUM names another). A
// missing browser fails the test, as a missing PostgreSQL does: the pages are
// part of the product, so CI must run these tests (.ci/run installs it).
func Path(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PAYABILITY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: apt-get install -y chromium (or set PAYABILITY_CHROMIUM); the browser tests need it")
	return ""
}

// New starts a headless Chromium with a fresh profile that talks to
// loopback only: every host name but 127.0.0.1 resolves to nothing, no proxy
// is used and no background service of the browser runs. extra options (a
// window size, scripts off) come after these and win. The browser ends with
// the test.
func New(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	// Chromium's child processes may still write into the profile for a
	// moment after the browser exits, so its removal is retried (cleanup
	// only: nothing is asserted about time).
	profile, err := os.MkdirTemp("", "payability-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	// No deadline of our own: a stuck browser is go test's -timeout to
	// catch, and no assertion depends on how long a step takes.
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		for range 100 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium does not start: %v", err)
	}
	return ctx
}

// ArtefactDir is where screenshots go: $PAYABILITY_ARTEFACTS, else a
// temporary directory of the test.
func ArtefactDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PAYABILITY_ARTEFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
