package server

import (
	"net/http"
	"strings"

	"github.com/exchangerebel/payability/internal/gate"
)

// CORS on the paid routes, so a buyer's code running in a browser can read
// the challenge and pay. A paid route spends nothing without a payment, so
// any origin may call it. The free pre-check is deliberately NOT opened to
// other origins: its JSON content type forces a preflight that fails there,
// so another site's script cannot spend a visitor's free allowance.
var (
	corsExposeHeaders = strings.Join([]string{gateHeader, "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"}, ", ")
	corsAllowHeaders  = strings.Join([]string{"Content-Type", gate.HeaderPaymentSignature, gate.HeaderXPayment,
		gate.HeaderPaymentTx, gate.HeaderPaymentMemo}, ", ")
)

const (
	corsAllowMethods = "GET, HEAD, POST, OPTIONS"
	corsMaxAge       = "600"
)

// withCORS sets the CORS answer headers of a paid route.
func (s *Server) withCORS(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
		h(w, r)
	}
}

// handlePreflight answers the OPTIONS preflight of a paid route.
func (s *Server) handlePreflight(route string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.count(route, "preflight")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", corsAllowMethods)
		w.Header().Set("Access-Control-Allow-Headers", corsAllowHeaders)
		w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
		w.Header().Set("Access-Control-Max-Age", corsMaxAge)
		w.Header().Set("Allow", corsAllowMethods)
		w.WriteHeader(http.StatusNoContent)
	}
}

// publicRead lets any origin read a public, read-only document.
func publicRead(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h(w, r)
	}
}
