package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// RunHistory runs the conformance suite of store.History: open returns a
// history on an empty database of its own; RunHistory does not close it
// (open registers its own cleanup).
func RunHistory(t *testing.T, open func(t *testing.T) store.History) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h store.History)
	}{
		{"history/round_trip_keeps_every_field", testHistoryRoundTrip},
		{"history/one_slot_recorded_once", testHistoryOneSlot},
		{"history/since_is_inclusive_and_order_oldest_first", testHistorySince},
		{"history/limit_keeps_the_newest", testHistoryLimit},
		{"history/endpoints_and_ops_kept_apart", testHistoryApart},
		{"history/latest", testHistoryLatest},
		{"history/prune_edge_keeps_at_retention", testHistoryPrune},
		{"history/daily_counts_per_utc_day", testHistoryDaily},
		{"history/invalid_refused_writes_nothing", testHistoryInvalid},
		{"history/summary_last_changes_per_op", testHistoryLastChanges},
		{"history/summary_daily_counts_follow_prune", testHistoryDailyPrune},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// RunHistoryInstances: two histories opened separately on one database
// record a slot once however many write it at once.
func RunHistoryInstances(t *testing.T, open func(t *testing.T) (a, b store.History)) {
	t.Run("history_instances/20_writers_of_one_slot_record_one", func(t *testing.T) {
		a, b := open(t)
		o := obs("ep-1", "check", 100, t0)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			added int
		)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := []store.History{a, b}[i%2]
				ok, err := h.AddObservation(context.Background(), o)
				if err != nil {
					t.Errorf("AddObservation: %v", err)
				}
				if ok {
					mu.Lock()
					added++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if added != 1 {
			t.Errorf("added = %d, want 1", added)
		}
		got := observations(t, b, "ep-1", "check", time.Time{}, 100)
		if len(got) != 1 {
			t.Errorf("rows = %d, want 1", len(got))
		}
	})
}

func obs(endpoint, op string, slot int64, at time.Time) store.Observation {
	return store.Observation{
		Endpoint: endpoint, Op: op, Slot: slot, At: at, Passing: true,
		State: "POPULATED", DurationMS: 12,
	}
}

func add(t *testing.T, h store.History, o store.Observation) bool {
	t.Helper()
	ok, err := h.AddObservation(context.Background(), o)
	if err != nil {
		t.Fatalf("AddObservation(%+v): %v", o, err)
	}
	return ok
}

func observations(t *testing.T, h store.History, endpoint, op string, since time.Time, limit int) []store.Observation {
	t.Helper()
	got, err := h.Observations(context.Background(), endpoint, op, since, limit)
	if err != nil {
		t.Fatalf("Observations: %v", err)
	}
	return got
}

func slots(os []store.Observation) []int64 {
	var s []int64
	for _, o := range os {
		s = append(s, o.Slot)
	}
	return s
}

func testHistoryRoundTrip(t *testing.T, h store.History) {
	want := store.Observation{
		Endpoint: "seller.a", Op: "preflight", Slot: 1772441000, At: t0.Add(1234 * time.Millisecond),
		Passing: false, State: "STOP", Reasons: []string{"PF-TERMS-CHANGED", "L-V2-001"},
		DurationMS: 4321, TermsSHA256: digest("terms"), Network: "eip155:8453",
	}
	if !add(t, h, want) {
		t.Fatal("first write not added")
	}
	got := observations(t, h, "seller.a", "preflight", time.Time{}, 10)
	if len(got) != 1 {
		t.Fatalf("rows = %d, want 1", len(got))
	}
	if g := got[0]; g.Endpoint != want.Endpoint || g.Op != want.Op || g.Slot != want.Slot ||
		!g.At.Equal(want.At) || g.Passing != want.Passing || g.State != want.State ||
		!slices.Equal(g.Reasons, want.Reasons) || g.DurationMS != want.DurationMS || g.TermsSHA256 != want.TermsSHA256 ||
		g.Network != want.Network {
		t.Errorf("got %+v, want %+v", g, want)
	}
	// No reasons come back as none.
	add(t, h, obs("seller.a", "check", 1, t0))
	if got := observations(t, h, "seller.a", "check", time.Time{}, 10); len(got[0].Reasons) != 0 || !got[0].Passing {
		t.Errorf("got %+v, want passing with no reasons", got[0])
	}
}

func testHistoryOneSlot(t *testing.T, h store.History) {
	if !add(t, h, obs("e", "check", 7, t0)) {
		t.Fatal("first write not added")
	}
	second := obs("e", "check", 7, t0.Add(time.Second))
	second.State = "NOT-A-402"
	if add(t, h, second) {
		t.Error("second write of slot 7 added")
	}
	got := observations(t, h, "e", "check", time.Time{}, 10)
	if len(got) != 1 || got[0].State != "POPULATED" {
		t.Errorf("got %+v, want the first write only", got)
	}
}

func testHistorySince(t *testing.T, h store.History) {
	for i := int64(3); i >= 1; i-- { // written newest first
		add(t, h, obs("e", "check", i, t0.Add(time.Duration(i)*time.Minute)))
	}
	if got := slots(observations(t, h, "e", "check", t0.Add(2*time.Minute), 10)); !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("since slot 2's time: slots %v, want [2 3]", got)
	}
	if got := slots(observations(t, h, "e", "check", t0.Add(2*time.Minute+time.Millisecond), 10)); !slices.Equal(got, []int64{3}) {
		t.Errorf("since 1 ms later: slots %v, want [3]", got)
	}
}

func testHistoryLimit(t *testing.T, h store.History) {
	for i := int64(1); i <= 5; i++ {
		add(t, h, obs("e", "memo", i, t0.Add(time.Duration(i)*time.Minute)))
	}
	if got := slots(observations(t, h, "e", "memo", time.Time{}, 2)); !slices.Equal(got, []int64{4, 5}) {
		t.Errorf("limit 2: slots %v, want [4 5]", got)
	}
	if _, err := h.Observations(context.Background(), "e", "memo", time.Time{}, 0); !errors.Is(err, store.ErrInvalidObservation) {
		t.Errorf("limit 0: err %v, want ErrInvalidObservation", err)
	}
}

func testHistoryApart(t *testing.T, h store.History) {
	add(t, h, obs("a", "check", 1, t0))
	add(t, h, obs("a", "probe", 1, t0.Add(time.Second)))
	add(t, h, obs("b", "check", 1, t0))
	if got := observations(t, h, "a", "check", time.Time{}, 10); len(got) != 1 || got[0].Op != "check" || got[0].Endpoint != "a" {
		t.Errorf("a/check: %+v", got)
	}
	all := observations(t, h, "a", "", time.Time{}, 10)
	if len(all) != 2 || all[0].Op != "check" || all[1].Op != "probe" {
		t.Errorf("a/every op: %+v, want check then probe", all)
	}
}

func testHistoryLatest(t *testing.T, h store.History) {
	if _, ok, err := h.LatestObservation(context.Background(), "e", "lint"); err != nil || ok {
		t.Fatalf("empty: ok %v err %v, want none", ok, err)
	}
	add(t, h, obs("e", "lint", 2, t0.Add(2*time.Minute)))
	add(t, h, obs("e", "lint", 1, t0.Add(time.Minute)))
	o, ok, err := h.LatestObservation(context.Background(), "e", "lint")
	if err != nil || !ok || o.Slot != 2 {
		t.Errorf("latest: %+v ok %v err %v, want slot 2", o, ok, err)
	}
}

func testHistoryPrune(t *testing.T, h store.History) {
	cut := t0.Add(time.Hour)
	add(t, h, obs("e", "check", 1, cut.Add(-time.Millisecond)))
	add(t, h, obs("e", "check", 2, cut))
	add(t, h, obs("f", "probe", 1, cut.Add(-time.Hour)))
	n, err := h.PruneObservations(context.Background(), cut)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (err %v), want 2", n, err)
	}
	if got := slots(observations(t, h, "e", "check", time.Time{}, 10)); !slices.Equal(got, []int64{2}) {
		t.Errorf("left: %v, want [2] (the one at the cut)", got)
	}
}

func testHistoryInvalid(t *testing.T, h store.History) {
	good := obs("e", "check", 1, t0)
	for name, mut := range map[string]func(*store.Observation){
		"empty endpoint":      func(o *store.Observation) { o.Endpoint = "" },
		"endpoint with slash": func(o *store.Observation) { o.Endpoint = "a/b" },
		"endpoint 65 chars":   func(o *store.Observation) { o.Endpoint = string(make([]byte, 65)) },
		"unknown op":          func(o *store.Observation) { o.Op = "scan" },
		"zero time":           func(o *store.Observation) { o.At = time.Time{} },
		"state with space":    func(o *store.Observation) { o.State = "not closed" },
		"reason with comma":   func(o *store.Observation) { o.Reasons = []string{"a,b"} },
		"fetched text reason": func(o *store.Observation) { o.Reasons = []string{"<html>"} },
		"33 reasons":          func(o *store.Observation) { o.Reasons = make([]string, 33) },
		"short terms hash":    func(o *store.Observation) { o.TermsSHA256 = "abc" },
		"v1 network name":     func(o *store.Observation) { o.Network = "base" },
		"network with space":  func(o *store.Observation) { o.Network = "eip155: 8453" },
		"network 42 chars":    func(o *store.Observation) { o.Network = "eip155:" + strings.Repeat("1", 35) },
		"negative duration":   func(o *store.Observation) { o.DurationMS = -1 },
	} {
		o := good
		mut(&o)
		if _, err := h.AddObservation(context.Background(), o); !errors.Is(err, store.ErrInvalidObservation) {
			t.Errorf("%s: err %v, want ErrInvalidObservation", name, err)
		}
	}
	if got := observations(t, h, "e", "check", time.Time{}, 10); len(got) != 0 {
		t.Errorf("rows after refused writes: %d, want 0", len(got))
	}
	// The 32nd reason is the edge: allowed.
	o := good
	o.Reasons = slices.Repeat([]string{"R"}, store.MaxReasons)
	if !add(t, h, o) {
		t.Error("32 reasons not added")
	}
	// A 64-character id is the edge: allowed.
	o = good
	o.Endpoint = string(slices.Repeat([]byte{'a'}, 64))
	if !add(t, h, o) {
		t.Error("64-character id not added")
	}
}

func testHistoryDaily(t *testing.T, h store.History) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i, o := range []store.Observation{
		obs("e", "check", 1, day.Add(-time.Millisecond)), // the day before
		obs("e", "check", 2, day),                        // the first instant of the day
		obs("e", "memo", 2, day.Add(23*time.Hour)),
		obs("e", "check", 3, day.Add(24*time.Hour-time.Millisecond)),
		obs("e", "check", 4, day.Add(24*time.Hour)), // the next day
		obs("f", "check", 1, day),                   // another endpoint
	} {
		if i == 2 || i == 4 {
			o.Passing = false
		}
		add(t, h, o)
	}
	got, err := h.DailyCounts(context.Background(), "e", day.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ObservationDay{
		{Day: day.AddDate(0, 0, -1), Checks: 1, Passing: 1},
		{Day: day, Checks: 3, Passing: 2},
		{Day: day.AddDate(0, 0, 1), Checks: 1, Passing: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Day.Equal(want[i].Day) || got[i].Checks != want[i].Checks || got[i].Passing != want[i].Passing {
			t.Errorf("day %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, _ := h.DailyCounts(context.Background(), "e", day); len(got) != 2 {
		t.Errorf("since the day: %d days, want 2", len(got))
	}
}

// testHistoryLastChanges: the summary keeps, per op, the observation that
// last changed its outcome, as observations land: a repeat of a slot, a
// late observation of an older slot and another endpoint change nothing.
func testHistoryLastChanges(t *testing.T, h store.History) {
	ctx := context.Background()
	at := func(slot int64) time.Time { return t0.Add(time.Duration(slot) * time.Minute) }
	changes := func() map[string]int64 {
		t.Helper()
		cs, err := h.LastChanges(ctx, "e")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, c := range cs {
			if c.Endpoint != "e" {
				t.Errorf("change of %s", c.Endpoint)
			}
			out[c.Op] = c.Slot
		}
		return out
	}
	step := func(op string, slot int64, passing bool) {
		t.Helper()
		o := obs("e", op, slot, at(slot))
		o.Passing = passing
		add(t, h, o)
	}
	if got := changes(); len(got) != 0 {
		t.Fatalf("no observation: %v", got)
	}
	step("check", 1, true)
	step("check", 2, true)
	if got := changes(); len(got) != 0 {
		t.Fatalf("no change yet: %v", got)
	}
	step("check", 3, false) // passing → failing
	step("memo", 1, false)
	step("check", 4, false)
	step("check", 2, true) // a repeat of slot 2: nothing
	if got := changes(); len(got) != 1 || got["check"] != 3 {
		t.Fatalf("changes %v, want check at slot 3", got)
	}
	step("check", 5, true) // failing → passing
	step("memo", 2, true)
	o := obs("e", "check", 0, at(0)) // a late observation of an older slot
	o.Passing = false
	add(t, h, o)
	o = obs("f", "check", 9, at(9)) // another endpoint
	add(t, h, o)
	o.Slot, o.Passing = 10, false
	add(t, h, o)
	if got := changes(); len(got) != 2 || got["check"] != 5 || got["memo"] != 2 {
		t.Fatalf("changes %v, want check at 5 and memo at 2", got)
	}
	cs, _ := h.LastChanges(ctx, "e")
	for _, c := range cs {
		if c.Op == "check" && (!c.Passing || !c.At.Equal(at(5)) || c.State != "POPULATED") {
			t.Errorf("the change is not the observation: %+v", c)
		}
	}
	// Pruned away, a change is no longer told.
	if _, err := h.PruneObservations(ctx, at(6)); err != nil {
		t.Fatal(err)
	}
	if got := changes(); len(got) != 0 {
		t.Errorf("after pruning every observation: %v", got)
	}
	if _, err := h.LastChanges(ctx, "bad id!"); err == nil {
		t.Error("an invalid id accepted")
	}
}

// testHistoryDailyPrune: the daily counts are the summary's; pruning in
// the middle of a day counts that day again from what is left.
func testHistoryDailyPrune(t *testing.T, h store.History) {
	ctx := context.Background()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{day.Add(-time.Hour), day.Add(time.Hour), day.Add(2 * time.Hour), day.Add(3 * time.Hour)} {
		o := obs("e", "check", int64(i), at)
		o.Passing = i%2 == 0
		add(t, h, o)
	}
	if _, err := h.PruneObservations(ctx, day.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := h.DailyCounts(ctx, "e", day.AddDate(0, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Day.Equal(day) || got[0].Checks != 2 || got[0].Passing != 1 {
		t.Errorf("after pruning: %+v, want the day with 2 checks, 1 passing", got)
	}
}

// EndpointsRollbackSQL undoes migration 0010 (the endpoints).
var EndpointsRollbackSQL = []string{
	`DROP TABLE endpoints`,
	`DROP TABLE endpoint_sources`,
	`DROP TABLE endpoint_version`,
	`DELETE FROM schema_migrations WHERE version = 10`,
}

// SummaryRollbackSQL undoes migration 0007 (the summary), and the later
// ones first (0011 the report, 0010 the endpoints, 0009 x402-preflight's
// ledger tables, whose widened op checks apply again unchanged), on a
// database, so that opening a store again applies them to the history
// already there. Run PaymentNetworkRollbackSQL (0008) before it.
var SummaryRollbackSQL = append(append(slices.Clone(ReportRollbackSQL), EndpointsRollbackSQL...),
	`DROP TABLE ledger_preflight`,
	`DROP TABLE ledger_lint`,
	`DELETE FROM schema_migrations WHERE version = 9`,
	`DROP TABLE observation_days`,
	`DROP TABLE observation_runs`,
	`DELETE FROM schema_migrations WHERE version = 7`,
)

// PaymentNetworkRollbackSQL undoes migration 0008 (the ledger's
// payment_network) on each backend, run before SummaryRollbackSQL so that
// opening a store again applies 0007 and 0008 in order. On SQLite the
// append-only triggers that name the column go first (0008 makes them
// again).
var PaymentNetworkRollbackSQL = map[string][]string{
	"sqlite": {
		`DROP TRIGGER ledger_check_fill_only`, `DROP TRIGGER ledger_memo_fill_only`, `DROP TRIGGER ledger_probe_fill_only`,
		`ALTER TABLE ledger_check DROP COLUMN payment_network`, `ALTER TABLE ledger_memo DROP COLUMN payment_network`,
		`ALTER TABLE ledger_probe DROP COLUMN payment_network`, `DELETE FROM schema_migrations WHERE version = 8`,
	},
	"postgres": {
		`ALTER TABLE ledger_check DROP COLUMN payment_network`, `ALTER TABLE ledger_memo DROP COLUMN payment_network`,
		`ALTER TABLE ledger_probe DROP COLUMN payment_network`, `DELETE FROM schema_migrations WHERE version = 8`,
	},
}

// RunSummaryBackfill: the summary the migration backfills from an existing
// history is the one kept as the same observations landed. open opens a
// store on one database (each call the same database); rollback runs
// SummaryRollbackSQL on it with every store closed.
func RunSummaryBackfill(t *testing.T, open func(t *testing.T) (store.History, func()), rollback func(t *testing.T)) {
	ctx := context.Background()
	h, closeStore := open(t)
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	// Three endpoints, two ops, 3 days of flapping outcomes, and one late
	// observation of an older slot.
	for _, ep := range []string{"a", "b.v2", "c"} {
		for slot := int64(10); slot < 82; slot++ {
			for _, op := range []string{"check", "memo"} {
				o := obs(ep, op, slot, day.Add(time.Duration(slot-10)*time.Hour))
				o.Passing = (slot/5+int64(len(ep))+int64(len(op)))%3 != 0
				add(t, h, o)
			}
		}
	}
	late := obs("a", "check", 5, day.Add(-time.Hour))
	late.Passing = false
	add(t, h, late)
	type snapshot struct {
		days    map[string][]store.ObservationDay
		changes map[string][]store.Observation
	}
	read := func(h store.History) snapshot {
		t.Helper()
		s := snapshot{days: map[string][]store.ObservationDay{}, changes: map[string][]store.Observation{}}
		for _, ep := range []string{"a", "b.v2", "c"} {
			d, err := h.DailyCounts(ctx, ep, day.AddDate(0, 0, -2))
			if err != nil {
				t.Fatal(err)
			}
			c, err := h.LastChanges(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			s.days[ep], s.changes[ep] = d, c
		}
		return s
	}
	kept := read(h)
	closeStore()
	rollback(t)
	h, closeStore = open(t)
	defer closeStore()
	backfilled := read(h)
	for ep := range kept.days {
		wantDays := 3
		if ep == "a" { // the late observation is on the day before
			wantDays = 4
		}
		if len(kept.days[ep]) != wantDays || len(kept.changes[ep]) != 2 {
			t.Fatalf("%s: %d days, %d changes kept; want %d and 2", ep, len(kept.days[ep]), len(kept.changes[ep]), wantDays)
		}
		if !slices.EqualFunc(kept.days[ep], backfilled.days[ep], func(x, y store.ObservationDay) bool {
			return x.Day.Equal(y.Day) && x.Checks == y.Checks && x.Passing == y.Passing
		}) {
			t.Errorf("%s: days kept %+v, backfilled %+v", ep, kept.days[ep], backfilled.days[ep])
		}
		if !slices.EqualFunc(kept.changes[ep], backfilled.changes[ep], func(x, y store.Observation) bool {
			return x.Op == y.Op && x.Slot == y.Slot && x.Passing == y.Passing
		}) {
			t.Errorf("%s: changes kept %+v, backfilled %+v", ep, kept.changes[ep], backfilled.changes[ep])
		}
	}
}
