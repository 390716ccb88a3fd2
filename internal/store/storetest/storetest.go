// Package storetest is the conformance suite of store.Store. Every backend
// runs it, unchanged, in its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// open must return a store on an empty database of its own; Run closes it.
// Times are injected: the suite never reads the wall clock for a decision.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The published limits the suite exercises.
const (
	freePerDay      = 100
	freeMinInterval = 5000 * time.Millisecond
	resumeWindow    = 15 * time.Minute
	leaseFor        = 30 * time.Second
)

// t0 is the suite's clock origin: a UTC morning, far from midnight.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	fresh := func(t *testing.T) store.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"free/100_allowed_then_101st_refused_daily_limit", testFreeDailyLimit},
		{"free/min_interval_edge_4999ms_refused_5000ms_allowed", testFreeMinInterval},
		{"free/new_utc_day_resets_count_not_interval", testFreeNewDay},
		{"free/keys_are_independent", testFreeKeys},
		{"free/burst_of_20_at_one_instant_allows_exactly_one", testFreeBurst},
		{"free/invalid_limits_refused", testFreeInvalid},
		{"claim/50_concurrent_claims_one_claimed_rest_busy", testClaimConcurrent},
		{"claim/delivered_payment_is_already_used", testClaimDelivered},
		{"claim/release_then_resume_once_then_already_used", testClaimReleaseResume},
		{"claim/killed_holder_resumed_exactly_once_one_entry", testClaimKilledHolder},
		{"claim/resume_window_edge", testClaimResumeWindow},
		{"claim/tx_or_memo_reused_apart_is_already_used", testClaimReuse},
		{"claim/invalid_claim_refused", testClaimInvalid},
		{"claim/resume_only_records_nothing_new", testClaimResumeOnly},
		{"deliver/writes_one_entry_and_marks_delivered", testDeliverOnce},
		{"deliver/stale_lease_token_fails_and_writes_nothing", testDeliverStale},
		{"deliver/entry_of_another_payment_fails_and_writes_nothing", testDeliverMismatch},
		{"deliver/racing_a_resume_delivers_exactly_once", testDeliverRace},
		{"ledger/entries_per_op_kept_apart", testLedgerOpsApart},
		{"ledger/range_is_half_open_and_ordered", testLedgerRange},
		{"ledger/schema_is_the_criteria_closed_field_list", testLedgerSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, fresh(t))
		})
	}
	for _, tc := range accountingTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, fresh(t))
		})
	}
	for _, tc := range boundedTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, fresh(t))
		})
	}
	for _, tc := range settlementTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, fresh(t))
		})
	}
	for _, tc := range evmTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, fresh(t))
		})
	}
}

// RunInstances runs the cross-instance guarantees: open returns two stores,
// opened separately, on one shared empty database (two processes or two
// service instances).
func RunInstances(t *testing.T, open func(t *testing.T) (a, b store.Store)) {
	runSettlementInstances(t, open)
	t.Run("instances/payment_presented_25_times_to_each_claimed_once", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		c := newClaim(store.OpCheck, t0)
		outcomes := claimConcurrently(t, []store.Store{a, b}, 25, c)
		assertCount(t, outcomes, store.Claimed, 1)
		assertCount(t, outcomes, store.Busy, 49)
	})
	t.Run("instances/free_burst_of_40_across_both_allows_one", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		allowed := takeFreeConcurrently(t, []store.Store{a, b}, 20, "wallet-burst", t0)
		if allowed != 1 {
			t.Errorf("allowed = %d, want 1", allowed)
		}
		// The 101st is refused on whichever instance.
		for i := 1; i < freePerDay; i++ {
			s := []store.Store{a, b}[i%2]
			mustFree(t, s, "wallet-burst", t0.Add(time.Duration(i)*freeMinInterval), true)
		}
		d := takeFree(t, b, "wallet-burst", t0.Add(freePerDay*freeMinInterval))
		if d.Allowed || d.Reason != store.FreeDailyLimit {
			t.Errorf("101st call: %+v, want refused %s", d, store.FreeDailyLimit)
		}
	})
	t.Run("instances/holder_killed_on_one_resumed_once_on_the_other", func(t *testing.T) {
		a, b := open(t)
		closeAll(t, a, b)
		c := newClaim(store.OpProbe, t0)
		first := claim(t, a, c)
		if first.Outcome != store.Claimed {
			t.Fatalf("first claim = %s, want %s", first.Outcome, store.Claimed)
		}
		// a dies holding the lease; b sees the payment after the lease ends.
		c.Now = t0.Add(leaseFor)
		outcomes := claimConcurrently(t, []store.Store{b}, 10, c)
		assertCount(t, outcomes, store.Resumed, 1)
		assertCount(t, outcomes, store.Busy, 9)
		res := resultWith(outcomes, store.Resumed)
		if err := b.Deliver(context.Background(), res.PaymentID, res.LeaseToken, entryFor(c)); err != nil {
			t.Fatalf("Deliver on b: %v", err)
		}
		if err := a.Deliver(context.Background(), first.PaymentID, first.LeaseToken, entryFor(c)); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("Deliver by the dead holder = %v, want ErrLeaseLost", err)
		}
		assertEntries(t, a, store.OpProbe, 1)
	})
}

func closeAll(t *testing.T, ss ...store.Store) {
	t.Cleanup(func() {
		for _, s := range ss {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
}

// ---- free tier ----

func takeFree(t *testing.T, s store.Store, key string, now time.Time) store.FreeDecision {
	t.Helper()
	d, err := s.TakeFree(context.Background(), key, now, freePerDay, freeMinInterval)
	if err != nil {
		t.Fatalf("TakeFree: %v", err)
	}
	return d
}

func mustFree(t *testing.T, s store.Store, key string, now time.Time, want bool) store.FreeDecision {
	t.Helper()
	d := takeFree(t, s, key, now)
	if d.Allowed != want {
		t.Fatalf("TakeFree at %s: allowed = %v (%+v), want %v", now.Format(time.RFC3339Nano), d.Allowed, d, want)
	}
	return d
}

func testFreeDailyLimit(t *testing.T, s store.Store) {
	now := t0
	for i := 1; i <= freePerDay; i++ {
		d := mustFree(t, s, "wallet-a", now, true)
		if d.UsedToday != i || d.Reason != "" || d.RetryAfter != 0 {
			t.Fatalf("call %d: %+v, want allowed with UsedToday %d", i, d, i)
		}
		now = now.Add(freeMinInterval)
	}
	got := mustFree(t, s, "wallet-a", now, false)
	midnight := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	want := store.FreeDecision{Reason: store.FreeDailyLimit, UsedToday: freePerDay, RetryAfter: midnight.Sub(now)}
	if got != want {
		t.Errorf("101st call: got %+v, want %+v", got, want)
	}
	// Refusals write nothing: still refused, still 100.
	got = mustFree(t, s, "wallet-a", now.Add(time.Hour), false)
	if got.Reason != store.FreeDailyLimit || got.UsedToday != freePerDay {
		t.Errorf("later call: got %+v, want daily_limit at %d", got, freePerDay)
	}
}

func testFreeMinInterval(t *testing.T, s store.Store) {
	mustFree(t, s, "wallet-a", t0, true)
	got := mustFree(t, s, "wallet-a", t0.Add(4999*time.Millisecond), false)
	want := store.FreeDecision{Reason: store.FreeMinInterval, UsedToday: 1, RetryAfter: time.Millisecond}
	if got != want {
		t.Errorf("at +4,999 ms: got %+v, want %+v", got, want)
	}
	// The refusal did not move the interval: +5,000 ms from the allowed call.
	if d := mustFree(t, s, "wallet-a", t0.Add(5000*time.Millisecond), true); d.UsedToday != 2 {
		t.Errorf("at +5,000 ms: UsedToday = %d, want 2", d.UsedToday)
	}
}

func testFreeNewDay(t *testing.T, s store.Store) {
	late := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC)
	now := late
	for range freePerDay {
		mustFree(t, s, "wallet-a", now, true)
		now = now.Add(freeMinInterval)
	}
	mustFree(t, s, "wallet-a", now, false)
	next := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	if d := mustFree(t, s, "wallet-a", next, true); d.UsedToday != 1 {
		t.Errorf("first call of the new UTC day: UsedToday = %d, want 1", d.UsedToday)
	}

	// The interval is between calls, whatever their days.
	mustFree(t, s, "wallet-b", next.Add(-2*time.Second), true)
	got := mustFree(t, s, "wallet-b", next.Add(time.Second), false)
	want := store.FreeDecision{Reason: store.FreeMinInterval, RetryAfter: 2 * time.Second}
	if got != want {
		t.Errorf("across midnight within the interval: got %+v, want %+v", got, want)
	}
}

func testFreeKeys(t *testing.T, s store.Store) {
	mustFree(t, s, "payability-verdict/check:wallet-a", t0, true)
	mustFree(t, s, "payability-verdict/memo:wallet-a", t0, true)
	mustFree(t, s, "payability-verdict/check:wallet-b", t0, true)
	mustFree(t, s, "payability-verdict/check:wallet-a", t0, false)
}

func testFreeBurst(t *testing.T, s store.Store) {
	if got := takeFreeConcurrently(t, []store.Store{s}, 20, "wallet-a", t0); got != 1 {
		t.Errorf("allowed = %d of 20, want 1", got)
	}
}

func takeFreeConcurrently(t *testing.T, ss []store.Store, each int, key string, now time.Time) int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		errs    []error
	)
	start := make(chan struct{})
	for _, s := range ss {
		for range each {
			wg.Go(func() {
				<-start
				d, err := s.TakeFree(context.Background(), key, now, freePerDay, freeMinInterval)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				if d.Allowed {
					allowed++
				} else if d.Reason != store.FreeMinInterval {
					errs = append(errs, errors.New("refused with reason "+string(d.Reason)))
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Errorf("TakeFree: %v", err)
	}
	return allowed
}

func testFreeInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"empty key":         func() error { _, err := s.TakeFree(ctx, "", t0, 1, 0); return err },
		"zero per day":      func() error { _, err := s.TakeFree(ctx, "k", t0, 0, 0); return err },
		"negative interval": func() error { _, err := s.TakeFree(ctx, "k", t0, 1, -time.Second); return err },
	} {
		if err := call(); !errors.Is(err, store.ErrInvalidFree) {
			t.Errorf("%s: err = %v, want ErrInvalidFree", name, err)
		}
	}
}

// ---- payments ----

// newClaim returns a claim of a fresh payment for op at now.
func newClaim(op store.Op, now time.Time) store.Claim {
	return store.Claim{
		Rail:         "direct",
		Tx:           randomTx(),
		MemoDigest:   digest(randomTx()),
		Op:           op,
		Payer:        "PayerWallet1111111111111111111111111111111",
		Amount:       10000,
		FeeLamports:  5000,
		Now:          now,
		LeaseFor:     leaseFor,
		ResumeWindow: resumeWindow,
	}
}

func randomTx() string {
	return rand.Text() + rand.Text() + rand.Text()
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func claim(t *testing.T, s store.Store, c store.Claim) store.ClaimResult {
	t.Helper()
	r, err := s.Claim(context.Background(), c)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	switch r.Outcome {
	case store.Claimed, store.Resumed:
		if r.PaymentID == "" || r.LeaseToken == "" {
			t.Fatalf("Claim %s without payment id or lease token: %+v", r.Outcome, r)
		}
	default:
		if r.PaymentID != "" || r.LeaseToken != "" {
			t.Fatalf("Claim %s hands out a lease: %+v", r.Outcome, r)
		}
	}
	return r
}

func mustClaim(t *testing.T, s store.Store, c store.Claim, want store.ClaimOutcome) store.ClaimResult {
	t.Helper()
	r := claim(t, s, c)
	if r.Outcome != want {
		t.Fatalf("Claim at %s: %s, want %s", c.Now.Format(time.RFC3339Nano), r.Outcome, want)
	}
	return r
}

func claimConcurrently(t *testing.T, ss []store.Store, each int, c store.Claim) []store.ClaimResult {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		out  []store.ClaimResult
		errs []error
	)
	start := make(chan struct{})
	for _, s := range ss {
		for range each {
			wg.Go(func() {
				<-start
				r, err := s.Claim(context.Background(), c)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				out = append(out, r)
			})
		}
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Errorf("Claim: %v", err)
	}
	return out
}

func assertCount(t *testing.T, rs []store.ClaimResult, o store.ClaimOutcome, want int) {
	t.Helper()
	got := 0
	for _, r := range rs {
		if r.Outcome == o {
			got++
		}
	}
	if got != want {
		t.Errorf("%s outcomes = %d of %d, want %d", o, got, len(rs), want)
	}
}

func resultWith(rs []store.ClaimResult, o store.ClaimOutcome) store.ClaimResult {
	for _, r := range rs {
		if r.Outcome == o {
			return r
		}
	}
	return store.ClaimResult{}
}

func testClaimConcurrent(t *testing.T, s store.Store) {
	c := newClaim(store.OpCheck, t0)
	rs := claimConcurrently(t, []store.Store{s}, 50, c)
	assertCount(t, rs, store.Claimed, 1)
	assertCount(t, rs, store.Busy, 49)
	for _, r := range rs {
		if r.Outcome == store.Busy && (r.RetryAfter <= 0 || r.RetryAfter > leaseFor) {
			t.Errorf("Busy RetryAfter = %v, want in (0, %v]", r.RetryAfter, leaseFor)
		}
	}
}

func testClaimDelivered(t *testing.T, s store.Store) {
	c := newClaim(store.OpCheck, t0)
	r := mustClaim(t, s, c, store.Claimed)
	deliver(t, s, r, entryFor(c))
	for _, after := range []time.Duration{time.Second, leaseFor + time.Second, resumeWindow + time.Second} {
		c.Now = t0.Add(after)
		mustClaim(t, s, c, store.AlreadyUsed)
	}
}

func testClaimReleaseResume(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := newClaim(store.OpMemo, t0)
	first := mustClaim(t, s, c, store.Claimed)
	if err := s.Release(ctx, first.PaymentID, first.LeaseToken); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, first.PaymentID, first.LeaseToken); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("second Release = %v, want ErrLeaseLost", err)
	}
	c.Now = t0.Add(time.Second) // well within the first lease: the release freed it
	second := mustClaim(t, s, c, store.Resumed)
	if second.PaymentID != first.PaymentID || second.LeaseToken == first.LeaseToken {
		t.Errorf("resume: payment %q token %q, want payment %q with a new token", second.PaymentID, second.LeaseToken, first.PaymentID)
	}
	c.Now = t0.Add(2 * time.Second)
	mustClaim(t, s, c, store.Busy)
	if err := s.Release(ctx, second.PaymentID, second.LeaseToken); err != nil {
		t.Fatalf("Release after resume: %v", err)
	}
	c.Now = t0.Add(3 * time.Second)
	mustClaim(t, s, c, store.AlreadyUsed)
	assertEntries(t, s, store.OpMemo, 0)
}

func testClaimKilledHolder(t *testing.T, s store.Store) {
	c := newClaim(store.OpCheck, t0)
	dead := mustClaim(t, s, c, store.Claimed)
	// The holder is killed: it never delivers nor releases.
	c.Now = t0.Add(10 * time.Second)
	if r := mustClaim(t, s, c, store.Busy); r.RetryAfter != 20*time.Second {
		t.Errorf("Busy RetryAfter = %v, want 20s", r.RetryAfter)
	}
	c.Now = t0.Add(leaseFor - time.Millisecond)
	mustClaim(t, s, c, store.Busy)

	c.Now = t0.Add(leaseFor) // the lease has ended
	rs := claimConcurrently(t, []store.Store{s}, 20, c)
	assertCount(t, rs, store.Resumed, 1)
	assertCount(t, rs, store.Busy, 19)
	res := resultWith(rs, store.Resumed)
	if res.PaymentID != dead.PaymentID {
		t.Errorf("resumed payment %q, want %q", res.PaymentID, dead.PaymentID)
	}
	deliver(t, s, res, entryFor(c))
	if err := s.Deliver(context.Background(), dead.PaymentID, dead.LeaseToken, entryFor(c)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Deliver by the killed holder = %v, want ErrLeaseLost", err)
	}
	c.Now = t0.Add(leaseFor + time.Second)
	mustClaim(t, s, c, store.AlreadyUsed)
	assertEntries(t, s, store.OpCheck, 1)

	// A resumed holder killed in turn leaves the payment spent: one resume.
	c2 := newClaim(store.OpCheck, t0)
	mustClaim(t, s, c2, store.Claimed)
	c2.Now = t0.Add(leaseFor)
	mustClaim(t, s, c2, store.Resumed)
	c2.Now = t0.Add(2 * leaseFor)
	mustClaim(t, s, c2, store.AlreadyUsed)
}

func testClaimResumeWindow(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		after time.Duration
		want  store.ClaimOutcome
	}{
		{resumeWindow - time.Millisecond, store.Resumed},
		{resumeWindow, store.AlreadyUsed},
	} {
		c := newClaim(store.OpProbe, t0)
		r := mustClaim(t, s, c, store.Claimed)
		if err := s.Release(ctx, r.PaymentID, r.LeaseToken); err != nil {
			t.Fatalf("Release: %v", err)
		}
		c.Now = t0.Add(tc.after)
		mustClaim(t, s, c, tc.want)
	}
}

func testClaimReuse(t *testing.T, s store.Store) {
	c := newClaim(store.OpCheck, t0)
	held := mustClaim(t, s, c, store.Claimed)

	later := t0.Add(time.Second)
	for name, mutate := range map[string]func(*store.Claim){
		"same tx, other memo":   func(x *store.Claim) { x.MemoDigest = digest(randomTx()) },
		"same memo, other tx":   func(x *store.Claim) { x.Tx = randomTx() },
		"same pair, other op":   func(x *store.Claim) { x.Op = store.OpMemo },
		"same pair, other rail": func(x *store.Claim) { x.Rail = "facilitator" },
	} {
		x := c
		x.Now = later
		mutate(&x)
		if r := claim(t, s, x); r.Outcome != store.AlreadyUsed {
			t.Errorf("%s: %s, want %s", name, r.Outcome, store.AlreadyUsed)
		}
	}
	// Tx of one payment with the memo of another: both spent, not together.
	other := newClaim(store.OpCheck, t0)
	mustClaim(t, s, other, store.Claimed)
	x := c
	x.MemoDigest, x.Now = other.MemoDigest, later
	mustClaim(t, s, x, store.AlreadyUsed)

	// None of it disturbed the holder.
	deliver(t, s, held, entryFor(c))
	assertEntries(t, s, store.OpCheck, 1)
}

func testClaimResumeOnly(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Never seen: nothing is recorded, so a normal claim still claims it.
	c := newClaim(store.OpCheck, t0)
	c.ResumeOnly = true
	mustClaim(t, s, c, store.NotSeen)
	mustClaim(t, s, c, store.NotSeen)
	c.ResumeOnly = false
	r := mustClaim(t, s, c, store.Claimed)

	// Seen: decided as always, the one resume included.
	c.ResumeOnly, c.Now = true, t0.Add(time.Second)
	mustClaim(t, s, c, store.Busy)
	if err := s.Release(ctx, r.PaymentID, r.LeaseToken); err != nil {
		t.Fatalf("Release: %v", err)
	}
	res := mustClaim(t, s, c, store.Resumed)
	if res.PaymentID != r.PaymentID {
		t.Errorf("resumed payment %q, want %q", res.PaymentID, r.PaymentID)
	}
	deliver(t, s, res, entryFor(c))
	mustClaim(t, s, c, store.AlreadyUsed)

	// Its tx or memo apart, or with another op, is already used.
	x := c
	x.MemoDigest = digest(randomTx())
	mustClaim(t, s, x, store.AlreadyUsed)
	x = c
	x.Op = store.OpMemo
	mustClaim(t, s, x, store.AlreadyUsed)
	assertEntries(t, s, store.OpCheck, 1)
}

func testClaimInvalid(t *testing.T, s store.Store) {
	for name, mutate := range map[string]func(*store.Claim){
		"memo value instead of a digest": func(c *store.Claim) { c.MemoDigest = "pv-4f1c2d7e9a0b3c5d" },
		"uppercase digest": func(c *store.Claim) {
			c.MemoDigest = "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"
		},
		"no tx":      func(c *store.Claim) { c.Tx = "" },
		"unknown op": func(c *store.Claim) { c.Op = "scan" },
		"no lease":   func(c *store.Claim) { c.LeaseFor = 0 },
		"no window":  func(c *store.Claim) { c.ResumeWindow = 0 },
		"no time":    func(c *store.Claim) { c.Now = time.Time{} },
	} {
		c := newClaim(store.OpCheck, t0)
		mutate(&c)
		if _, err := s.Claim(context.Background(), c); !errors.Is(err, store.ErrInvalidClaim) {
			t.Errorf("%s: err = %v, want ErrInvalidClaim", name, err)
		}
	}
}

// ---- delivery ----

// entryFor returns a complete entry for the payment of c, for c's op.
func entryFor(c store.Claim) store.Entry {
	e := store.Entry{
		PayerWallet:       c.Payer,
		Timestamp:         c.Now.Add(1234 * time.Millisecond),
		PriceUSDCUnits:    c.Amount,
		CAD:               store.CAD{Basis: "Bank of Canada FXUSDCAD of the payment's UTC date; USDC at par with USD.", Pending: true},
		PaymentTx:         c.Tx,
		PaymentNetwork:    SolanaMainnet,
		SolanaFeeLamports: c.FeeLamports,
		CriteriaVersion:   "1.0.0",
	}
	switch c.Op {
	case store.OpCheck:
		e.VerdictLine = "CHALLENGE PAYABILITY VERDICT — state: POPULATED — 2026-03-02T09:00:01Z"
		e.Check = &store.CheckFields{PayabilityState: "POPULATED"}
	case store.OpMemo:
		e.VerdictLine = "MEMO BINDING VERDICT — state: BOUND — 2026-03-02T09:00:01Z"
		e.Memo = &store.MemoFields{MemoBindingState: "BOUND"}
	case store.OpProbe:
		e.VerdictLine = "RAIL PROBE VERDICT — direct: PRESENT-FAIL-CLOSED · facilitator: ABSENT — 2026-03-02T09:00:01Z"
		e.Probe = &store.ProbeFields{DirectGrade: "PRESENT-FAIL-CLOSED", FacilitatorGrade: "ABSENT"}
	case store.OpPreflight:
		e.CriteriaVersion = "x402-preflight/v1@2"
		e.VerdictLine = "HOLD: ask a human before paying (challenge_static, lint_warnings)"
		e.Preflight = &store.PreflightFields{Decision: "HOLD", Reasons: "challenge_static lint_warnings"}
	case store.OpLint:
		e.CriteriaVersion = "x402-lint/v1@1"
		e.VerdictLine = "x402-lint/v1: DOES-NOT-CONFORM (1 errors, 2 warnings) — 2026-03-02T09:00:01Z"
		e.Lint = &store.LintFields{ErrorsCount: 1, WarningsCount: 2}
	}
	return e
}

func deliver(t *testing.T, s store.Store, r store.ClaimResult, e store.Entry) {
	t.Helper()
	if err := s.Deliver(context.Background(), r.PaymentID, r.LeaseToken, e); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
}

// allTime spans every timestamp the suite writes.
var allFrom, allTo = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

func entries(t *testing.T, s store.Store, op store.Op) []store.Entry {
	t.Helper()
	es, err := s.Entries(context.Background(), op, allFrom, allTo)
	if err != nil {
		t.Fatalf("Entries(%s): %v", op, err)
	}
	return es
}

func assertEntries(t *testing.T, s store.Store, op store.Op, want int) []store.Entry {
	t.Helper()
	es := entries(t, s, op)
	if len(es) != want {
		t.Errorf("%s ledger holds %d entries, want %d", op, len(es), want)
	}
	return es
}

func testDeliverOnce(t *testing.T, s store.Store) {
	c := newClaim(store.OpCheck, t0)
	r := mustClaim(t, s, c, store.Claimed)
	e := entryFor(c)
	deliver(t, s, r, e)
	if err := s.Deliver(context.Background(), r.PaymentID, r.LeaseToken, e); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("second Deliver = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(context.Background(), r.PaymentID, r.LeaseToken); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Release after delivery = %v, want ErrLeaseLost", err)
	}
	es := assertEntries(t, s, store.OpCheck, 1)
	if len(es) == 1 && es[0].ID != r.PaymentID {
		t.Errorf("entry id %q, want the payment id %q", es[0].ID, r.PaymentID)
	}
	c.Now = t0.Add(time.Second)
	mustClaim(t, s, c, store.AlreadyUsed)
}

func testDeliverStale(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := newClaim(store.OpMemo, t0)
	first := mustClaim(t, s, c, store.Claimed)
	if err := s.Release(ctx, first.PaymentID, first.LeaseToken); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Deliver(ctx, first.PaymentID, first.LeaseToken, entryFor(c)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Deliver after Release = %v, want ErrLeaseLost", err)
	}
	c.Now = t0.Add(time.Second)
	second := mustClaim(t, s, c, store.Resumed)
	if err := s.Deliver(ctx, first.PaymentID, first.LeaseToken, entryFor(c)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Deliver with the stale token = %v, want ErrLeaseLost", err)
	}
	if err := s.Deliver(ctx, "no-such-payment", second.LeaseToken, entryFor(c)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Deliver of an unknown payment = %v, want ErrLeaseLost", err)
	}
	assertEntries(t, s, store.OpMemo, 0)
	// The stale attempts marked nothing: the holder still delivers.
	deliver(t, s, second, entryFor(c))
	assertEntries(t, s, store.OpMemo, 1)
}

func testDeliverMismatch(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := newClaim(store.OpCheck, t0)
	r := mustClaim(t, s, c, store.Claimed)

	otherTx := entryFor(c)
	otherTx.PaymentTx = randomTx()
	otherOp := entryFor(newClaim(store.OpMemo, t0))
	otherOp.PaymentTx = c.Tx
	twoOps := entryFor(c)
	twoOps.Memo = &store.MemoFields{MemoBindingState: "BOUND"}
	noOp := entryFor(c)
	noOp.Check = nil
	rateWhilePending := entryFor(c)
	rateWhilePending.CAD.Rate = "1.3643"
	bornRefunded := entryFor(c)
	bornRefunded.CAD.Refund = "refund-link-1"
	for name, e := range map[string]store.Entry{
		"entry names another tx": otherTx,
		"entry of another op":    otherOp,
		"entry names two ops":    twoOps,
		"entry names no op":      noOp,
		"rate while pending":     rateWhilePending,
		"refund at delivery":     bornRefunded,
	} {
		if err := s.Deliver(ctx, r.PaymentID, r.LeaseToken, e); !errors.Is(err, store.ErrInvalidEntry) {
			t.Errorf("%s: Deliver = %v, want ErrInvalidEntry", name, err)
		}
	}
	for _, op := range store.Ops {
		assertEntries(t, s, op, 0)
	}
	deliver(t, s, r, entryFor(c))
	assertEntries(t, s, store.OpCheck, 1)
}

// testDeliverRace: a slow holder delivers just as its expired lease is being
// resumed. Whoever wins, the payment is delivered at most once by each lease
// and the ledger ends with exactly one entry.
func testDeliverRace(t *testing.T, s store.Store) {
	for range 5 {
		c := newClaim(store.OpCheck, t0)
		slow := mustClaim(t, s, c, store.Claimed)
		c.Now = t0.Add(leaseFor)

		var (
			wg         sync.WaitGroup
			deliverErr error
			rs         []store.ClaimResult
		)
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			deliverErr = s.Deliver(context.Background(), slow.PaymentID, slow.LeaseToken, entryFor(c))
		})
		wg.Go(func() {
			<-start
			rs = claimConcurrently(t, []store.Store{s}, 10, c)
		})
		close(start)
		wg.Wait()

		resumed := 0
		for _, r := range rs {
			if r.Outcome == store.Resumed {
				resumed++
				deliver(t, s, r, entryFor(c))
			}
		}
		switch {
		case deliverErr == nil && resumed != 0:
			t.Errorf("the slow holder delivered and %d presentations resumed", resumed)
		case deliverErr != nil && !errors.Is(deliverErr, store.ErrLeaseLost):
			t.Errorf("slow Deliver: %v", deliverErr)
		case deliverErr != nil && resumed != 1:
			t.Errorf("the slow holder lost the lease and %d presentations resumed, want 1", resumed)
		}
	}
	assertEntries(t, s, store.OpCheck, 5)
}

// ---- ledger ----

func testLedgerOpsApart(t *testing.T, s store.Store) {
	want := map[store.Op]store.Entry{}
	for _, op := range store.Ops {
		c := newClaim(op, t0)
		r := mustClaim(t, s, c, store.Claimed)
		e := entryFor(c)
		switch op {
		case store.OpCheck:
			// Filled CAD block, flags set, big numbers: every column round-trips.
			e.CAD = store.CAD{Rate: "1.3643", RateDate: "2026-02-27", Basis: e.CAD.Basis}
			e.Check.DescriptionOverlong = true
			e.House = true
			e.PriceUSDCUnits = 1<<64 - 1
			e.SolanaFeeLamports = 1 << 63
		case store.OpProbe:
			e.Probe.ExposuresCount = 3
		case store.OpLint:
			e.Lint = &store.LintFields{Conforms: true, ErrorsCount: 0, WarningsCount: 1 << 20}
		}
		deliver(t, s, r, e)
		e.ID = r.PaymentID
		e.Timestamp = e.Timestamp.UTC().Truncate(time.Millisecond)
		want[op] = e
	}
	for _, op := range store.Ops {
		es := assertEntries(t, s, op, 1)
		if len(es) != 1 {
			continue
		}
		if got := es[0]; !equalEntry(got, want[op]) {
			t.Errorf("%s entry:\n got %+v\nwant %+v", op, describe(got), describe(want[op]))
		}
		if got := es[0].Day(); got != "2026-03-02" {
			t.Errorf("%s entry day = %q, want 2026-03-02", op, got)
		}
	}
}

func equalEntry(a, b store.Entry) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return false
	}
	a.Timestamp, b.Timestamp = time.Time{}, time.Time{}
	return describe(a) == describe(b)
}

// describe flattens an entry, op fields included, for comparison and errors.
func describe(e store.Entry) string {
	type flat struct {
		store.Entry
		Check store.CheckFields
		Memo  store.MemoFields
		Probe store.ProbeFields
		Pre   store.PreflightFields
		Lint  store.LintFields
		Op    store.Op
	}
	f := flat{Entry: e, Op: e.Op()}
	if e.Preflight != nil {
		f.Pre = *e.Preflight
	}
	if e.Lint != nil {
		f.Lint = *e.Lint
	}
	if e.Check != nil {
		f.Check = *e.Check
	}
	if e.Memo != nil {
		f.Memo = *e.Memo
	}
	if e.Probe != nil {
		f.Probe = *e.Probe
	}
	f.Entry.Check, f.Entry.Memo, f.Entry.Probe, f.Entry.Preflight, f.Entry.Lint = nil, nil, nil, nil, nil
	return fmtValue(f)
}

func testLedgerRange(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Deliveries at 23:59:59.999, 00:00:00.000 and 00:00:00.001 around a UTC
	// midnight, written out of order.
	midnight := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	var ids []string
	for _, at := range []time.Duration{time.Millisecond, -time.Millisecond, 0} {
		c := newClaim(store.OpProbe, t0)
		r := mustClaim(t, s, c, store.Claimed)
		e := entryFor(c)
		e.Timestamp = midnight.Add(at)
		deliver(t, s, r, e)
		ids = append(ids, r.PaymentID)
	}
	es, err := s.Entries(ctx, store.OpProbe, midnight.Add(-time.Millisecond), midnight.Add(time.Millisecond))
	if err != nil {
		t.Fatalf("Entries: %v", err)
	}
	if len(es) != 2 || es[0].ID != ids[1] || es[1].ID != ids[2] {
		t.Fatalf("Entries [23:59:59.999, 00:00:00.001) = %d entries, want the two before the bound, oldest first", len(es))
	}
	if es[0].Day() != "2026-03-02" || es[1].Day() != "2026-03-03" {
		t.Errorf("days = %s, %s; want 2026-03-02, 2026-03-03", es[0].Day(), es[1].Day())
	}
	if _, err := s.Entries(ctx, "scan", allFrom, allTo); err == nil {
		t.Errorf("Entries of an unknown op: no error")
	}
}
