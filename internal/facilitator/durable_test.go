package facilitator_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
)

// restarted is another Rail on the fixture's facilitator and store, with a
// memory of its own: the same service after a restart, or another instance
// sharing the database.
func (fx *fixture) restarted() *facilitator.Rail {
	return &facilitator.Rail{
		Client: fx.rail.Client, Memos: fx.memos, Versions: fx.rail.Versions, Now: fx.clock.Now,
		Terms: fx.rail.Terms, VerifyTimeout: time.Second, SettleTimeout: time.Second,
		Store: fx.store, LookupDelay: time.Millisecond,
	}
}

func pendingUntil(flag *atomic.Bool) func(facilitatortest.Call) facilitatortest.Answer {
	return func(c facilitatortest.Call) facilitatortest.Answer {
		if flag.Load() {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"settlement_pending","transaction":"","network":""}`}
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	}
}

// A pending settlement resumes at /settle after a restart (a real
// facilitator refuses a payload at /verify once it was broadcast).
func TestPendingSettlementResumesAfterRestart(t *testing.T) {
	fx := newFixture(t)
	var pending atomic.Bool
	pending.Store(true)
	fx.fake.Set(nil, pendingUntil(&pending))
	h := fx.v2()
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("first: %q", code)
	}
	pending.Store(false)
	fx.clock.Add(16 * time.Minute) // the memo expired meanwhile
	pay, code := fx.restarted().Settle(context.Background(), request(h), offer)
	if code != "" || pay.Tx == "" {
		t.Fatalf("resume after restart: %q", code)
	}
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 2 {
		t.Errorf("verify %d, settle %d; want 1 and 2", v, s)
	}
}

// A settled payload maps to its transaction after a restart, with no
// facilitator call: the gate's claim then decides (resume or already used).
func TestSettledPayloadMapsToItsTxAfterRestart(t *testing.T) {
	fx := newFixture(t)
	h := fx.v2()
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" {
		t.Fatalf("settle: %q", code)
	}
	fx.clock.Add(20 * time.Minute) // the memo expired meanwhile
	again, code := fx.restarted().Settle(context.Background(), request(h), offer)
	if code != "" || again.Tx != pay.Tx || again.Payer != pay.Payer || string(again.SettleResponse) != string(pay.SettleResponse) {
		t.Errorf("after restart: %q %+v, want %+v", code, again, pay)
	}
	if n := len(fx.fake.Calls("")); n != 3 { // /supported, /verify, /settle
		t.Errorf("%d facilitator calls, want 3", n)
	}
	// The same payload for another op is another settlement.
	probe := gate.Offer{Op: "probe", Price: offer.Price, Description: "x"}
	if got := fx.restarted().Match(gate.Request{Op: "probe", Resource: resource, TargetURL: targetURL, Header: h}, probe); got == "" {
		t.Error("a check payload matched the probe route")
	}
}

// The same payload presented 25 times at once to each of two instances
// sharing one store: one /verify, one /settle; every other presentation
// gets the settled payment or "in progress", never a settlement of its own.
func TestTwoInstancesSettleOnce(t *testing.T) {
	fx := newFixture(t)
	release := make(chan struct{})
	fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		<-release
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	fx.rail.SettleTimeout = 10 * time.Second
	other := fx.restarted()
	other.SettleTimeout = 10 * time.Second
	h := fx.v2()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[gate.Code]int{}
	txs := map[string]bool{}
	for _, rail := range []*facilitator.Rail{fx.rail, other} {
		for range 25 {
			wg.Go(func() {
				pay, code := rail.Settle(context.Background(), request(h), offer)
				mu.Lock()
				defer mu.Unlock()
				codes[code]++
				if code == "" {
					txs[pay.Tx] = true
				}
			})
		}
	}
	time.Sleep(300 * time.Millisecond)
	close(release)
	wg.Wait()
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
	if codes[""]+codes[gate.CodePaymentInProgress] != 50 || codes[""] == 0 || len(txs) != 1 {
		t.Errorf("codes %v, transactions %v", codes, txs)
	}
}

// A refused payload is not remembered as settled: presented again, it is
// verified afresh.
func TestRefusedSettlementStartsOver(t *testing.T) {
	fx := newFixture(t)
	var refuse atomic.Bool
	refuse.Store(true)
	fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		if refuse.Load() {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"invalid_exact_svm_transaction_failed","transaction":"","network":""}`}
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	h := fx.v2()
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettleFailed {
		t.Fatalf("first: %q", code)
	}
	refuse.Store(false)
	if _, code := fx.restarted().Settle(context.Background(), request(h), offer); code != "" {
		t.Fatalf("again: %q", code)
	}
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 2 || s != 2 {
		t.Errorf("verify %d, settle %d; want 2 and 2", v, s)
	}
}
