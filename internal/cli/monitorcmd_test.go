//go:build !quick

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/schedule"
)

// lockedBuffer is a writer the command and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// populatedSeller answers a populated challenge with a fresh memo.
func populatedSeller(t *testing.T) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		url := srv.URL + r.URL.Path
		memo := rand.Text()
		body := fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111","resource":%q,"description":"one call","extra":{"usdc_token_account":"Token111","memo":%q}}]}`, url, memo)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111","extra":{"memo":%q}}]}`, url, memo)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var servingRe = regexp.MustCompile(`serving on (http://\S+)`)

// startCLI runs the command until the test ends and returns the base URL
// it serves on.
func startCLI(t *testing.T, args ...string) (base string, stderr *lockedBuffer, wait func() int) {
	t.Helper()
	return startCLIWith(t, nil, nil, args...)
}

// startCLIWith is startCLI with a fetcher and a clock of the test's.
func startCLIWith(t *testing.T, fetcher func(bool) ops.Fetcher, now func() time.Time, args ...string) (base string, stderr *lockedBuffer, wait func() int) {
	t.Helper()
	return startCLIEnv(t, Env{NewFetcher: fetcher, Now: now}, args...)
}

// startCLIEnv is startCLI with the test's Env (its streams and Getenv are
// the harness's).
func startCLIEnv(t *testing.T, e Env, args ...string) (base string, stderr *lockedBuffer, wait func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &lockedBuffer{}
	e.Getenv, e.Stdin, e.Stdout, e.Stderr = func(string) string { return "" }, strings.NewReader(""), io.Discard, stderr
	done := make(chan int, 1)
	go func() { done <- e.Run(ctx, args) }()
	var once sync.Once
	code := -1
	wait = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := servingRe.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr, wait
		}
		select {
		case c := <-done:
			t.Fatalf("exited %d before serving: %s", c, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("never served: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runCLIWith runs one command to its end with a fetcher and clock.
func runCLIWith(t *testing.T, fetcher func(bool) ops.Fetcher, now func() time.Time, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, NewFetcher: fetcher, Now: now}
	code := e.Run(context.Background(), args)
	return out.String(), errb.String(), code
}

func writeConfig(t *testing.T, doc string) string {
	path := filepath.Join(t.TempDir(), "monitor.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMonitorCommandShowsTheOutcomeWithinTwoIntervals: the command, its
// periodic jobs every second, a loopback seller: the API shows the check.
func TestMonitorCommandShowsTheOutcomeWithinTwoIntervals(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { monitorCommandOn(t, "sqlite:"+filepath.Join(t.TempDir(), "m.db")) })
	t.Run("postgres", func(t *testing.T) {
		dsn, _ := pgSchema(t)
		monitorCommandOn(t, dsn)
	})
}

func monitorCommandOn(t *testing.T, storeDSN string) {
	seller := populatedSeller(t)
	cfg := writeConfig(t, `{"endpoints": [{"id": "seller", "url": "`+seller.URL+`/paid", "ops": ["check"], "every": "1s"}]}`)
	base, stderr, wait := startCLI(t, "monitor", "--config", cfg, "--store", storeDSN, "--data-dir", t.TempDir(),
		"--addr", "127.0.0.1:0", "--allow-private")
	var v struct {
		Status string
		Latest map[string]struct{ Outcome, State string }
	}
	deadline := time.Now().Add(60 * time.Second)
	for v.Latest["check"].State == "" {
		res, err := http.Get(base + "/api/v1/endpoints/seller")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&v)
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no check recorded: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c := v.Latest["check"]; c.Outcome != "passing" || c.State != "POPULATED" || v.Status != "unknown" {
		t.Errorf("got %+v", v)
	}
	res, err := http.Get(base + "/probe?target=seller&module=check")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(p), "probe_success 1") {
		t.Errorf("/probe: %s", p)
	}
	if code := wait(); code != ExitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	// One structured line per check: id, op, outcome, duration.
	if log := stderr.String(); !regexp.MustCompile(`msg=check id=seller op=check outcome=passing state=POPULATED duration_ms=\d+`).MatchString(log) {
		t.Errorf("no check log line in %s", log)
	}
}

func TestMonitorCommandRefusals(t *testing.T) {
	bad := writeConfig(t, "{\"endpoints\": [{\"id\": \"a\", \"url\": \"https://x.example/\",\n \"ops\": [\"check\"], \"every\": \"500ms\"}]}")
	yaml := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(yaml, []byte("endpoints: []\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no config", []string{"monitor"}, exitUsage, "--config is required"},
		{"missing file", []string{"monitor", "--config", filepath.Join(t.TempDir(), "none.json")}, exitUsage, "cannot open none.json"},
		{"bad every names line and field", []string{"monitor", "--config", bad}, exitUsage, "config:2:29: endpoints[0].every: must be at least 1s"},
		{"webhook secret not set", []string{"monitor", "--config", writeConfig(t, `{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}], "webhooks": [{"url": "https://h.example/", "secret_env": "HOOK_SECRET_UNSET", "events": ["outcome_changed"]}]}`),
			"--store", "sqlite:" + filepath.Join(t.TempDir(), "m.db")}, exitUsage, "webhooks[0].secret_env: HOOK_SECRET_UNSET is not set"},
		{"yaml is refused", []string{"monitor", "--config", yaml}, exitUsage, "YAML is not read"},
		{"bad store", []string{"monitor", "--config", writeConfig(t, `{"endpoints": [{"id": "a", "url": "https://x.example/", "ops": ["check"], "every": "1m"}]}`), "--store", "mysql://x"}, exitUsage, "--store must be"},
		{"workers past the limit", []string{"monitor", "--config", yaml, "--workers", "1001"}, exitUsage, "--workers must be in [1, 1000]"},
		{"no connection to a host", []string{"monitor", "--config", yaml, "--host-conns", "0"}, exitUsage, "--host-conns must be in [1, 64]"},
		{"host connections past the limit", []string{"monitor", "--config", yaml, "--host-conns", "65"}, exitUsage, "--host-conns must be in [1, 64]"},
		{"negative spacing", []string{"monitor", "--config", yaml, "--host-spacing", "-1ms"}, exitUsage, "--host-spacing must be in [0, 1m]"},
		{"spacing past a minute", []string{"monitor", "--config", yaml, "--host-spacing", "61s"}, exitUsage, "--host-spacing must be in [0, 1m]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, nil, false, nil, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestServeWithMonitorRunsBothInOneProcess: serve --monitor answers the
// paid service's routes and the monitor's, and the monitor checks.
func TestServeWithMonitorRunsBothInOneProcess(t *testing.T) {
	seller := populatedSeller(t)
	// every 1h: the new endpoint is checked once at start, and its outcome
	// stays fresh (two intervals) whatever the load when metrics are read.
	cfg := writeConfig(t, `{"endpoints": [{"id": "seller", "url": "`+seller.URL+`/paid", "ops": ["check"], "every": "1h"}]}`)
	base, stderr, wait := startCLI(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--pay-to", wallet,
		"--token-account", account, "--solana-rpc", fakeRPC(t), "--allow-private-targets", "--monitor", cfg)
	res, err := http.Get(base + "/toll/payability/check")
	if err != nil || res.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("serve's challenge: %v %v", err, res)
	}
	res.Body.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v struct {
			Latest map[string]struct{ State string }
		}
		res, err := http.Get(base + "/api/v1/endpoints/seller")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&v)
		res.Body.Close()
		if v.Latest["check"].State == "POPULATED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the monitor recorded nothing: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, err = http.Get(base + "/metrics/monitor")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(m), `payability_monitor_outcome{endpoint="seller",op="check",outcome="passing"} 1`) {
		t.Errorf("monitor metrics under serve: %s", m)
	}
	if code := wait(); code != ExitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	bad := writeConfig(t, `{"endpoints": []}`)
	_, errs, code := runCLI(t, nil, false, nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--pay-to", wallet,
		"--token-account", account, "--solana-rpc", fakeRPC(t), "--monitor", bad)
	if code != exitUsage || !strings.Contains(errs, "--monitor: config:1:15: endpoints: at least one endpoint") {
		t.Errorf("bad monitor config: exit %d %q", code, errs)
	}
}

// TestMonitorIsPoliteToAHost: 8 endpoints on one loopback seller, 8
// workers, at most 2 connections to a host. Each endpoint is new, so each
// is checked at once, and the seller holds every request until the test
// releases it: the test waits (barriers, no clock) until the seller has 2
// requests in hand and River has all 8 checks running, so 6 are held back
// by the limit, then releases them. The seller never has more than 2 in
// hand. No request can time out (FetchTimeout is long), so no abandoned
// request is ever counted.
func TestMonitorIsPoliteToAHost(t *testing.T) {
	const limit, n = 2, 8
	seller := populatedSeller(t)
	var (
		mu             sync.Mutex
		inFlight, most int
		served         int
		release        = make(chan struct{})
	)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-release
		seller.Config.Handler.ServeHTTP(w, r)
		mu.Lock()
		inFlight--
		served++
		mu.Unlock()
	}))
	t.Cleanup(gate.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	var eps []string
	for i := range n {
		eps = append(eps, fmt.Sprintf(`{"id": "e%d", "url": "%s/paid/%d", "ops": ["check"], "every": "1h"}`, i, gate.URL, i))
	}
	cfg := writeConfig(t, `{"endpoints": [`+strings.Join(eps, ",")+`]}`)
	db := filepath.Join(t.TempDir(), "m.db")
	_, stderr, wait := startCLIEnv(t, Env{FetchTimeout: 10 * time.Minute}, "monitor", "--config", cfg, "--store", "sqlite:"+db,
		"--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-private", "--workers", "8", "--host-conns", "2", "--host-spacing", "0")
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // ends a hung test only
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never %s: %s", what, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	inHand := func() int {
		mu.Lock()
		defer mu.Unlock()
		return inFlight
	}
	until("2 requests in hand", func() bool { return inHand() >= limit })
	conn, err := schedule.OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	until("8 checks running", func() bool {
		var running int
		err := conn.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'payability_monitor_check' AND state = 'running'`).Scan(&running)
		return err == nil && running == n
	})
	if got := inHand(); got != limit {
		t.Errorf("with %d checks running the seller has %d requests in hand, want %d", n, got, limit)
	}
	released = true
	close(release)
	until("8 requests served", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return served >= n
	})
	if code := wait(); code != ExitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if most > limit {
		t.Errorf("the seller had %d requests in hand at once, limit %d per host", most, limit)
	}
}
