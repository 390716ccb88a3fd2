package monitorhttp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/report"
)

// TestReliabilityRecord: signed, verifiable with the served JWKS; an open
// incident from the first STOP of the current run; never a payee, asset or
// amount; no paid-delivery figure.
func TestReliabilityRecord(t *testing.T) {
	s := newV2Seller(t)
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "pf", URL: s.URL + "/paid", Ops: []string{"preflight"}}))
	h.check("pf", "preflight")
	record := func() (map[string]any, []byte) {
		code, _, body := h.get("/api/v1/reliability/pf")
		if code != 200 {
			t.Fatalf("record: %d %s", code, body)
		}
		_, _, jwks := h.get("/.well-known/jwks.json")
		keys, err := report.ParseJWKS(jwks)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := report.Verify(body, keys); err != nil {
			t.Fatalf("the record does not verify against the served JWKS: %v", err)
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		return m, body
	}
	r, _ := record()
	if r["status"] != "operational" || r["active_incident"] != nil || r["source"] != "payability" || r["checks_30d"] != float64(1) {
		t.Errorf("healthy record %v", r)
	}
	// http endpoints are not normalizable as the skill wants: the URL is
	// given as configured, and a consumer's binding refuses it.
	if r["endpoint_url"] != s.URL+"/paid" {
		t.Errorf("endpoint_url %v", r["endpoint_url"])
	}
	// No network is configured: the record names the CAIP-2 network of the
	// entry the preflight selected, the one its terms_sha256 hashes.
	if r["network"] != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" || r["terms_sha256"] == nil {
		t.Errorf("network %v, terms_sha256 %v: want the selected entry's", r["network"], r["terms_sha256"])
	}
	h.advance(time.Minute)
	s.broken.Store(true)
	first := h.check("pf", "preflight")
	h.advance(time.Minute)
	h.check("pf", "preflight")
	r, raw := record()
	in, _ := r["active_incident"].(map[string]any)
	if r["status"] != "critical" || in == nil || in["severity"] != "critical" || in["failure_stage"] != "not_402" || in["opened_at"] != criteria.Timestamp(first.At) {
		t.Errorf("critical record %v", r)
	}
	if r["terms_sha256"] != nil || r["network"] != nil {
		t.Errorf("a STOP with no entry selected still carries a hash or network: %v %v", r["terms_sha256"], r["network"])
	}
	if r["passing_percent_30d"] != "33.3" || r["checks_30d"] != float64(3) {
		t.Errorf("30 days: %v of %v", r["passing_percent_30d"], r["checks_30d"])
	}
	for _, k := range []string{"payee_address", "token_address", "paid_delivery_percent", "pay_to", "asset", "amount"} {
		if _, ok := r[k]; ok {
			t.Errorf("the record carries %s", k)
		}
	}
	_ = raw
	if code, _, _ := h.get("/api/v1/reliability/nope"); code != 404 {
		t.Errorf("unknown id: %d", code)
	}
}
