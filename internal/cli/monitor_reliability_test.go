//go:build !quick

package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// sellerHost is the public name of the test seller: a loopback fetcher maps
// it to the loopback server, so URLs are https and normalizable as the
// skill wants.
const sellerHost = "seller.example"

// mappedFetcher is the guarded target client with https://seller.example
// mapped to a loopback seller; everything else must be loopback already.
type mappedFetcher struct {
	*target.Client
	seller *url.URL
}

func (m mappedFetcher) mapURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Host == sellerHost {
		u.Scheme, u.Host = m.seller.Scheme, m.seller.Host
		return u.String()
	}
	return raw
}

func (m mappedFetcher) Get(ctx context.Context, raw string) capture.Capture {
	return m.Client.Get(ctx, m.mapURL(raw))
}

func (m mappedFetcher) Do(ctx context.Context, r target.Request) capture.Capture {
	r.URL = m.mapURL(r.URL)
	return m.Client.Do(ctx, r)
}

func (m mappedFetcher) RunProbes(ctx context.Context, raw string) []capture.Capture {
	return m.Client.RunProbes(ctx, m.mapURL(raw))
}

// termsSeller is a fail-closed x402 v2 seller on Solana whose payee can be
// changed.
func termsSeller(t *testing.T, payTo *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE")
		if r.Header.Get("PAYMENT-SIGNATURE")+r.Header.Get("X-PAYMENT") != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"error":"invalid_exact_svm_payload_transaction"}`))
			return
		}
		doc := map[string]any{"x402Version": 2, "resource": map[string]any{"url": "https://" + sellerHost + r.URL.Path},
			"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "1000",
				"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": payTo.Load().(string),
				"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "memo": rand.Text()}}}}
		raw, _ := json.Marshal(doc)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(raw))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReliabilityBindsAMonitoredRecordEndToEnd: a monitor preflights a
// healthy seller (GO) and serves its signed record; payability reliability
// --source payability verifies the signature against the monitor's JWKS,
// recomputes terms_sha256 from the live 402 and comes out favourable. A
// changed payee, a stale record and an unknown id come out unverified.
func TestReliabilityBindsAMonitoredRecordEndToEnd(t *testing.T) {
	var payTo atomic.Value
	payTo.Store("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin")
	seller := termsSeller(t, &payTo)
	su, _ := url.Parse(seller.URL)
	fetcher := func(bool) ops.Fetcher {
		return mappedFetcher{Client: target.New(target.Options{AllowPrivate: true, Timeout: 10 * time.Second}), seller: su}
	}
	// every 1h: the start inserts the one preflight this test reads, and
	// no other runs while it changes the seller.
	cfg := writeConfig(t, `{"endpoints": [{"id": "seller", "url": "https://`+sellerHost+`/paid", "ops": ["preflight"], "every": "1h",
		"network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}]}`)
	base, stderr, _ := startCLIWith(t, fetcher, nil, "monitor", "--config", cfg, "--store", "sqlite:"+t.TempDir()+"/m.db",
		"--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-private")
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v struct{ Status string }
		res, err := http.Get(base + "/api/v1/endpoints/seller")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&v)
		res.Body.Close()
		if v.Status == "operational" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the seller never became operational: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var record map[string]any
	res, err := http.Get(base + "/api/v1/reliability/seller")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&record)
	res.Body.Close()
	for _, k := range []string{"payee_address", "token_address", "paid_delivery_percent", "amount"} {
		if _, ok := record[k]; ok {
			t.Errorf("the record carries %s", k)
		}
	}
	if record["endpoint_url"] != "https://seller.example/paid" || record["status"] != "operational" || record["active_incident"] != nil ||
		record["network"] != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" || len(record["terms_sha256"].(string)) != 64 ||
		record["checks_30d"] != float64(1) || record["passing_percent_30d"] != "100.0" || record["signature"] == nil {
		t.Errorf("record %v", record)
	}
	if nm, _ := record["not_measured"].([]any); len(nm) != 1 || nm[0] != "paid_delivery" {
		t.Errorf("not_measured %v", record["not_measured"])
	}

	rel := func(now time.Time, id string) (string, int) {
		out, errs, code := runCLIWith(t, fetcher, func() time.Time { return now }, "reliability", "--source", "payability",
			"--api", base, "--service-id", id, "--intended-url", "https://seller.example/paid", "--allow-private")
		return out + errs, code
	}
	out, code := rel(time.Now(), "seller")
	if code != 0 || !strings.Contains(out, "Decision: favourable (operational_terms_bound)") || !strings.Contains(out, "Bound to: the live header accepts[0]") ||
		!strings.Contains(out, "paid delivery not measured") {
		t.Errorf("healthy: exit %d\n%s", code, out)
	}
	if out, code := rel(time.Now().Add(61*time.Minute), "seller"); code != 30 || !strings.Contains(out, "last_verified_at") || !strings.Contains(out, "stale") {
		t.Errorf("stale: exit %d\n%s", code, out)
	}
	if out, code := rel(time.Now(), "nope"); code != 30 || !strings.Contains(out, "not_monitored") {
		t.Errorf("unknown id: exit %d\n%s", code, out)
	}
	payTo.Store("7EYnhQoR9YM3N7UoaKRoA44Uy8JeaZV3qyouov87awMs")
	if out, code := rel(time.Now(), "seller"); code != 30 || !strings.Contains(out, "terms_sha256") || !strings.Contains(out, "mismatch") {
		t.Errorf("changed payee: exit %d\n%s", code, out)
	}
}
