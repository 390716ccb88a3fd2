package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
)

// The resume promise is 15 minutes from the verification; a memo lives 15
// minutes from its challenge. A payment verified late in its memo's life
// must still resume after the memo expired: the buyer paid while it was
// valid.
func TestResumeOutlivesTheMemo(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	path := "/toll/payability/check"
	memo := h.challengeMemo(path, seller.URL)
	h.clock.Add(10 * time.Minute)
	sig := h.chain.pay(memo)
	hdr := http.Header{}
	hdr.Set(gate.HeaderPaymentTx, sig)
	hdr.Set(gate.HeaderPaymentMemo, memo)
	d, err := h.gate.Admit(context.Background(), gate.Request{Op: ops.OpCheck, Resource: h.srv.URL + path, TargetURL: seller.URL, Header: hdr})
	if err != nil || d.Kind != gate.Paid {
		t.Fatalf("admit: %v %+v", err, d)
	}
	// ... the process dies before delivering. The memo expires at minute 15.
	h.clock.Add(6 * time.Minute)
	res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, seller.URL),
		map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
	if res.status != http.StatusOK || !strings.Contains(string(res.body), `"resumed":true`) {
		t.Fatalf("resume within 15 minutes of the verification: %d %s", res.status, res.body)
	}
}

// An expired memo never records a new payment, even one that landed on chain
// while the memo was valid: after a restore from a backup, payments the
// backup forgot can be presented again only until their memos expire
// (docs/operations.md, "What a restore forgets").
func TestExpiredMemoRecordsNoNewPayment(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	path := "/toll/payability/memo"
	body := fmt.Sprintf(`{"url":%q}`, seller.URL)
	memo := h.challengeMemo(path, seller.URL)
	sig := h.chain.pay(memo)
	h.clock.Add(16 * time.Minute)
	for range 2 {
		res := h.do(http.MethodPost, path, body, map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
		if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"memo_expired"`) {
			t.Errorf("expired memo, payment never presented: %d %s", res.status, res.body)
		}
	}
	res := h.do(http.MethodPost, path, body, map[string]string{gate.HeaderPaymentTx: h.chain.payNothing(), gate.HeaderPaymentMemo: memo})
	if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"memo_expired"`) {
		t.Errorf("expired memo, no payment: %d %s", res.status, res.body)
	}
}
