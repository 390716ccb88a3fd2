package monitorhttp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// seller is a loopback x402 seller: a populated challenge with a fresh memo
// per request, or, once broken, a plain 200.
type seller struct {
	*httptest.Server
	broken atomic.Bool
	hits   atomic.Int64
	// canary, when set, is put in every fetched field.
	canary string
}

func newSeller(t *testing.T) *seller {
	s := &seller{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if s.broken.Load() {
			io.WriteString(w, "ok "+s.canary)
			return
		}
		url := s.URL + r.URL.Path
		memo := rand.Text()
		desc := "one call"
		if s.canary != "" {
			desc = s.canary
		}
		body := fmt.Sprintf(`{"x402Version":1,"error":%q,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111%s","resource":%q,"description":%q,"extra":{"usdc_token_account":"Token111","memo":%q}}]}`,
			s.canary, s.canary, url, desc, memo)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111%s","extra":{"memo":%q}}]}`, url, s.canary, memo)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// harness is one monitor on a fresh SQLite store, its scheduler driven by
// hand (no periodic jobs) and its handler on a loopback server.
type harness struct {
	t        *testing.T
	m        *monitor.Monitor
	st       *sqlite.Store
	sched    *schedule.Scheduler
	api      *httptest.Server
	now      atomic.Pointer[time.Time]
	path     string
	logs     *syncBuffer
	stopOnce sync.Once
	keys     report.KeySet
	changes  atomic.Int64 // endpoint set changes told by the API
}

// opsToken is the harness's bearer token for the changing API.
const opsToken = "test-ops-token-0123456789"

// syncBuffer is a log sink the workers and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (h *harness) dbPath() string { return h.path }

func newHarness(t *testing.T, cfg *monitor.Config) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, func(*schedule.Options) {})
}

// newHarnessWith lets the test set scheduler options (webhook receivers).
func newHarnessWith(t *testing.T, cfg *monitor.Config, opt func(*schedule.Options)) *harness {
	t.Helper()
	h := &harness{t: t}
	t0 := time.Now().UTC()
	h.now.Store(&t0)
	path := filepath.Join(t.TempDir(), "payability.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	h.st, h.path = st, path
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, Timeout: 10 * time.Second}), Now: h.clock}
	h.logs = &syncBuffer{}
	h.m = &monitor.Monitor{Config: cfg, History: st, Catalog: st, AllowPrivate: true, Observers: monitor.OpsObservers(runner), Now: h.clock,
		Log: slog.New(slog.NewTextHandler(h.logs, nil))}
	if err := h.m.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics := monitorhttp.NewMetrics(reg, h.m)
	h.m.Recorded = metrics.Recorded
	so := schedule.Options{DeliveryResult: metrics.Delivery, DB: schedule.Database{SQLitePath: path}, Monitor: h.m, NoPeriodic: true, PollInterval: 20 * time.Millisecond,
		Post: target.New(target.Options{AllowPrivate: true, Timeout: 10 * time.Second})}
	opt(&so)
	h.sched, err = schedule.Open(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sched.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	key, err := report.GenerateKey(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := report.NewKeySet(key)
	h.keys = keys
	h.api = httptest.NewServer(monitorhttp.New(monitorhttp.Config{Monitor: h.m, Registry: reg, Key: &key, KeySet: &keys, ServeJWKS: true,
		OpsToken: []byte(opsToken), Changed: func() { h.changes.Add(1) }}))
	t.Cleanup(func() {
		h.api.Close()
		h.stop()
		st.Close()
	})
	return h
}

// stop stops the scheduler (waiting for its jobs); a second call does
// nothing.
func (h *harness) stop() {
	h.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.sched.Stop(ctx)
	})
}

func (h *harness) clock() time.Time { return *h.now.Load() }

func (h *harness) advance(d time.Duration) {
	t := h.clock().Add(d)
	h.now.Store(&t)
}

// check schedules endpoint id's op for the slot of the harness's now and
// waits until it is recorded.
func (h *harness) check(id, op string) store.Observation {
	h.t.Helper()
	e, ok, err := h.m.Endpoint(context.Background(), id)
	if err != nil || !ok {
		h.t.Fatalf("endpoint %s: %v %v", id, ok, err)
	}
	slot := schedule.SlotOf(h.clock(), e.Every)
	if _, err := h.sched.Enqueue(context.Background(), id, op, slot); err != nil {
		h.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		os, err := h.st.Observations(context.Background(), id, op, time.Time{}, 1000)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, o := range os {
			if o.Slot == slot {
				return o
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s/%s slot %d never recorded", id, op, slot)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) get(path string) (int, http.Header, []byte) {
	h.t.Helper()
	res, err := http.Get(h.api.URL + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

func (h *harness) getJSON(path string, v any) int {
	h.t.Helper()
	code, _, b := h.get(path)
	if err := json.Unmarshal(b, v); err != nil {
		h.t.Fatalf("GET %s: %v in %s", path, err, b)
	}
	return code
}

func endpointsConfig(every time.Duration, eps ...monitor.Endpoint) *monitor.Config {
	for i := range eps {
		eps[i].Method = "GET"
		eps[i].Every = every
	}
	return &monitor.Config{Endpoints: eps, Retention: monitor.DefaultRetention}
}
