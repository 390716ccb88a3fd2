package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// accountingTests are the ledger issue's part of the suite: cached rates,
// the pending → filled CAD path, refunds and the tripwire tallies.
var accountingTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"rates/first_value_kept_range_inclusive", testRatesInsertOrIgnore},
	{"rates/invalid_refused", testRatesInvalid},
	{"cad/pending_filled_once_never_rewritten", testFillCADOnce},
	{"cad/concurrent_fills_one_wins", testFillCADConcurrent},
	{"refunds/own_record_linked_entry_unchanged", testRefundAppendOnly},
	{"refunds/unknown_entry_or_bad_tx_refused", testRefundRefusals},
	{"tallies/outside_sales_refunds_and_free_use_by_day", testTallies},
	{"tallies/free_burst_counts_only_the_allowed_call", testTalliesFreeBurst},
}

// deliverAt claims and delivers a fresh payment of op at ts, with the house
// flag, and returns the stored entry.
func deliverAt(t *testing.T, s store.Store, op store.Op, ts time.Time, house bool) store.Entry {
	t.Helper()
	c := newClaim(op, ts)
	r := mustClaim(t, s, c, store.Claimed)
	e := entryFor(c)
	e.Timestamp = ts
	e.House = house
	deliver(t, s, r, e)
	e.ID = r.PaymentID
	e.Timestamp = ts.UTC().Truncate(time.Millisecond)
	return e
}

func testRatesInsertOrIgnore(t *testing.T, s store.Store) {
	ctx := context.Background()
	n, err := s.PutRates(ctx, []store.Rate{{Date: "2026-03-02", Value: "1.3643"}, {Date: "2026-03-03", Value: "1.3650"}}, t0)
	if err != nil || n != 2 {
		t.Fatalf("PutRates = %d, %v; want 2 new", n, err)
	}
	// A second fetch that disagrees about a cached date changes nothing there.
	n, err = s.PutRates(ctx, []store.Rate{{Date: "2026-03-02", Value: "9.9999"}, {Date: "2026-03-05", Value: "1.3701"}}, t0.Add(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("second PutRates = %d, %v; want 1 new", n, err)
	}
	got, err := s.Rates(ctx, "2026-03-02", "2026-03-05")
	if err != nil {
		t.Fatalf("Rates: %v", err)
	}
	want := []store.Rate{store.Rate{Date: "2026-03-02", Value: "1.3643"}, store.Rate{Date: "2026-03-03", Value: "1.3650"}, store.Rate{Date: "2026-03-05", Value: "1.3701"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Rates = %v, want %v", got, want)
	}
	got, _ = s.Rates(ctx, "2026-03-03", "2026-03-04")
	if !reflect.DeepEqual(got, want[1:2]) {
		t.Errorf("Rates [03-03, 03-04] = %v, want %v", got, want[1:2])
	}
}

func testRatesInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	for name, rs := range map[string][]store.Rate{
		"no date":       {{Date: "", Value: "1.3"}},
		"not a date":    {{Date: "2026-02-30", Value: "1.3"}},
		"no value":      {{Date: "2026-03-02", Value: ""}},
		"not a decimal": {{Date: "2026-03-02", Value: "https://seller.example/"}},
		"an exponent":   {{Date: "2026-03-02", Value: "1.3e0"}},
		"one bad of 2:": {{Date: "2026-03-02", Value: "1.3"}, {Date: "03/03/2026", Value: "1.3"}},
	} {
		if _, err := s.PutRates(ctx, rs, t0); !errors.Is(err, store.ErrInvalidRate) {
			t.Errorf("%s: PutRates = %v, want ErrInvalidRate", name, err)
		}
	}
	if got, _ := s.Rates(ctx, "2000-01-01", "2100-01-01"); len(got) != 0 {
		t.Errorf("a refused batch cached %v", got)
	}
	if _, err := s.Rates(ctx, "yesterday", "2026-03-02"); !errors.Is(err, store.ErrInvalidRate) {
		t.Errorf("Rates with a bad bound = %v, want ErrInvalidRate", err)
	}
}

func testFillCADOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := deliverAt(t, s, store.OpCheck, t0, false)
	second := deliverAt(t, s, store.OpCheck, t0.Add(time.Minute), false)
	probe := deliverAt(t, s, store.OpProbe, t0, false)

	pending, err := s.PendingEntries(ctx, store.OpCheck)
	if err != nil {
		t.Fatalf("PendingEntries: %v", err)
	}
	if len(pending) != 2 || pending[0].ID != first.ID || pending[1].ID != second.ID {
		t.Fatalf("PendingEntries(check) = %d entries, want the two, oldest first", len(pending))
	}
	ok, err := s.FillCAD(ctx, store.OpCheck, first.ID, "1.3643", "2026-03-02")
	if err != nil || !ok {
		t.Fatalf("FillCAD = %v, %v; want filled", ok, err)
	}
	// Never rewritten: a second fill of the same entry changes nothing.
	if ok, err := s.FillCAD(ctx, store.OpCheck, first.ID, "1.9999", "2026-02-27"); err != nil || ok {
		t.Errorf("second FillCAD = %v, %v; want false", ok, err)
	}
	// Unknown ids, and the entry under another op, match nothing.
	if ok, err := s.FillCAD(ctx, store.OpCheck, "no-such-entry", "1.3643", "2026-03-02"); err != nil || ok {
		t.Errorf("FillCAD of an unknown entry = %v, %v; want false", ok, err)
	}
	if ok, err := s.FillCAD(ctx, store.OpMemo, probe.ID, "1.3643", "2026-03-02"); err != nil || ok {
		t.Errorf("FillCAD under the wrong op = %v, %v; want false", ok, err)
	}
	for name, call := range map[string]func() (bool, error){
		"no rate":      func() (bool, error) { return s.FillCAD(ctx, store.OpCheck, second.ID, "", "2026-03-02") },
		"rate is text": func() (bool, error) { return s.FillCAD(ctx, store.OpCheck, second.ID, "pbl1.ck.x", "2026-03-02") },
		"bad date":     func() (bool, error) { return s.FillCAD(ctx, store.OpCheck, second.ID, "1.3", "2026-3-2") },
		"unknown op":   func() (bool, error) { return s.FillCAD(ctx, "scan", second.ID, "1.3", "2026-03-02") },
		"no entry id:": func() (bool, error) { return s.FillCAD(ctx, store.OpCheck, "", "1.3", "2026-03-02") },
	} {
		if _, err := call(); !errors.Is(err, store.ErrInvalidRate) {
			t.Errorf("%s: FillCAD = %v, want ErrInvalidRate", name, err)
		}
	}

	es := assertEntries(t, s, store.OpCheck, 2)
	want := first
	want.CAD.Rate, want.CAD.RateDate, want.CAD.Pending = "1.3643", "2026-03-02", false
	if len(es) == 2 && !equalEntry(es[0], want) {
		t.Errorf("filled entry:\n got %s\nwant %s", describe(es[0]), describe(want))
	}
	if len(es) == 2 && !equalEntry(es[1], second) {
		t.Errorf("the other entry changed:\n got %s\nwant %s", describe(es[1]), describe(second))
	}
	pending, _ = s.PendingEntries(ctx, store.OpCheck)
	if len(pending) != 1 || pending[0].ID != second.ID {
		t.Errorf("after the fill PendingEntries(check) = %d entries, want the second only", len(pending))
	}
	if pending, _ := s.PendingEntries(ctx, store.OpProbe); len(pending) != 1 {
		t.Errorf("PendingEntries(probe) = %d, want 1", len(pending))
	}
	if _, err := s.PendingEntries(ctx, "scan"); err == nil {
		t.Errorf("PendingEntries of an unknown op: no error")
	}
}

func testFillCADConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := deliverAt(t, s, store.OpMemo, t0, false)
	rates := []string{"1.3601", "1.3602", "1.3603", "1.3604", "1.3605", "1.3606", "1.3607", "1.3608", "1.3609", "1.3610"}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		winner []string
	)
	start := make(chan struct{})
	for _, r := range rates {
		wg.Go(func() {
			<-start
			ok, err := s.FillCAD(ctx, store.OpMemo, e.ID, r, "2026-03-02")
			if err != nil {
				t.Errorf("FillCAD: %v", err)
			}
			if ok {
				mu.Lock()
				winner = append(winner, r)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winner) != 1 {
		t.Fatalf("%d fills won, want exactly 1", len(winner))
	}
	es := assertEntries(t, s, store.OpMemo, 1)
	if len(es) == 1 && (es[0].CAD.Rate != winner[0] || es[0].CAD.Pending) {
		t.Errorf("stored rate %q pending %v, want the winner's %q filled", es[0].CAD.Rate, es[0].CAD.Pending, winner[0])
	}
}

// refundTx is a well-formed refund transaction signature (base58).
const refundTx = "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi5Y1uEXaWzxFqqAzV7eVsy7rM8y1MypT8jKpBmmLkFAGSX"

func testRefundAppendOnly(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := deliverAt(t, s, store.OpProbe, t0, false)
	at := t0.Add(48*time.Hour + 1500*time.Microsecond)
	r, err := s.AddRefund(ctx, store.Refund{Op: store.OpProbe, EntryID: e.ID, Tx: refundTx, Time: at})
	if err != nil {
		t.Fatalf("AddRefund: %v", err)
	}
	if r.ID == "" || r.ID == e.ID || !r.Time.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("AddRefund = %+v, want a fresh id and the time to the millisecond", r)
	}
	// The entry is as it was, except that a read links the refund.
	es := assertEntries(t, s, store.OpProbe, 1)
	want := e
	want.CAD.Refund = r.ID
	if len(es) == 1 && !equalEntry(es[0], want) {
		t.Errorf("entry after the refund:\n got %s\nwant %s", describe(es[0]), describe(want))
	}
	pending, _ := s.PendingEntries(ctx, store.OpProbe)
	if len(pending) != 1 || pending[0].CAD.Refund != r.ID {
		t.Errorf("PendingEntries does not link the refund: %+v", pending)
	}
	// A refunded pending entry still gets its rate.
	if ok, err := s.FillCAD(ctx, store.OpProbe, e.ID, "1.3643", "2026-03-02"); err != nil || !ok {
		t.Errorf("FillCAD of a refunded entry = %v, %v; want filled", ok, err)
	}
	if _, err := s.AddRefund(ctx, store.Refund{Op: store.OpProbe, EntryID: e.ID, Tx: refundTx[:80], Time: at}); !errors.Is(err, store.ErrAlreadyRefunded) {
		t.Errorf("second refund = %v, want ErrAlreadyRefunded", err)
	}
	got, err := s.Refunds(ctx, at.Add(-time.Second), at.Add(time.Second))
	if err != nil {
		t.Fatalf("Refunds: %v", err)
	}
	want2 := []store.Refund{r}
	if !reflect.DeepEqual(got, want2) {
		t.Errorf("Refunds = %+v, want %+v", got, want2)
	}
	if got, _ := s.Refunds(ctx, at.Add(time.Second), at.Add(time.Hour)); len(got) != 0 {
		t.Errorf("Refunds outside the range = %+v", got)
	}
}

func testRefundRefusals(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := deliverAt(t, s, store.OpCheck, t0, false)
	for name, tc := range map[string]struct {
		r    store.Refund
		want error
	}{
		"unknown entry":      {store.Refund{Op: store.OpCheck, EntryID: "no-such-entry", Tx: refundTx, Time: t0}, store.ErrNoEntry},
		"entry of other op":  {store.Refund{Op: store.OpMemo, EntryID: e.ID, Tx: refundTx, Time: t0}, store.ErrNoEntry},
		"tx is a URL":        {store.Refund{Op: store.OpCheck, EntryID: e.ID, Tx: "https://seller.example/api", Time: t0}, store.ErrInvalidRefund},
		"tx is a memo":       {store.Refund{Op: store.OpCheck, EntryID: e.ID, Tx: "pbl1.ck.q7Rr2hV0bXo9Zl1cN4yT8wJm3Kd5HsAe", Time: t0}, store.ErrInvalidRefund},
		"no tx":              {store.Refund{Op: store.OpCheck, EntryID: e.ID, Time: t0}, store.ErrInvalidRefund},
		"tx too long":        {store.Refund{Op: store.OpCheck, EntryID: e.ID, Tx: refundTx + refundTx, Time: t0}, store.ErrInvalidRefund},
		"no time":            {store.Refund{Op: store.OpCheck, EntryID: e.ID, Tx: refundTx}, store.ErrInvalidRefund},
		"unknown op":         {store.Refund{Op: "scan", EntryID: e.ID, Tx: refundTx, Time: t0}, store.ErrInvalidRefund},
		"no entry id at all": {store.Refund{Op: store.OpCheck, Tx: refundTx, Time: t0}, store.ErrInvalidRefund},
	} {
		if _, err := s.AddRefund(ctx, tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddRefund = %v, want %v", name, err, tc.want)
		}
	}
	if got, _ := s.Refunds(ctx, allFrom, allTo); len(got) != 0 {
		t.Errorf("refused refunds were recorded: %+v", got)
	}
}

func testTallies(t *testing.T, s store.Store) {
	ctx := context.Background()
	day1 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)

	empty, err := s.Tallies(ctx)
	if err != nil {
		t.Fatalf("Tallies: %v", err)
	}
	for _, op := range store.Ops {
		if len(empty.Sales[op]) != 0 || len(empty.Refunds[op]) != 0 {
			t.Errorf("empty store tallies %s: %+v", op, empty)
		}
		if _, ok := empty.FirstSale[op]; ok {
			t.Errorf("empty store has a first sale for %s", op)
		}
	}

	// The operator's own proof comes first: it is no sale.
	house := deliverAt(t, s, store.OpCheck, day1.Add(-time.Hour), true)
	c1 := deliverAt(t, s, store.OpCheck, day1, false)
	deliverAt(t, s, store.OpCheck, day1.Add(time.Minute), false)
	deliverAt(t, s, store.OpCheck, day2, false)
	deliverAt(t, s, store.OpMemo, day2, false)
	p1 := deliverAt(t, s, store.OpProbe, day2.Add(time.Hour), false)
	deliverAt(t, s, store.OpPreflight, day2.Add(2*time.Hour), false)
	l1 := deliverAt(t, s, store.OpLint, day1.Add(time.Hour), false)
	for _, r := range []store.Refund{
		{Op: store.OpLint, EntryID: l1.ID, Tx: refundTx, Time: day2},
		{Op: store.OpCheck, EntryID: c1.ID, Tx: refundTx, Time: day2.Add(time.Hour)},
		{Op: store.OpCheck, EntryID: house.ID, Tx: refundTx, Time: day2}, // a house refund counts for nothing
		{Op: store.OpProbe, EntryID: p1.ID, Tx: refundTx, Time: day2.Add(2 * time.Hour)},
	} {
		if _, err := s.AddRefund(ctx, r); err != nil {
			t.Fatalf("AddRefund: %v", err)
		}
	}
	// Free use: two allowed and one refused on day 1, one allowed on day 2.
	mustFree(t, s, "payability-verdict|wallet:a", day1, true)
	mustFree(t, s, "payability-verdict|wallet:a", day1.Add(time.Second), false)
	mustFree(t, s, "payability-verdict|addr:127.0.0.1", day1, true)
	mustFree(t, s, "payability-verdict|wallet:a", day2, true)
	mustFree(t, s, "rail-probe|wallet:a", day2, true)
	mustFree(t, s, "x402-preflight|wallet:a", day2, true)
	mustFree(t, s, "no-scope", day2, true)

	got, err := s.Tallies(ctx)
	if err != nil {
		t.Fatalf("Tallies: %v", err)
	}
	want := store.Tallies{
		Sales: map[store.Op][]store.DayCount{
			store.OpCheck:     {dc("2026-03-02", 2), dc("2026-03-03", 1)},
			store.OpMemo:      {dc("2026-03-03", 1)},
			store.OpProbe:     {dc("2026-03-03", 1)},
			store.OpPreflight: {dc("2026-03-03", 1)},
			store.OpLint:      {dc("2026-03-02", 1)},
		},
		Refunds: map[store.Op][]store.DayCount{
			store.OpCheck:     {dc("2026-03-03", 1)},
			store.OpMemo:      nil,
			store.OpProbe:     {dc("2026-03-03", 1)},
			store.OpPreflight: nil,
			store.OpLint:      {dc("2026-03-03", 1)},
		},
		Free: map[string][]store.DayCount{
			"payability-verdict": {dc("2026-03-02", 2), dc("2026-03-03", 1)},
			"rail-probe":         {dc("2026-03-03", 1)},
			"x402-preflight":     {dc("2026-03-03", 1)},
			"":                   {dc("2026-03-03", 1)},
		},
		FirstSale: map[store.Op]time.Time{
			store.OpCheck:     day1,
			store.OpMemo:      day2,
			store.OpProbe:     day2.Add(time.Hour),
			store.OpPreflight: day2.Add(2 * time.Hour),
			store.OpLint:      day1.Add(time.Hour),
		},
	}
	if !reflect.DeepEqual(got.Sales, want.Sales) {
		t.Errorf("Sales = %v, want %v", got.Sales, want.Sales)
	}
	if !reflect.DeepEqual(got.Refunds, want.Refunds) {
		t.Errorf("Refunds = %v, want %v", got.Refunds, want.Refunds)
	}
	if !reflect.DeepEqual(got.Free, want.Free) {
		t.Errorf("Free = %v, want %v", got.Free, want.Free)
	}
	if len(got.FirstSale) != len(want.FirstSale) {
		t.Errorf("FirstSale = %v, want %v", got.FirstSale, want.FirstSale)
	}
	for op, w := range want.FirstSale {
		if g := got.FirstSale[op]; !g.Equal(w) {
			t.Errorf("FirstSale[%s] = %v, want %v", op, g, w)
		}
	}
}

func testTalliesFreeBurst(t *testing.T, s store.Store) {
	if got := takeFreeConcurrently(t, []store.Store{s}, 20, "rail-probe|wallet:burst", t0); got != 1 {
		t.Fatalf("allowed = %d of 20, want 1", got)
	}
	got, err := s.Tallies(context.Background())
	if err != nil {
		t.Fatalf("Tallies: %v", err)
	}
	want := []store.DayCount{dc("2026-03-02", 1)}
	if !reflect.DeepEqual(got.Free["rail-probe"], want) {
		t.Errorf("Free[rail-probe] = %v, want %v", got.Free["rail-probe"], want)
	}
}

func dc(day string, n int64) store.DayCount { return store.DayCount{Day: day, Count: n} }

// DeliverOne claims and delivers one check payment at now and returns its
// payment id (the id of its ledger entry), for backend-specific tests.
func DeliverOne(t *testing.T, s store.Store, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	c := store.Claim{Rail: "direct", Tx: "tx-" + now.Format("150405.000"), MemoDigest: strings.Repeat("a", 64), Op: store.OpCheck,
		Payer: "payer", Amount: 10000, FeeLamports: 5000, Now: now, LeaseFor: time.Minute, ResumeWindow: 15 * time.Minute}
	r, err := s.Claim(ctx, c)
	if err != nil || r.Outcome != store.Claimed {
		t.Fatalf("Claim: %v %+v", err, r)
	}
	e := store.Entry{PayerWallet: "payer", Timestamp: now, PriceUSDCUnits: 10000, PaymentTx: c.Tx, PaymentNetwork: SolanaMainnet, SolanaFeeLamports: 5000,
		CriteriaVersion: "v", VerdictLine: "line", CAD: store.CAD{Basis: "basis", Pending: true},
		Check: &store.CheckFields{PayabilityState: "POPULATED"}}
	if err := s.Deliver(ctx, r.PaymentID, r.LeaseToken, e); err != nil {
		t.Fatal(err)
	}
	return r.PaymentID
}
