package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// settlementTests are the facilitator rail's durable settlement record:
// one presentation at a time holds a payload, a payload sent to /settle
// resumes there, a settled one maps to its transaction.
var settlementTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"settlement/fresh_then_busy_then_resume_then_done", testSettlementLifecycle},
	{"settlement/50_concurrent_takes_one_holder", testSettlementConcurrent},
	{"settlement/dead_holder_taken_over_after_its_lease", testSettlementDeadHolder},
	{"settlement/failed_starts_over_settled_is_final", testSettlementFailedAndFinal},
	{"settlement/confirmed_once_with_its_fee", testSettlementConfirm},
	{"settlement/ops_kept_apart", testSettlementOpsApart},
	{"settlement/invalid_refused", testSettlementInvalid},
}

const settleLease = 90 * time.Second

// payloadKey is a made-up payload key: 64 lowercase hex digits.
func payloadKey() string { return digest(rand.Text()) }

func take(t *testing.T, s store.Store, op store.Op, key string, now time.Time) store.SettlementTake {
	t.Helper()
	r, err := s.TakeSettlement(context.Background(), op, key, now, settleLease)
	if err != nil {
		t.Fatalf("TakeSettlement: %v", err)
	}
	return r
}

func mustTake(t *testing.T, s store.Store, op store.Op, key string, now time.Time, want store.SettlementOutcome) store.SettlementTake {
	t.Helper()
	r := take(t, s, op, key, now)
	if r.Outcome != want {
		t.Fatalf("TakeSettlement at %s = %+v, want %s", now.Format(time.RFC3339Nano), r, want)
	}
	if (r.LeaseToken != "") != (want == store.SettleFresh || want == store.SettleResume) {
		t.Fatalf("TakeSettlement %s: lease token %q", want, r.LeaseToken)
	}
	return r
}

func settled(tx string) store.SettlementResult {
	return store.SettlementResult{State: store.SettlementSettled, Tx: tx, Payer: "Payer1111111111111111111111111111111111111"}
}

func finish(t *testing.T, s store.Store, op store.Op, key, token string, r store.SettlementResult) {
	t.Helper()
	if err := s.FinishSettlement(context.Background(), op, key, token, r); err != nil {
		t.Fatalf("FinishSettlement(%s): %v", r.State, err)
	}
}

func testSettlementLifecycle(t *testing.T, s store.Store) {
	ctx := context.Background()
	key := payloadKey()
	if _, ok, err := s.Settlement(ctx, store.OpCheck, key); ok || err != nil {
		t.Fatalf("a payload never presented has a record: %v %v", ok, err)
	}
	first := mustTake(t, s, store.OpCheck, key, t0, store.SettleFresh)
	busy := mustTake(t, s, store.OpCheck, key, t0.Add(time.Second), store.SettleBusy)
	if busy.RetryAfter != settleLease-time.Second {
		t.Errorf("busy RetryAfter = %v, want %v", busy.RetryAfter, settleLease-time.Second)
	}
	if err := s.MarkSettlementSent(ctx, store.OpCheck, key, "not-the-token"); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("MarkSettlementSent with another token = %v, want ErrLeaseLost", err)
	}
	if err := s.MarkSettlementSent(ctx, store.OpCheck, key, first.LeaseToken); err != nil {
		t.Fatalf("MarkSettlementSent: %v", err)
	}
	// The facilitator said "pending": the lease is freed, the payload
	// resumes at /settle at once.
	finish(t, s, store.OpCheck, key, first.LeaseToken, store.SettlementResult{State: store.SettlementAttempted})
	if st, ok, err := s.Settlement(ctx, store.OpCheck, key); !ok || err != nil || st.State != store.SettlementAttempted {
		t.Errorf("after pending: %+v %v %v", st, ok, err)
	}
	resume := mustTake(t, s, store.OpCheck, key, t0.Add(2*time.Second), store.SettleResume)
	mustTake(t, s, store.OpCheck, key, t0.Add(3*time.Second), store.SettleBusy)
	if err := s.FinishSettlement(ctx, store.OpCheck, key, first.LeaseToken, settled("Tx1")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Finish with a freed token = %v, want ErrLeaseLost", err)
	}
	finish(t, s, store.OpCheck, key, resume.LeaseToken, settled("Tx1"))
	done := mustTake(t, s, store.OpCheck, key, t0.Add(4*time.Second), store.SettleDone)
	want := store.Settlement{Op: store.OpCheck, Key: key, State: store.SettlementSettled, Tx: "Tx1", Payer: settled("").Payer}
	if done.Settlement != want {
		t.Errorf("done = %+v, want %+v", done.Settlement, want)
	}
	if st, ok, err := s.Settlement(ctx, store.OpCheck, key); !ok || err != nil || st != want {
		t.Errorf("Settlement = %+v %v %v, want %+v", st, ok, err, want)
	}
}

func takeConcurrently(t *testing.T, ss []store.Store, each int, op store.Op, key string, now time.Time) map[store.SettlementOutcome]int {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		out  = map[store.SettlementOutcome]int{}
		errs []error
	)
	start := make(chan struct{})
	for _, s := range ss {
		for range each {
			wg.Go(func() {
				<-start
				r, err := s.TakeSettlement(context.Background(), op, key, now, settleLease)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				out[r.Outcome]++
			})
		}
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Errorf("TakeSettlement: %v", err)
	}
	return out
}

func testSettlementConcurrent(t *testing.T, s store.Store) {
	key := payloadKey()
	got := takeConcurrently(t, []store.Store{s}, 50, store.OpMemo, key, t0)
	if got[store.SettleFresh] != 1 || got[store.SettleBusy] != 49 {
		t.Errorf("50 concurrent takes: %v, want 1 fresh and 49 busy", got)
	}
}

func testSettlementDeadHolder(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Died at /verify: the next one verifies again.
	key := payloadKey()
	dead := mustTake(t, s, store.OpProbe, key, t0, store.SettleFresh)
	mustTake(t, s, store.OpProbe, key, t0.Add(settleLease-time.Millisecond), store.SettleBusy)
	next := mustTake(t, s, store.OpProbe, key, t0.Add(settleLease), store.SettleFresh)
	if next.LeaseToken == dead.LeaseToken {
		t.Fatal("the take-over kept the dead holder's token")
	}
	if err := s.MarkSettlementSent(ctx, store.OpProbe, key, dead.LeaseToken); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the dead holder marks sent: %v, want ErrLeaseLost", err)
	}
	// Died after sending to /settle: the next one resumes there, never
	// verifies again.
	if err := s.MarkSettlementSent(ctx, store.OpProbe, key, next.LeaseToken); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(2 * settleLease)
	mustTake(t, s, store.OpProbe, key, later.Add(-time.Millisecond), store.SettleBusy)
	resume := mustTake(t, s, store.OpProbe, key, later, store.SettleResume)
	if err := s.FinishSettlement(ctx, store.OpProbe, key, next.LeaseToken, settled("Tx2")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the dead holder finishes: %v, want ErrLeaseLost", err)
	}
	finish(t, s, store.OpProbe, key, resume.LeaseToken, settled("Tx2"))
	mustTake(t, s, store.OpProbe, key, later, store.SettleDone)
}

func testSettlementFailedAndFinal(t *testing.T, s store.Store) {
	ctx := context.Background()
	key := payloadKey()
	r := mustTake(t, s, store.OpCheck, key, t0, store.SettleFresh)
	if err := s.MarkSettlementSent(ctx, store.OpCheck, key, r.LeaseToken); err != nil {
		t.Fatal(err)
	}
	finish(t, s, store.OpCheck, key, r.LeaseToken, store.SettlementResult{State: store.SettlementFailed})
	// Refused at /settle: a new presentation starts over at /verify.
	r = mustTake(t, s, store.OpCheck, key, t0.Add(time.Second), store.SettleFresh)
	finish(t, s, store.OpCheck, key, r.LeaseToken, settled("Tx3"))
	if err := s.FinishSettlement(ctx, store.OpCheck, key, r.LeaseToken, store.SettlementResult{State: store.SettlementFailed}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a settled record rewritten: %v, want ErrLeaseLost", err)
	}
	// Settled is final, however late.
	done := mustTake(t, s, store.OpCheck, key, t0.Add(48*time.Hour), store.SettleDone)
	if done.Settlement.Tx != "Tx3" {
		t.Errorf("done = %+v", done.Settlement)
	}
}

func testSettlementConfirm(t *testing.T, s store.Store) {
	ctx := context.Background()
	key := payloadKey()
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, "Tx4", 5000); ok || err != nil {
		t.Errorf("confirm without a record: %v %v", ok, err)
	}
	r := mustTake(t, s, store.OpMemo, key, t0, store.SettleFresh)
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, "Tx4", 5000); ok || err != nil {
		t.Errorf("confirm before settled: %v %v", ok, err)
	}
	finish(t, s, store.OpMemo, key, r.LeaseToken, settled("Tx4"))
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, "TxOther", 5000); ok || err != nil {
		t.Errorf("confirm of another tx: %v %v", ok, err)
	}
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, "Tx4", 5000); !ok || err != nil {
		t.Errorf("confirm: %v %v", ok, err)
	}
	if ok, err := s.ConfirmSettlement(ctx, store.OpMemo, key, "Tx4", 7000); ok || err != nil {
		t.Errorf("second confirm: %v %v", ok, err)
	}
	st, _, _ := s.Settlement(ctx, store.OpMemo, key)
	if !st.Confirmed || st.FeeLamports != 5000 {
		t.Errorf("confirmed record %+v", st)
	}
	// Settled confirmed in one step.
	key = payloadKey()
	r = mustTake(t, s, store.OpMemo, key, t0, store.SettleFresh)
	res := settled("Tx5")
	res.Confirmed, res.FeeLamports = true, 5001
	finish(t, s, store.OpMemo, key, r.LeaseToken, res)
	if done := mustTake(t, s, store.OpMemo, key, t0, store.SettleDone); !done.Settlement.Confirmed || done.Settlement.FeeLamports != 5001 {
		t.Errorf("done = %+v", done.Settlement)
	}
}

func testSettlementOpsApart(t *testing.T, s store.Store) {
	key := payloadKey()
	r := mustTake(t, s, store.OpCheck, key, t0, store.SettleFresh)
	finish(t, s, store.OpCheck, key, r.LeaseToken, settled("Tx6"))
	mustTake(t, s, store.OpProbe, key, t0, store.SettleFresh)
	mustTake(t, s, store.OpMemo, key, t0, store.SettleFresh)
}

func testSettlementInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	key := payloadKey()
	for name, err := range map[string]error{
		"op":  func() error { _, err := s.TakeSettlement(ctx, "refund", key, t0, settleLease); return err }(),
		"key": func() error { _, err := s.TakeSettlement(ctx, store.OpCheck, "payload", t0, settleLease); return err }(),
		"upper key": func() error {
			_, err := s.TakeSettlement(ctx, store.OpCheck, "AB"+key[2:], t0, settleLease)
			return err
		}(),
		"lease": func() error { _, err := s.TakeSettlement(ctx, store.OpCheck, key, t0, 0); return err }(),
		"now": func() error {
			_, err := s.TakeSettlement(ctx, store.OpCheck, key, time.Time{}, settleLease)
			return err
		}(),
		"read": func() error { _, _, err := s.Settlement(ctx, store.OpCheck, "x"); return err }(),
	} {
		if !errors.Is(err, store.ErrInvalidSettlement) {
			t.Errorf("%s: %v, want ErrInvalidSettlement", name, err)
		}
	}
	r := mustTake(t, s, store.OpCheck, key, t0, store.SettleFresh)
	for name, res := range map[string]store.SettlementResult{
		"no state":            {},
		"verifying":           {State: store.SettlementVerifying},
		"settled without tx":  {State: store.SettlementSettled, Payer: "P"},
		"settled not base58":  {State: store.SettlementSettled, Tx: "https://x", Payer: "P"},
		"fee unconfirmed":     {State: store.SettlementSettled, Tx: "Tx", Payer: "P", FeeLamports: 1},
		"failed with a tx":    {State: store.SettlementFailed, Tx: "Tx"},
		"attempted confirmed": {State: store.SettlementAttempted, Confirmed: true},
	} {
		if err := s.FinishSettlement(ctx, store.OpCheck, key, r.LeaseToken, res); !errors.Is(err, store.ErrInvalidSettlement) {
			t.Errorf("%s: %v, want ErrInvalidSettlement", name, err)
		}
	}
	// Nothing was written: the holder still holds it.
	mustTake(t, s, store.OpCheck, key, t0, store.SettleBusy)
}

// runSettlementInstances: the settlement record across two instances.
func runSettlementInstances(t *testing.T, open func(t *testing.T) (a, b store.Store)) {
	t.Run("instances/settlement_taken_by_one_of_50_presentations_on_two", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		key := payloadKey()
		got := takeConcurrently(t, []store.Store{a, b}, 25, store.OpCheck, key, t0)
		if got[store.SettleFresh] != 1 || got[store.SettleBusy] != 49 {
			t.Errorf("50 takes on two instances: %v, want 1 fresh and 49 busy", got)
		}
	})
	t.Run("instances/settlement_sent_by_one_resumed_once_on_the_other", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		ctx := context.Background()
		key := payloadKey()
		r := mustTake(t, a, store.OpProbe, key, t0, store.SettleFresh)
		if err := a.MarkSettlementSent(ctx, store.OpProbe, key, r.LeaseToken); err != nil {
			t.Fatal(err)
		}
		// a dies at /settle; b takes the payload over after the lease.
		got := takeConcurrently(t, []store.Store{b}, 10, store.OpProbe, key, t0.Add(settleLease))
		if got[store.SettleResume] != 1 || got[store.SettleBusy] != 9 {
			t.Errorf("10 takes on b: %v, want 1 resume and 9 busy", got)
		}
	})
	t.Run("instances/settled_on_one_done_on_the_other", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		key := payloadKey()
		r := mustTake(t, a, store.OpMemo, key, t0, store.SettleFresh)
		finish(t, a, store.OpMemo, key, r.LeaseToken, settled("Tx7"))
		if done := mustTake(t, b, store.OpMemo, key, t0, store.SettleDone); done.Settlement.Tx != "Tx7" {
			t.Errorf("b reads %+v", done.Settlement)
		}
	})
}
