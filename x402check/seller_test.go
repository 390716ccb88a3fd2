package x402check_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// seller is a loopback x402 v2 seller of GET /weather on Solana. An honest
// one refuses every payment it cannot verify; a fail-open one serves any
// request that carries a payment header.
type seller struct {
	failOpen bool
	headOpen bool // HEAD is served unpaid (HOLD method_open)
	post     bool // the route is POST
	payTo    string
	bodies   []string // the bodies of the POSTs it received

	mu       sync.Mutex
	srv      *httptest.Server
	payments int // requests that carried a payment header
}

func newSeller(failOpen bool) *seller {
	s := &seller{failOpen: failOpen, payTo: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}
	s.srv = httptest.NewServer(s)
	return s
}

func (s *seller) URL() string { return s.srv.URL + "/weather" }
func (s *seller) Close()      { s.srv.Close() }

func (s *seller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	gated := http.MethodGet
	if s.post {
		gated = http.MethodPost
	}
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
	}
	if r.URL.Path != "/weather" || (r.Method != gated && r.Method != http.MethodHead) {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodHead && s.headOpen {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	if sig := r.Header.Get("PAYMENT-SIGNATURE"); sig != "" {
		s.mu.Lock()
		s.payments++
		s.mu.Unlock()
		switch {
		case s.failOpen:
			w.Write([]byte(`{"forecast":"sunny"}`))
		case sig == "bogus-not-a-payment-header":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_payment_header"}`))
		default:
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"error":"invalid_exact_svm_payload_transaction"}`))
		}
		return
	}
	doc := map[string]any{"x402Version": 2,
		"resource": map[string]any{"url": s.URL(), "description": "A forecast for one city.", "mimeType": "application/json"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "amount": "10000",
			"asset": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "payTo": s.payTo, "maxTimeoutSeconds": 60,
			"extra": map[string]any{"feePayer": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4"}}}}
	raw, _ := json.Marshal(doc)
	w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(raw))
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write([]byte(`{}`))
}
