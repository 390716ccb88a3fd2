package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// withFacilitator configures the harness's gate with the facilitator rail,
// on a fake loopback facilitator, as serve does at start.
func withFacilitator(t *testing.T, h *harness) *facilitatortest.Fake {
	t.Helper()
	fake := facilitatortest.New(t)
	client, err := facilitator.NewClient(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := facilitator.Discover(context.Background(), client, gate.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	h.gate.Terms.FeePayer = sup.FeePayer
	h.gate.Facilitator = &facilitator.Rail{Client: client, Terms: h.gate.Terms, Memos: h.gate.Memos,
		Versions: sup.Versions, Now: h.clock.Now, SettleTimeout: 10 * time.Second, Store: h.store}
	return fake
}

// countingSeller is a plain x402 seller on loopback that counts its fetches.
func countingSeller(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1000"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Our own challenge still grades POPULATED, BOUND, and both rails
// PRESENT-FAIL-CLOSED with no exposures when the facilitator rail is
// offered; the facilitator probe is refused before any facilitator call.
func TestOwnGatePassesOwnChecksWithFacilitator(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	assertOwnGatePassesOwnChecks(t, h)
	if calls := fake.Calls("/verify"); len(calls)+len(fake.Calls("/settle")) != 0 {
		t.Errorf("the probes reached the facilitator: %d calls", len(fake.Calls("")))
	}
	// Every challenge names the facilitator's fee payer, body and header.
	res := h.do(http.MethodGet, "/toll/payability/check", "", nil)
	header, _ := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED"))
	for what, doc := range map[string][]byte{"body": res.body, "header": header} {
		if !strings.Contains(string(doc), `"feePayer":"`+fake.FeePayer+`"`) {
			t.Errorf("%s carries no feePayer: %s", what, doc)
		}
	}
}

// payV2 does what a v2 client does: read PAYMENT-REQUIRED of an unpaid
// POST, echo accepts[0] as accepted with a transaction carrying its memo.
func (h *harness) payV2(path, targetURL string) string {
	h.t.Helper()
	res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), nil)
	raw, err := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED"))
	if res.status != http.StatusPaymentRequired || err != nil {
		h.t.Fatalf("challenge: %d %v", res.status, err)
	}
	var c struct {
		Accepts []map[string]any `json:"accepts"`
	}
	json.Unmarshal(raw, &c)
	a := c.Accepts[0]
	amount, _ := a["amount"].(string)
	var price uint64
	fmt.Sscan(amount, &price)
	memo, _ := a["extra"].(map[string]any)["memo"].(string)
	tx := facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: facilitatortest.Address("buyer"), FeePayer: h.gate.Terms.FeePayer, Mint: a["asset"].(string),
		To: testTokenAccount, Amount: price, Memo: memo,
	})
	return facilitatortest.PayloadV2(a, tx)
}

func (h *harness) postPaid(path, targetURL, name, value string) response {
	return h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), map[string]string{name: value})
}

func TestFacilitatorV2PaymentDeliversOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	seller, _ := countingSeller(t)
	path := "/toll/payability/check"
	sig := h.payV2(path, seller.URL)
	res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
	if res.status != http.StatusOK {
		t.Fatalf("paid: %d %s", res.status, res.body)
	}
	if _, err := report.Verify(res.body, h.keys); err != nil {
		t.Fatalf("report does not verify: %v", err)
	}
	settled := fake.Calls("/settle")
	if len(settled) != 1 {
		t.Fatalf("%d settlements", len(settled))
	}
	wantTx := facilitatortest.TxOf(settled[0].Payload)
	var rep struct {
		Payment struct{ Rail, Tx string }
	}
	json.Unmarshal(res.body, &rep)
	if rep.Payment.Rail != "facilitator" || rep.Payment.Tx != wantTx {
		t.Errorf("report payment %+v", rep.Payment)
	}
	raw, err := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-RESPONSE"))
	var receipt facilitator.Receipt
	if err != nil || json.Unmarshal(raw, &receipt) != nil || !receipt.Success || receipt.Transaction != wantTx || receipt.Network != gate.Mainnet.CAIP2 {
		t.Errorf("PAYMENT-RESPONSE %q", res.header.Get("PAYMENT-RESPONSE"))
	}
	if res.header.Get("X-PAYMENT-RESPONSE") != "" {
		t.Error("a v2 payment answered with X-PAYMENT-RESPONSE")
	}
	entries, _ := h.store.Entries(context.Background(), store.OpCheck, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 || entries[0].PaymentTx != wantTx || entries[0].PayerWallet != facilitatortest.Address("buyer") {
		t.Fatalf("ledger %+v", entries)
	}
	// The same payment again: refused, and no second settlement.
	again := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
	if again.status != http.StatusPaymentRequired || !strings.Contains(string(again.body), `"payment_already_used"`) {
		t.Errorf("replay: %d %s", again.status, again.body)
	}
	if n := len(fake.Calls("/settle")); n != 1 {
		t.Errorf("%d settlements", n)
	}
}

func TestFacilitatorV1PaymentAnswersXPaymentResponse(t *testing.T) {
	h := newHarness(t, ServeAll)
	withFacilitator(t, h)
	seller, _ := countingSeller(t)
	tx := facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: facilitatortest.Address("buyer"), FeePayer: h.gate.Terms.FeePayer, Mint: gate.Mainnet.Mint,
		To: testTokenAccount, Amount: 20000,
	})
	res := h.postPaid("/toll/rail-probe/probe", seller.URL, facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana", tx))
	if res.status != http.StatusOK || res.header.Get("X-PAYMENT-RESPONSE") == "" || res.header.Get("PAYMENT-RESPONSE") != "" {
		t.Fatalf("paid: %d %v %s", res.status, res.header, res.body)
	}
}

// A facilitator that says no (HTTP 200 with isValid false), or fails the
// settlement after a valid verify: we never deliver, never run the op.
func TestFacilitatorRefusalsNeverDeliver(t *testing.T) {
	tests := []struct {
		name           string
		verify, settle func(facilitatortest.Call) facilitatortest.Answer
		code           string
	}{
		{"HTTP 200 with isValid false", func(facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 200, Body: `{"isValid":false,"invalidReason":"insufficient_funds","payer":""}`}
		}, nil, "payment_insufficient_funds"},
		{"success false after a valid verify", nil, func(facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"invalid_exact_svm_transaction_failed","transaction":"","network":""}`}
		}, "settlement_failed"},
		{"unparseable settle answer", nil, func(facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 200, Body: `{"success":tr`}
		}, "facilitator_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, ServeAll)
			fake := withFacilitator(t, h)
			fake.Set(tt.verify, tt.settle)
			seller, fetched := countingSeller(t)
			res := h.postPaid("/toll/payability/memo", seller.URL, facilitator.HeaderPaymentSignature, h.payV2("/toll/payability/memo", seller.URL))
			if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"error":"`+tt.code+`"`) {
				t.Errorf("got %d %s, want 402 %s", res.status, res.body, tt.code)
			}
			if res.header.Get("PAYMENT-REQUIRED") == "" || res.header.Get("PAYMENT-RESPONSE") != "" {
				t.Errorf("headers %v", res.header)
			}
			if fetched.Load() != 0 {
				t.Errorf("the op ran: the seller was fetched %d times", fetched.Load())
			}
			entries, _ := h.store.Entries(context.Background(), store.OpMemo, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
			if len(entries) != 0 {
				t.Errorf("ledger %+v", entries)
			}
		})
	}
}

func TestFacilitatorPendingSettlementResumes(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	var pending atomic.Bool
	pending.Store(true)
	fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		if pending.Load() {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"settlement_pending","transaction":"","network":""}`}
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	seller, _ := countingSeller(t)
	path := "/toll/payability/check"
	sig := h.payV2(path, seller.URL)
	res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
	if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"settlement_pending"`) || res.header.Get("Retry-After") == "" {
		t.Fatalf("pending: %d %v %s", res.status, res.header, res.body)
	}
	pending.Store(false)
	if res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig); res.status != http.StatusOK {
		t.Fatalf("resume: %d %s", res.status, res.body)
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 2 {
		t.Errorf("verify %d settle %d", v, s)
	}
}

// The same PAYMENT-SIGNATURE presented 50 times at once settles once and
// delivers once.
func TestFacilitatorFiftyConcurrentPresentationsDeliverOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	seller, _ := countingSeller(t)
	path := "/toll/payability/memo"
	sig := h.payV2(path, seller.URL)
	var ok, other atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
			switch res.status {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusConflict, http.StatusPaymentRequired:
				other.Add(1)
			default:
				t.Errorf("status %d %s", res.status, res.body)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Errorf("%d reports delivered, want exactly 1", ok.Load())
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
	entries, _ := h.store.Entries(context.Background(), store.OpMemo, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 {
		t.Errorf("%d ledger entries, want 1", len(entries))
	}
}

// One payment pays once across rails: a transaction settled through the
// facilitator cannot be presented again on the direct rail.
func TestFacilitatorTxCannotPayTwiceAcrossRails(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	seller, _ := countingSeller(t)
	path := "/toll/payability/check"
	if res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, h.payV2(path, seller.URL)); res.status != http.StatusOK {
		t.Fatalf("paid: %d %s", res.status, res.body)
	}
	tx := facilitatortest.TxOf(fake.Calls("/settle")[0].Payload)
	memo := h.challengeMemo(path, seller.URL)
	h.chain.mu.Lock()
	h.chain.paid[tx] = memo // the chain shows the settled transaction with a memo of ours
	h.chain.mu.Unlock()
	res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, seller.URL),
		map[string]string{gate.HeaderPaymentTx: tx, gate.HeaderPaymentMemo: memo})
	if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"payment_already_used"`) {
		t.Errorf("direct replay of a facilitator payment: %d %s", res.status, res.body)
	}
}
