package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/gate"
)

// When the graders do not pass the pinned corpus, paid ops are not sold: no
// answer may carry a challenge inviting a payment that would then be refused.
func TestPaidOpsNotSoldOfferNoChallenge(t *testing.T) {
	h := newHarness(t, ServeAll)
	h.s.cfg.ReadyCorpus = false
	seller := sellerTarget(t)
	body := fmt.Sprintf(`{"url":%q}`, seller.URL)
	check := func(name string, res response) {
		t.Helper()
		if res.status == http.StatusPaymentRequired || res.header.Get("PAYMENT-REQUIRED") != "" || strings.Contains(string(res.body), `"accepts"`) {
			t.Errorf("%s: %d offers a challenge: %s", name, res.status, res.body)
		}
	}
	for _, path := range allPaidRoutes {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			res := h.do(m, path, "", nil)
			check(m+" "+path, res)
			if res.status != http.StatusServiceUnavailable {
				t.Errorf("%s %s: %d, want 503", m, path, res.status)
			}
		}
		res := h.do(http.MethodPost, path, body, nil)
		check("POST "+path, res)
		if res.status != http.StatusServiceUnavailable || !strings.Contains(string(res.body), `"corpus_not_passing"`) {
			t.Errorf("POST %s: %d %s, want 503 corpus_not_passing", path, res.status, res.body)
		}
		res = h.do(http.MethodPost, path, body, map[string]string{gate.HeaderPaymentTx: h.chain.payNothing(), gate.HeaderPaymentMemo: "pv-x"})
		if res.status != http.StatusServiceUnavailable {
			t.Errorf("paid POST %s: %d", path, res.status)
		}
	}
	// Free refusals stay what they are.
	if res := h.do(http.MethodPost, "/toll/payability/check", `{}`, nil); res.status != http.StatusServiceUnavailable && res.status != http.StatusBadRequest {
		t.Errorf("POST {}: %d", res.status)
	}
	// The free tier's exhaustion answer offers no paid challenge either.
	h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://seller.example/","caller":"`+testWallet("w")+`"}`, nil)
	res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://seller.example/","caller":"`+testWallet("w")+`"}`, nil)
	check("exhausted pre-check", res)
	if !strings.Contains(string(res.body), `"free_min_interval"`) {
		t.Errorf("exhausted pre-check does not say why: %d %s", res.status, res.body)
	}
}
