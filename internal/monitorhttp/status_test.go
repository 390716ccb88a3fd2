package monitorhttp_test

import (
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
)

// TestStatusFromPreflightAndLint: a fail-closed v2 seller is GO and
// conforms (operational, from preflight); broken it is STOP (critical);
// an endpoint with lint only is rated from lint; two intervals without an
// observation is unknown.
func TestStatusFromPreflightAndLint(t *testing.T) {
	s := newV2Seller(t)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "pf", URL: s.URL + "/paid", Ops: []string{"preflight", "lint"}},
		monitor.Endpoint{ID: "li", URL: s.URL + "/paid", Ops: []string{"lint"}},
	))
	pf := h.check("pf", "preflight")
	if pf.State != "GO" || !pf.Passing || len(pf.TermsSHA256) != 64 {
		t.Fatalf("preflight: %+v", pf)
	}
	if l := h.check("li", "lint"); l.State != monitor.LintConforms || !l.Passing {
		t.Fatalf("lint: %+v", l)
	}
	status := func(id string) monitorhttp.EndpointView {
		var v monitorhttp.EndpointView
		h.getJSON("/api/v1/endpoints/"+id, &v)
		return v
	}
	if v := status("pf"); v.Status != "operational" || *v.StatusSource != "preflight" || *v.Latest["preflight"].TermsSHA256 != pf.TermsSHA256 {
		t.Errorf("pf: %+v", v)
	}
	if v := status("li"); v.Status != "operational" || *v.StatusSource != "lint" {
		t.Errorf("li: %+v", v)
	}
	h.advance(time.Minute)
	s.broken.Store(true)
	stop := h.check("pf", "preflight")
	if stop.State != "STOP" || stop.Passing || stop.TermsSHA256 != "" || len(stop.Reasons) == 0 || stop.Reasons[0] != "not_402" {
		t.Fatalf("broken preflight: %+v", stop)
	}
	if l := h.check("li", "lint"); l.State != monitor.LintErrors {
		t.Fatalf("broken lint: %+v", l)
	}
	if v := status("pf"); v.Status != "critical" {
		t.Errorf("pf broken: %s, want critical", v.Status)
	}
	if v := status("li"); v.Status != "critical" {
		t.Errorf("li broken: %s, want critical", v.Status)
	}
	h.advance(2*time.Minute + time.Millisecond)
	if v := status("pf"); v.Status != "unknown" {
		t.Errorf("pf after two intervals: %s, want unknown", v.Status)
	}
}
