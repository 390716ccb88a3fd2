package monitorhttp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
)

func TestMetricsAndProbe(t *testing.T) {
	good, bad := newSeller(t), newSeller(t)
	bad.broken.Store(true)
	secret := []byte("k")
	rc := newReceiver(t, secret)
	h := newHarnessWith(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"check", "memo"}},
		monitor.Endpoint{ID: "bad", URL: bad.URL + "/paid", Ops: []string{"check"}},
	), func(o *schedule.Options) {
		o.Receivers = []schedule.Receiver{{ID: "ops-hook", URL: rc.URL, Secret: secret}}
	})
	h.check("good", "check")
	h.check("bad", "check")
	h.advance(time.Minute)
	bad.broken.Store(false)
	h.check("bad", "check")
	rc.waitEvents(t, 1)
	h.stop() // the delivery's result is counted before its job completes

	_, _, body := h.get("/metrics")
	m := string(body)
	for _, want := range []string{
		`payability_monitor_outcome{endpoint="good",op="check",outcome="passing"} 1`,
		`payability_monitor_outcome{endpoint="good",op="check",outcome="failing"} 0`,
		`payability_monitor_outcome{endpoint="good",op="memo",outcome="unknown"} 1`,
		`payability_monitor_outcome{endpoint="bad",op="check",outcome="passing"} 1`,
		`payability_monitor_status{endpoint="good",status="unknown"} 1`,
		`payability_monitor_check_duration_seconds_count{endpoint="bad",op="check"} 2`,
		`payability_monitor_webhook_deliveries_total{result="delivered",webhook="ops-hook"} 1`,
		`payability_monitor_last_check_timestamp_seconds{endpoint="good",op="check"}`,
		`payability_monitor_history_read_errors 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Labels come from the configuration's ids only: no URL anywhere.
	if strings.Contains(m, "127.0.0.1") || strings.Contains(m, "http://") {
		t.Error("a URL is in the metrics")
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/probe?target=good&module=check", 200, "probe_success 1"},
		{"/probe?target=bad&module=check", 200, "probe_success 1"},
		{"/probe?target=good&module=memo", 200, "probe_success 0"},
		{"/probe?target=" + good.URL + "&module=check", 404, "unknown target"},
		{"/probe?target=good&module=probe", 400, "unknown module"},
		{"/probe?module=check", 400, "required"},
	} {
		code, _, body := h.get(tc.path)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %q, want %d %q", tc.path, code, body, tc.code, tc.want)
		}
		if code == 200 && !strings.Contains(string(body), "probe_duration_seconds") {
			t.Errorf("%s: no probe_duration_seconds", tc.path)
		}
	}
	if good.hits.Load() != 1 {
		t.Errorf("the seller was fetched %d times; /probe and /metrics read the history only", good.hits.Load())
	}
	// Two intervals later nothing is fresh.
	h.advance(2*time.Minute + time.Millisecond)
	if _, _, body := h.get("/probe?target=good&module=check"); !strings.Contains(string(body), "probe_success 0") {
		t.Errorf("stale probe: %s", body)
	}
}
