package monitorhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/webhook"
)

// receiver is a loopback webhook receiver that checks every signature.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	events   []webhook.Event
	invalid  int
	failNext int // answer 500 to this many deliveries first
	seen     int
}

func newReceiver(t *testing.T, secret []byte) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.seen++
		if err := webhook.Verify(secret, body, r.Header.Get(webhook.SignatureHeader), time.Now()); err != nil {
			rc.invalid++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if rc.failNext > 0 {
			rc.failNext--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var ev webhook.Event
		json.Unmarshal(body, &ev)
		if r.Header.Get(webhook.EventIDHeader) != ev.ID {
			rc.invalid++
		}
		rc.events = append(rc.events, ev)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) waitEvents(t *testing.T, n int) []webhook.Event {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]webhook.Event(nil), rc.events...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d events, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebhooksOnePerChange: the first observation is no change; breaking
// the seller, then stopping it (still failing), then restoring it gives
// exactly two signed events, in order.
func TestWebhooksOnePerChange(t *testing.T) {
	secret := []byte("whsec-test")
	rc := newReceiver(t, secret)
	s := newSeller(t)
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{{URL: rc.URL + "/hook", Secret: secret}}
		})
	step := func(f func()) {
		f()
		h.check("s", "check")
		h.advance(time.Minute)
	}
	step(func() {})                        // passing: first observation, no event
	step(func() {})                        // passing again
	step(func() { s.broken.Store(true) })  // failing: event 1
	step(func() {})                        // failing again
	step(func() { s.broken.Store(false) }) // passing: event 2
	got := rc.waitEvents(t, 2)
	// Stop the scheduler so nothing more can arrive, then count.
	h.stop()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.events) != 2 || rc.invalid != 0 {
		t.Fatalf("events %+v, invalid %d; want exactly 2 valid", rc.events, rc.invalid)
	}
	if e := got[0]; e.Type != "outcome_changed" || e.Endpoint != "s" || e.Op != "check" || e.From != "passing" || e.To != "failing" ||
		len(e.Reasons) != 1 || e.Reasons[0] != "status_not_402" || e.At == "" || e.ID == "" {
		t.Errorf("first event %+v", e)
	}
	if e := got[1]; e.From != "failing" || e.To != "passing" || len(e.Reasons) != 0 || e.ID == got[0].ID {
		t.Errorf("second event %+v", e)
	}
}

// TestWebhookRetriedUntilDelivered: a receiver that fails twice gets the
// same event (same id, freshly signed) until it accepts it, once.
func TestWebhookRetriedUntilDelivered(t *testing.T) {
	secret := []byte("whsec-test")
	rc := newReceiver(t, secret)
	rc.failNext = 1
	s := newSeller(t)
	var mu sync.Mutex
	results := map[string]int{}
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{{URL: rc.URL + "/hook", Secret: secret}}
			o.DeliveryResult = func(_, r string) { mu.Lock(); results[r]++; mu.Unlock() }
		})
	h.check("s", "check")
	h.advance(time.Minute)
	s.broken.Store(true)
	h.check("s", "check")
	rc.waitEvents(t, 1)
	h.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(rc.events) != 1 || rc.seen != 2 || results[schedule.DeliveryRetry] != 1 || results[schedule.DeliveryDelivered] != 1 {
		t.Errorf("events %d after %d deliveries, results %v; want 1 after 2 (one retry)", len(rc.events), rc.seen, results)
	}
}

// TestWebhookWithAWrongSecretIsRefused: the receiver's check is real.
func TestWebhookWithAWrongSecretIsRefused(t *testing.T) {
	rc := newReceiver(t, []byte("the receiver's secret"))
	s := newSeller(t)
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{{URL: rc.URL, Secret: []byte("another secret")}}
		})
	h.check("s", "check")
	h.advance(time.Minute)
	s.broken.Store(true)
	h.check("s", "check")
	deadline := time.Now().Add(60 * time.Second)
	for {
		rc.mu.Lock()
		n := rc.invalid
		rc.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no delivery arrived")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.stop()
	if len(rc.events) != 0 {
		t.Errorf("accepted %d events signed with the wrong secret", len(rc.events))
	}
}

// TestWebhookWhenTheSellerStops: a seller that stops answering is one
// change (passing → failing, fetch_failed), however many checks fail after.
func TestWebhookWhenTheSellerStops(t *testing.T) {
	secret := []byte("whsec-test")
	rc := newReceiver(t, secret)
	s := newSeller(t)
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{{URL: rc.URL + "/hook", Secret: secret}}
		})
	h.check("s", "check")
	s.Close()
	for range 3 {
		h.advance(time.Minute)
		if o := h.check("s", "check"); o.Passing || o.State != "NOT-A-402" {
			t.Fatalf("stopped seller: %+v", o)
		}
	}
	got := rc.waitEvents(t, 1)
	h.stop()
	if len(rc.events) != 1 || got[0].From != "passing" || got[0].To != "failing" || len(got[0].Reasons) != 1 || got[0].Reasons[0] != "fetch_failed" {
		t.Errorf("events %+v, want one passing → failing (fetch_failed)", rc.events)
	}
}

// immediately retries a failed job at once, so a test of the attempts'
// bound does not wait on the backoff.
type immediately struct{}

func (immediately) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// TestWebhookAttemptsAreBounded: a receiver that always fails gets exactly
// the bounded number of attempts, the last one counted as given up.
func TestWebhookAttemptsAreBounded(t *testing.T) {
	secret := []byte("whsec-test")
	rc := newReceiver(t, secret)
	rc.failNext = 1 << 30
	s := newSeller(t)
	var mu sync.Mutex
	results := map[string]int{}
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{{URL: rc.URL, Secret: secret}}
			o.WebhookAttempts = 3
			o.RetryPolicy = immediately{}
			o.DeliveryResult = func(_, r string) { mu.Lock(); results[r]++; mu.Unlock() }
		})
	h.check("s", "check")
	h.advance(time.Minute)
	s.broken.Store(true)
	h.check("s", "check")
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		done := results[schedule.DeliveryGaveUp]
		mu.Unlock()
		if done > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never gave up: %v", results)
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.stop()
	mu.Lock()
	defer mu.Unlock()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.seen != 3 || results[schedule.DeliveryRetry] != 2 || results[schedule.DeliveryGaveUp] != 1 || len(rc.events) != 0 {
		t.Errorf("%d deliveries, results %v; want 3 (2 retries, then given up)", rc.seen, results)
	}
}
