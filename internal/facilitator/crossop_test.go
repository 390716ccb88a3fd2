package facilitator_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
)

// probeOffer is the dearer route: an x402 v1 payload names no amount, so only
// the facilitator, asked with this route's requirements, can refuse a payment
// built for the cheaper one.
var probeOffer = gate.Offer{Op: "probe", Price: 20000, Description: "one rail-probe report"}

func probeRequest(fx *fixture, h map[string][]string) gate.Request {
	return gate.Request{Op: probeOffer.Op, Resource: "http://127.0.0.1:8402/toll/rail-probe/probe", TargetURL: targetURL, Header: h}
}

// strictVerify answers /verify like a real facilitator: the transaction (a
// transfer of offer.Price) must pay the amount of the requirements it is
// given.
func strictVerify(c facilitatortest.Call) facilitatortest.Answer {
	var req struct {
		MaxAmountRequired string `json:"maxAmountRequired"`
		Amount            string `json:"amount"`
	}
	json.Unmarshal(c.Requirements, &req)
	if req.MaxAmountRequired != "10000" && req.Amount != "10000" {
		return facilitatortest.Answer{Status: 200, Body: `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_amount_mismatch"}`}
	}
	return facilitatortest.Answer{Status: 200, Body: `{"isValid":true,"payer":"` + facilitatortest.Address("buyer") + `"}`}
}

// A v1 payload paying the check price, presented to /probe while its
// settlement for /check is in flight, must not share that settlement: it was
// never checked against the probe's requirements.
func TestInFlightSettlementIsNotSharedAcrossOps(t *testing.T) {
	fx := newFixture(t)
	fx.rail.SettleTimeout = 10 * time.Second
	release := make(chan struct{})
	settling := make(chan struct{}, 1)
	fx.fake.Set(strictVerify, func(c facilitatortest.Call) facilitatortest.Answer {
		select {
		case settling <- struct{}{}:
		default:
		}
		<-release
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	h := header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana", transaction("")))

	var wg sync.WaitGroup
	wg.Add(1)
	var checkCode gate.Code
	go func() {
		defer wg.Done()
		_, checkCode = fx.rail.Settle(context.Background(), request(h), offer)
	}()
	<-settling // the /check settlement is at the facilitator now

	var probePay gate.Payment
	var probeCode gate.Code
	wg.Add(1)
	go func() {
		defer wg.Done()
		probePay, probeCode = fx.rail.Settle(context.Background(), probeRequest(fx, h), probeOffer)
	}()
	time.Sleep(200 * time.Millisecond)
	close(release)
	wg.Wait()

	if checkCode != "" {
		t.Fatalf("the check settlement: %q", checkCode)
	}
	if probeCode == "" || probePay.Tx != "" {
		t.Errorf("a payment of 10000 units was accepted for the 20000-unit probe: %q %+v", probeCode, probePay)
	}
}

// A v1 payload whose settlement for /check is pending must not be settled for
// /probe by going straight to /settle (skipping the /verify of the probe's
// requirements).
func TestAttemptedSettlementIsNotResumedForAnotherOp(t *testing.T) {
	fx := newFixture(t)
	pending := true
	var mu sync.Mutex
	fx.fake.Set(strictVerify, func(c facilitatortest.Call) facilitatortest.Answer {
		mu.Lock()
		defer mu.Unlock()
		if pending {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"settlement_pending","transaction":"","network":"solana"}`}
		}
		// The facilitator answers from its record of the broadcast transaction.
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	h := header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana", transaction("")))
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("first: %q", code)
	}
	mu.Lock()
	pending = false
	mu.Unlock()
	pay, code := fx.rail.Settle(context.Background(), probeRequest(fx, h), probeOffer)
	if code == "" || pay.Tx != "" {
		t.Errorf("a payment of 10000 units was accepted for the 20000-unit probe: %q %+v", code, pay)
	}
	// The payment still resumes on the route it was made for.
	if pay, code := fx.rail.Settle(context.Background(), request(h), offer); code != "" || pay.Tx == "" {
		t.Errorf("resume on /check: %q %+v", code, pay)
	}
}

// The payer a facilitator names goes into the ledger and the receipt: only a
// Solana address is taken, never free text.
func TestPayerIsAnAddressOrNothing(t *testing.T) {
	fx := newFixture(t)
	fx.fake.Set(
		answer(200, `{"isValid":true,"payer":"CANARY payer <b>"}`),
		func(c facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 200, Body: `{"success":true,"transaction":"` + facilitatortest.TxOf(c.Payload) + `","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","payer":"CANARY-payer-0000"}`}
		})
	pay, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer)
	if code != "" {
		t.Fatalf("Settle: %q", code)
	}
	if pay.Payer != facilitatortest.Address("buyer") || strings.Contains(string(pay.SettleResponse), "CANARY") {
		t.Errorf("payer %q, receipt %s; want the transaction's token authority", pay.Payer, pay.SettleResponse)
	}
}
