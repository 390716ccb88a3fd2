package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The bounded store (issue 11): the free tier's ceiling per source, the
// prune job, and the delivery that is taken back when its report could not
// be written.
var boundedTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"free/source_ceiling_edge_across_wallets_and_rolled_back", testFreeSourceCeiling},
	{"free/source_ceiling_lifts_at_utc_midnight", testFreeSourceNewDay},
	{"free/source_ceiling_invalid_refused", testFreeSourceInvalid},
	{"prune/rows_past_retention_deleted_counts_stay_bounded", testPruneBounded},
	{"prune/held_settlement_kept", testPruneHeldSettlement},
	{"reopen/undelivered_report_resumes_once_one_entry", testReopenResumesOnce},
	{"reopen/refused_after_the_resume_or_with_another_token", testReopenRefusals},
}

func takeFrom(t *testing.T, s store.Store, key, source string, perSource int, now time.Time) store.FreeDecision {
	t.Helper()
	d, err := s.TakeFreeFrom(context.Background(), store.FreeTake{Key: key, Now: now, PerDay: freePerDay,
		MinInterval: freeMinInterval, Source: source, SourcePerDay: perSource})
	if err != nil {
		t.Fatalf("TakeFreeFrom(%s, %s): %v", key, source, err)
	}
	return d
}

// testFreeSourceCeiling: 5 calls a day from one source, each from a wallet
// of its own, are allowed; the 6th, from a fresh wallet, is refused by the
// ceiling, and its wallet's count is rolled back (the same wallet from
// another source is then on its first call).
func testFreeSourceCeiling(t *testing.T, s store.Store) {
	const ceiling = 5
	for i := range ceiling {
		d := takeFrom(t, s, fmt.Sprintf("svc|w%d", i), "svc|src-a", ceiling, t0.Add(time.Duration(i)*time.Millisecond))
		if !d.Allowed || d.UsedToday != 1 {
			t.Fatalf("call %d from the source: %+v, want allowed, the wallet's first", i+1, d)
		}
	}
	d := takeFrom(t, s, "svc|w-fresh", "svc|src-a", ceiling, t0.Add(time.Second))
	if d.Allowed || d.Reason != store.FreeSourceLimit {
		t.Fatalf("call %d from the source: %+v, want refused %s", ceiling+1, d, store.FreeSourceLimit)
	}
	if want := 15 * time.Hour; d.RetryAfter != want-time.Second {
		t.Errorf("RetryAfter = %v, want until the next UTC midnight (%v)", d.RetryAfter, want-time.Second)
	}
	// Rolled back: the fresh wallet never counted anywhere.
	if d := takeFrom(t, s, "svc|w-fresh", "svc|src-b", ceiling, t0.Add(2*time.Second)); !d.Allowed || d.UsedToday != 1 {
		t.Errorf("the refused wallet from another source: %+v, want allowed as its first call", d)
	}
	tl, err := s.Tallies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.Free["svc"]; len(got) != 1 || got[0].Count != ceiling+1 {
		t.Errorf("free tally = %+v, want %d allowed calls (the refused one not counted)", got, ceiling+1)
	}
	// The wallet's own limits still come first: its minimum interval.
	if d := takeFrom(t, s, "svc|w0", "svc|src-b", ceiling, t0.Add(3*time.Second)); d.Allowed || d.Reason != store.FreeMinInterval {
		t.Errorf("w0 again within 5 s: %+v, want refused %s", d, store.FreeMinInterval)
	}
	// A key without a source has no ceiling.
	if d := takeFrom(t, s, "svc|w-nosrc", "", 0, t0.Add(3*time.Second)); !d.Allowed {
		t.Errorf("no source: %+v, want allowed", d)
	}
}

func testFreeSourceNewDay(t *testing.T, s store.Store) {
	takeFrom(t, s, "svc|w1", "svc|src", 1, t0)
	if d := takeFrom(t, s, "svc|w2", "svc|src", 1, t0.Add(time.Minute)); d.Allowed {
		t.Fatalf("2nd call under a ceiling of 1: allowed")
	}
	midnight := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	if d := takeFrom(t, s, "svc|w2", "svc|src", 1, midnight.Add(-time.Millisecond)); d.Allowed {
		t.Errorf("at 23:59:59.999: allowed, want refused")
	}
	if d := takeFrom(t, s, "svc|w2", "svc|src", 1, midnight); !d.Allowed {
		t.Errorf("at 00:00:00.000: %+v, want allowed", d)
	}
}

func testFreeSourceInvalid(t *testing.T, s store.Store) {
	_, err := s.TakeFreeFrom(context.Background(), store.FreeTake{Key: "svc|w", Now: t0, PerDay: 1, Source: "svc|src", SourcePerDay: 0})
	if err != store.ErrInvalidFree {
		t.Errorf("SourcePerDay 0: %v, want ErrInvalidFree", err)
	}
}

func sizes(t *testing.T, s store.Store) store.Sizes {
	t.Helper()
	z, err := s.Sizes(context.Background())
	if err != nil {
		t.Fatalf("Sizes: %v", err)
	}
	return z
}

func prune(t *testing.T, s store.Store, now time.Time) store.Pruned {
	t.Helper()
	p, err := s.Prune(context.Background(), now)
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	return p
}

// testPruneBounded: ten days of 50 fresh wallets and 50 payloads a day,
// pruned every day: the counts never exceed three days' worth, the edge of
// the retention is exact, and the ledger and the seen-set keep everything.
func testPruneBounded(t *testing.T, s store.Store) {
	const perDay = 50
	ctx := context.Background()
	for day := range 10 {
		at := t0.Add(time.Duration(day) * 24 * time.Hour)
		for i := range perDay {
			takeFrom(t, s, fmt.Sprintf("svc|d%dw%d", day, i), fmt.Sprintf("svc|d%ds%d", day, i), 100, at)
			key := payloadKey()
			tk := mustTake(t, s, store.OpCheck, key, at, store.SettleFresh)
			finish(t, s, store.OpCheck, key, tk.LeaseToken, store.SettlementResult{State: store.SettlementFailed})
		}
		deliverFresh(t, s, at)
		prune(t, s, at)
		z := sizes(t, s)
		if z.Free > 3*perDay || z.FreeSources > 3*perDay || z.Settlements > 3*perDay {
			t.Fatalf("day %d: %+v, want at most three days' rows (%d)", day, z, 3*perDay)
		}
	}
	// The edge: a row is kept until exactly FreeRetention after its last
	// call, and deleted from then on.
	last := t0.Add(9 * 24 * time.Hour)
	prune(t, s, last.Add(store.FreeRetention-time.Millisecond)) // the days before the last
	if p := prune(t, s, last.Add(store.FreeRetention)); p.Free != 0 || p.Settlements != 0 {
		t.Errorf("at the retention edge: %+v, want nothing deleted", p)
	}
	if p := prune(t, s, last.Add(store.FreeRetention+time.Millisecond)); p.Free != perDay || p.FreeSources != perDay || p.Settlements != perDay {
		t.Errorf("1 ms past the edge: %+v, want the last day's %d of each", p, perDay)
	}
	if z := sizes(t, s); z.Free != 0 || z.FreeSources != 0 || z.Settlements != 0 || z.Payments != 10 {
		t.Errorf("after the last prune: %+v, want no free or settlement rows and all 10 payments", z)
	}
	if es, err := s.Entries(ctx, store.OpCheck, allFrom, allTo); err != nil || len(es) != 10 {
		t.Errorf("ledger after pruning: %d entries (%v), want 10", len(es), err)
	}
}

func testPruneHeldSettlement(t *testing.T, s store.Store) {
	key := payloadKey()
	mustTake(t, s, store.OpProbe, key, t0, store.SettleFresh)
	// Held past the retention (a lease that never ends in practice).
	if p := prune(t, s, t0.Add(leaseFor-time.Millisecond)); p.Settlements != 0 {
		t.Errorf("a held record: %d deleted", p.Settlements)
	}
	if _, ok, err := s.Settlement(context.Background(), store.OpProbe, key); err != nil || !ok {
		t.Errorf("held record gone: ok=%v err=%v", ok, err)
	}
}

// testReopenResumesOnce: a delivery whose report was not written is
// reopened; the same payment then resumes exactly once, the resumed
// delivery writes no second entry, and the payment is spent afterwards.
func testReopenResumesOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := newClaim(store.OpCheck, t0)
	r := mustClaim(t, s, c, store.Claimed)
	deliver(t, s, r, entryFor(c))
	ok, err := s.Reopen(ctx, r.PaymentID, r.LeaseToken)
	if err != nil || !ok {
		t.Fatalf("Reopen = %v, %v; want true", ok, err)
	}
	if ok, _ := s.Reopen(ctx, r.PaymentID, r.LeaseToken); ok {
		t.Errorf("a second Reopen of the same delivery: true")
	}
	c.Now = t0.Add(40 * time.Second)
	res := claimConcurrently(t, []store.Store{s}, 10, c)
	assertCount(t, res, store.Resumed, 1)
	assertCount(t, res, store.Busy, 9)
	again := resultWith(res, store.Resumed)
	e := entryFor(c)
	e.Check.PayabilityState = "UNCONFIGURED" // the resumed run saw another challenge
	deliver(t, s, again, e)
	es := assertEntries(t, s, store.OpCheck, 1)
	if len(es) == 1 && (es[0].ID != r.PaymentID || es[0].Check.PayabilityState != "POPULATED") {
		t.Errorf("entry = %+v, want the first delivery's, kept", describe(es[0]))
	}
	mustClaim(t, s, c, store.AlreadyUsed)
}

func testReopenRefusals(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := newClaim(store.OpMemo, t0)
	r := mustClaim(t, s, c, store.Claimed)
	if ok, err := s.Reopen(ctx, r.PaymentID, r.LeaseToken); err != nil || ok {
		t.Errorf("Reopen before delivery = %v, %v; want false", ok, err)
	}
	deliver(t, s, r, entryFor(c))
	if ok, err := s.Reopen(ctx, r.PaymentID, "another-token"); err != nil || ok {
		t.Errorf("Reopen with another token = %v, %v; want false", ok, err)
	}
	if ok, _ := s.Reopen(ctx, r.PaymentID, r.LeaseToken); !ok {
		t.Fatal("Reopen = false")
	}
	c.Now = t0.Add(time.Minute)
	again := mustClaim(t, s, c, store.Resumed)
	deliver(t, s, again, entryFor(c))
	// The resumed report could not be written either: no resume is left.
	if ok, err := s.Reopen(ctx, again.PaymentID, again.LeaseToken); err != nil || ok {
		t.Errorf("Reopen of the resumed delivery = %v, %v; want false (one resume)", ok, err)
	}
	mustClaim(t, s, c, store.AlreadyUsed)
	assertEntries(t, s, store.OpMemo, 1)
}

// Growth drives the load through s: 3,000 free pre-checks (fresh
// wallets) within one simulated hour, then 3,000 paid deliveries, calling
// check after every 100 operations (the SQLite test measures its -wal file
// there). No prune runs during the load: the log must stay bounded by the
// checkpoints alone. The pre-checks are single-statement upserts (TakeFree,
// no source): the statement shape whose unfinished RETURNING kept SQLite
// from checkpointing (a call with a source commits a transaction, which
// checkpoints either way). Then 100 calls from one source reach its
// ceiling and the next is refused, and one prune two days on leaves no
// free-tier row while the seen-set and the ledger keep every payment.
func Growth(t *testing.T, s store.Store, check func(t *testing.T, i int)) {
	const n, ceiling = 3000, 100
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		if d := takeFree(t, s, fmt.Sprintf("svc|g%d", i), at); !d.Allowed {
			t.Fatalf("free call %d refused: %+v", i, d)
		}
		if i%100 == 99 {
			check(t, i+1)
		}
	}
	for i := range ceiling {
		if d := takeFrom(t, s, fmt.Sprintf("svc|c%d", i), "svc|src", ceiling, t0.Add(time.Duration(i)*time.Second)); !d.Allowed {
			t.Fatalf("call %d from one source refused: %+v", i+1, d)
		}
	}
	if d := takeFrom(t, s, "svc|c-extra", "svc|src", ceiling, t0.Add(time.Hour)); d.Allowed || d.Reason != store.FreeSourceLimit {
		t.Errorf("call %d from one source: %+v, want refused %s", ceiling+1, d, store.FreeSourceLimit)
	}
	paidFrom := t0.Add(time.Hour)
	for i := range n {
		deliverFresh(t, s, paidFrom.Add(time.Duration(i)*time.Second))
		if i%100 == 99 {
			check(t, i+1)
		}
	}
	if z := sizes(t, s); z.Free != n+ceiling || z.FreeSources != 1 || z.Payments != n {
		t.Errorf("before pruning: %+v, want %d wallets, 1 source, %d payments", z, n+ceiling, n)
	}
	prune(t, s, t0.Add(time.Hour+store.FreeRetention+time.Millisecond))
	if z := sizes(t, s); z.Free != 0 || z.FreeSources != 0 || z.Payments != n {
		t.Errorf("after pruning two days on: %+v, want no free-tier rows and all %d payments", z, n)
	}
	if es, err := s.Entries(context.Background(), store.OpCheck, allFrom, allTo); err != nil || len(es) != n {
		t.Errorf("ledger: %d entries (%v), want %d", len(es), err, n)
	}
}

// deliverFresh claims and delivers one new check payment at now.
func deliverFresh(t *testing.T, s store.Store, now time.Time) {
	t.Helper()
	c := newClaim(store.OpCheck, now)
	deliver(t, s, mustClaim(t, s, c, store.Claimed), entryFor(c))
}
