package monitorhttp_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// v2Seller is a loopback x402 v2 seller on Solana that fails closed: a
// challenge with a fresh memo to an unpaid request, a 402 refusal with a
// reason to any payment it cannot verify, 405 to other methods. payTo can
// be changed (a changed payee: other terms).
type v2Seller struct {
	*httptest.Server
	payTo  atomic.Value // string
	broken atomic.Bool  // answers 200 to everything: not a 402
}

func newV2Seller(t *testing.T) *v2Seller {
	s := &v2Seller{}
	s.payTo.Store("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin")
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.broken.Load() {
			w.Write([]byte("free"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE")
		sig := r.Header.Get("PAYMENT-SIGNATURE") + r.Header.Get("X-PAYMENT")
		if sig != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"error":"invalid_exact_svm_payload_transaction"}`))
			return
		}
		doc := map[string]any{"x402Version": 2, "resource": map[string]any{"url": s.URL + r.URL.Path},
			"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "1000",
				"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": s.payTo.Load().(string),
				"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", "memo": rand.Text()}}}}
		raw, _ := json.Marshal(doc)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(raw))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(s.Close)
	return s
}
