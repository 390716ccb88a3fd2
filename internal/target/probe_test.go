package target

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

func railProbeCriteria(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "criteria", "rail-probe.criteria.json"))
	if err != nil {
		t.Fatalf("read the embedded rail-probe criteria: %v", err)
	}
	return b
}

func TestInventoryMatchesCriteria(t *testing.T) {
	var doc struct {
		ProbeInventory []struct{ ID, Method string } `json:"probe_inventory"`
		TargetFetch    struct {
			ProbesPerCall int `json:"probes_per_call"`
		} `json:"target_fetch"`
	}
	if err := json.Unmarshal(railProbeCriteria(t), &doc); err != nil {
		t.Fatal(err)
	}
	inv := Inventory()
	if len(inv) != doc.TargetFetch.ProbesPerCall || len(inv) != len(doc.ProbeInventory) {
		t.Fatalf("inventory has %d probes, criteria publish %d (%d per call)",
			len(inv), len(doc.ProbeInventory), doc.TargetFetch.ProbesPerCall)
	}
	for i, want := range doc.ProbeInventory {
		if inv[i].ID != want.ID || inv[i].Method != want.Method {
			t.Errorf("probe %d = %s %s, want %s %s", i, inv[i].ID, inv[i].Method, want.ID, want.Method)
		}
	}
}

func TestProbeLiteralsAppearInCriteria(t *testing.T) {
	text := string(railProbeCriteria(t))
	for _, lit := range []string{
		DirectTx, DirectMemo, BogusPayment, ProbeUserAgent,
		"X-Payment-Tx", "X-Payment-Memo", "PAYMENT-SIGNATURE", "X-PAYMENT",
	} {
		if !strings.Contains(text, lit) {
			t.Errorf("criteria do not contain %q verbatim", lit)
		}
	}
	// The criteria print the facilitator JSON loosely (unquoted); its pieces
	// must all be there, and our exact JSON must say the same thing.
	for _, piece := range []string{
		"x402Version:2", "scheme:exact", "network:solana", "signature:PROBE-INVALID-SIGNATURE",
		"authorization:{from:PROBE, to:PROBE, value:0}",
	} {
		if !strings.Contains(text, piece) {
			t.Errorf("criteria do not contain the facilitator piece %q", piece)
		}
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(FacilitatorPayload), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"x402Version": 2.0, "scheme": "exact", "network": "solana",
		"payload": map[string]any{
			"signature":     "PROBE-INVALID-SIGNATURE",
			"authorization": map[string]any{"from": "PROBE", "to": "PROBE", "value": 0.0},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("facilitator payload = %v, want %v", got, want)
	}
}

func TestInventoryPayloads(t *testing.T) {
	const ct = "application/json"
	sig := base64.StdEncoding.EncodeToString([]byte(FacilitatorPayload))
	want := []Probe{
		{ID: "baseline_get", Method: "GET"},
		{ID: "head", Method: "HEAD"},
		{ID: "post_unpaid", Method: "POST", Header: map[string]string{"Content-Type": ct}, Body: []byte("{}")},
		{ID: "direct", Method: "POST", Header: map[string]string{
			"Content-Type":   ct,
			"X-Payment-Tx":   "PROBE-INVALID-NOT-A-REAL-TX-SIGNATURE-000000000000000000000000000000000000",
			"X-Payment-Memo": "probe-memo-not-bound-to-any-challenge",
		}, Body: []byte("{}")},
		{ID: "facilitator", Method: "POST", Header: map[string]string{"Content-Type": ct, "PAYMENT-SIGNATURE": sig}, Body: []byte("{}")},
		{ID: "missing_memo", Method: "POST", Header: map[string]string{
			"Content-Type": ct,
			"X-Payment-Tx": "PROBE-INVALID-NOT-A-REAL-TX-SIGNATURE-000000000000000000000000000000000000",
		}, Body: []byte("{}")},
		{ID: "bogus", Method: "POST", Header: map[string]string{"Content-Type": ct, "X-PAYMENT": "bogus-not-a-payment-header"}, Body: []byte("{}")},
	}
	got := Inventory()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Inventory() =\n%+v\nwant\n%+v", got, want)
	}
	// The header value is the standard, padded alphabet of exactly the payload.
	decoded, err := base64.StdEncoding.Strict().DecodeString(got[4].Header["PAYMENT-SIGNATURE"])
	if err != nil || string(decoded) != `{"x402Version":2,"scheme":"exact","network":"solana","payload":{"signature":"PROBE-INVALID-SIGNATURE","authorization":{"from":"PROBE","to":"PROBE","value":0}}}` {
		t.Fatalf("PAYMENT-SIGNATURE decodes to %q (%v)", decoded, err)
	}
	// Fresh values each call: altering one inventory does not alter the next.
	got[3].Header["X-Payment-Tx"] = "tampered"
	got[2].Body[0] = '['
	again := Inventory()
	if again[3].Header["X-Payment-Tx"] != DirectTx || string(again[2].Body) != "{}" {
		t.Fatal("Inventory shares state between calls")
	}
}

func TestRunProbesSendsTheInventory(t *testing.T) {
	rec := &recorder{}
	srv := newServer(t, rec)
	got := privateClient().RunProbes(context.Background(), srv.URL+"/paid")
	if len(got) != 7 {
		t.Fatalf("RunProbes returned %d captures, want 7", len(got))
	}
	for i, c := range got {
		if c.Outcome != capture.OK || c.Status != http.StatusPaymentRequired {
			t.Errorf("capture %d = %v %d, want ok 402", i, c.Outcome, c.Status)
		}
	}
	reqs := rec.requests()
	inv := Inventory()
	if len(reqs) != len(inv) {
		t.Fatalf("target saw %d requests, want %d", len(reqs), len(inv))
	}
	for i, p := range inv {
		r := reqs[i]
		if r.Method != p.Method {
			t.Errorf("%s: method %s, want %s", p.ID, r.Method, p.Method)
		}
		if string(r.Body) != string(p.Body) {
			t.Errorf("%s: body %q, want %q", p.ID, r.Body, p.Body)
		}
		wantHeader := map[string]string{"User-Agent": ProbeUserAgent}
		if p.Method == http.MethodHead {
			// The only framing field: the probes share one connection
			// scope, and an HTTP/1 connection is not reused after a HEAD.
			wantHeader["Connection"] = "close"
		}
		for k, v := range p.Header {
			wantHeader[http.CanonicalHeaderKey(k)] = v
		}
		if p.Body != nil {
			wantHeader["Content-Length"] = "2"
		}
		gotHeader := map[string]string{}
		for k, v := range r.Header {
			if len(v) != 1 {
				t.Errorf("%s: header %s sent %d times", p.ID, k, len(v))
			}
			gotHeader[k] = v[0]
		}
		if !reflect.DeepEqual(gotHeader, wantHeader) {
			t.Errorf("%s: headers\n%v\nwant\n%v", p.ID, gotHeader, wantHeader)
		}
	}
}

func TestRunProbesStopsAfterAFailedBaseline(t *testing.T) {
	tests := []struct {
		name    string
		answer  http.HandlerFunc
		want    capture.Outcome
		wantHit int
	}{
		{"baseline over cap", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(402); writeN(w, capture.BodyCapBytes+1) }, capture.OverCap, 1},
		{"baseline timeout", func(w http.ResponseWriter, r *http.Request) { stall(r) }, capture.Timeout, 1}, // shortClient below
		{"baseline reset", func(w http.ResponseWriter, r *http.Request) { reset(t, w, "") }, capture.Failed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: tt.answer}
			srv := newServer(t, rec)
			c := privateClient()
			if tt.want == capture.Timeout {
				c = shortClient() // the target never answers
			}
			got := c.RunProbes(context.Background(), srv.URL)
			if len(got) != 7 || got[0].Outcome != tt.want {
				t.Fatalf("got %d captures, baseline %v; want 7, %v", len(got), got[0].Outcome, tt.want)
			}
			for i, c := range got[1:] {
				if !reflect.DeepEqual(c, capture.Capture{Outcome: capture.NotSent}) {
					t.Errorf("probe %d = %+v, want not_sent", i+1, c)
				}
			}
			if n := len(rec.requests()); n != tt.wantHit {
				t.Fatalf("target saw %d requests, want %d", n, tt.wantHit)
			}
		})
	}
	t.Run("baseline refused by the guard", func(t *testing.T) {
		rec := &recorder{}
		srv := newServer(t, rec)
		got := New(Options{Timeout: testTimeout}).RunProbes(context.Background(), srv.URL)
		if len(got) != 7 || got[0].Outcome != capture.Failed || got[6].Outcome != capture.NotSent {
			t.Fatalf("captures = %+v", got)
		}
		if n := len(rec.requests()); n != 0 {
			t.Fatalf("target saw %d requests, want 0", n)
		}
	})
}

func TestRunProbesGoesOnAfterALaterFailure(t *testing.T) {
	rec := &recorder{}
	rec.answer = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Payment") != "" { // bogus, the last probe
			reset(t, w, "")
			return
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(402)
	}
	srv := newServer(t, rec)
	got := privateClient().RunProbes(context.Background(), srv.URL)
	outcomes := make([]capture.Outcome, len(got))
	for i, c := range got {
		outcomes[i] = c.Outcome
	}
	want := []capture.Outcome{"ok", "ok", "ok", "ok", "ok", "ok", "failed"}
	if !reflect.DeepEqual(outcomes, want) {
		t.Fatalf("outcomes = %v, want %v", outcomes, want)
	}
	if got[1].Status != http.StatusOK {
		t.Errorf("HEAD status = %d, want 200", got[1].Status)
	}
}
