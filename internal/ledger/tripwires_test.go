package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/store"
)

var bothPass = map[string]bool{criteria.ServicePayability: true, criteria.ServiceRailProbe: true, criteria.ServiceX402Preflight: true}

func counts(pairs ...any) []store.DayCount {
	var cs []store.DayCount
	for i := 0; i < len(pairs); i += 2 {
		cs = append(cs, store.DayCount{Day: pairs[i].(string), Count: int64(pairs[i+1].(int))})
	}
	return cs
}

func find(t *testing.T, s Status, service, name string) Tripwire {
	t.Helper()
	for _, svc := range s.Services {
		if svc.Service != service {
			continue
		}
		for _, tw := range svc.Tripwires {
			if tw.Name == name {
				return tw
			}
		}
	}
	t.Fatalf("no tripwire %s/%s", service, name)
	return Tripwire{}
}

func TestTripwireTable(t *testing.T) {
	pv, rp := criteria.ServicePayability, criteria.ServiceRailProbe
	now := day("2026-06-30T12:00:00Z")
	firstSale := day("2026-06-01T09:00:00Z")
	sales := func(cs []store.DayCount) store.Tallies {
		return store.Tallies{
			Sales:     map[store.Op][]store.DayCount{store.OpCheck: cs},
			Refunds:   map[store.Op][]store.DayCount{},
			Free:      map[string][]store.DayCount{},
			FirstSale: map[store.Op]time.Time{store.OpCheck: firstSale},
		}
	}
	twenty := counts("2026-06-01", 20)
	for _, tc := range []struct {
		name      string
		tallies   store.Tallies
		corpus    map[string]bool
		service   string
		trip      string
		armed     bool
		fired     bool
		current   Measure
		worstFrom string // "" for no worst window
	}{
		{
			name: "no sale yet: not armed, free use does not fire",
			tallies: store.Tallies{Free: map[string][]store.DayCount{pv: counts("2026-06-29", 500)},
				Sales: map[store.Op][]store.DayCount{}, Refunds: map[store.Op][]store.DayCount{}, FirstSale: map[store.Op]time.Time{}},
			service: pv, trip: TripFreeUse, armed: false, fired: false,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 500},
		},
		{
			name: "refunds at exactly 5%: does not fire",
			tallies: func() store.Tallies {
				tl := sales(twenty)
				tl.Refunds[store.OpCheck] = counts("2026-06-10", 1)
				return tl
			}(),
			service: pv, trip: TripRefunds, armed: true, fired: false,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 1, Paid: 20}, worstFrom: "2026-05-12",
		},
		{
			name: "refunds over 5%: fires",
			tallies: func() store.Tallies {
				tl := sales(twenty)
				tl.Refunds[store.OpCheck] = counts("2026-06-10", 1, "2026-06-11", 1)
				return tl
			}(),
			service: pv, trip: TripRefunds, armed: true, fired: true,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 2, Paid: 20}, worstFrom: "2026-05-13",
		},
		{
			name: "a refund after the sales left the window: no paid calls, fires",
			tallies: func() store.Tallies {
				tl := sales(counts("2026-05-01", 100))
				tl.FirstSale[store.OpCheck] = day("2026-05-01T09:00:00Z")
				tl.Refunds[store.OpCheck] = counts("2026-06-15", 1)
				return tl
			}(),
			service: pv, trip: TripRefunds, armed: true, fired: true,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 1, Paid: 0}, worstFrom: "2026-05-17",
		},
		{
			name: "an old window fired, the current one is fine: still fired",
			tallies: func() store.Tallies {
				tl := sales(counts("2026-04-01", 10, "2026-06-20", 100))
				tl.FirstSale[store.OpCheck] = day("2026-04-01T09:00:00Z")
				tl.Refunds[store.OpCheck] = counts("2026-04-02", 3)
				return tl
			}(),
			service: pv, trip: TripRefunds, armed: true, fired: true,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 0, Paid: 100}, worstFrom: "2026-04-02",
		},
		{
			name: "memo sales count for payability-verdict, not for rail-probe",
			tallies: store.Tallies{
				Sales:     map[store.Op][]store.DayCount{store.OpMemo: counts("2026-06-20", 1)},
				Refunds:   map[store.Op][]store.DayCount{},
				Free:      map[string][]store.DayCount{pv: counts("2026-06-20", 10), rp: counts("2026-06-20", 1)},
				FirstSale: map[store.Op]time.Time{store.OpMemo: day("2026-06-20T01:00:00Z")},
			},
			service: pv, trip: TripFreeUse, armed: true, fired: false,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 10, Paid: 1}, worstFrom: "2026-05-22",
		},
		{
			name: "free use at exactly 10× does not fire; rail-probe has no Day-0",
			tallies: store.Tallies{
				Sales:     map[store.Op][]store.DayCount{store.OpMemo: counts("2026-06-20", 1)},
				Refunds:   map[store.Op][]store.DayCount{},
				Free:      map[string][]store.DayCount{rp: counts("2026-06-20", 11)},
				FirstSale: map[store.Op]time.Time{store.OpMemo: day("2026-06-20T01:00:00Z")},
			},
			service: rp, trip: TripFreeUse, armed: false, fired: false,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 11},
		},
		{
			name: "free use over 10×: fires",
			tallies: func() store.Tallies {
				tl := sales(counts("2026-06-01", 2))
				tl.Free[pv] = counts("2026-06-01", 15, "2026-06-02", 6)
				return tl
			}(),
			service: pv, trip: TripFreeUse, armed: true, fired: true,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 21, Paid: 2}, worstFrom: "2026-05-04",
		},
		{
			name: "free use before Day-0 is not counted",
			tallies: func() store.Tallies {
				tl := sales(counts("2026-06-01", 1))
				tl.Free[pv] = counts("2026-05-31", 1000, "2026-06-01", 10)
				return tl
			}(),
			service: pv, trip: TripFreeUse, armed: true, fired: false,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 10, Paid: 1}, worstFrom: "2026-05-03",
		},
		{
			name: "a sale leaves the window after 30 days",
			tallies: func() store.Tallies {
				tl := sales(counts("2026-05-31", 1))
				tl.FirstSale[store.OpCheck] = day("2026-05-31T09:00:00Z")
				tl.Free[pv] = counts("2026-06-29", 10)
				return tl
			}(),
			service: pv, trip: TripFreeUse, armed: true, fired: true,
			current: Measure{From: "2026-06-01", To: "2026-06-30", Count: 10, Paid: 0}, worstFrom: "2026-06-01",
		},
		{
			name:    "the corpus does not pass: fires",
			tallies: sales(twenty), corpus: map[string]bool{pv: false, rp: true},
			service: pv, trip: TripCorpus, armed: true, fired: true,
		},
		{
			name:    "the corpus passes",
			tallies: sales(twenty),
			service: rp, trip: TripCorpus, armed: true, fired: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			corpus := tc.corpus
			if corpus == nil {
				corpus = bothPass
			}
			s := Evaluate(tc.tallies, corpus, now)
			tw := find(t, s, tc.service, tc.trip)
			if tw.Armed != tc.armed || tw.Fired != tc.fired {
				t.Errorf("armed %v fired %v, want armed %v fired %v", tw.Armed, tw.Fired, tc.armed, tc.fired)
			}
			if tc.trip == TripCorpus {
				if tw.Passing == nil || *tw.Passing != !tc.fired {
					t.Errorf("passing %v", tw.Passing)
				}
				return
			}
			if tw.Current == nil || *tw.Current != tc.current {
				t.Errorf("current %+v, want %+v", tw.Current, tc.current)
			}
			switch {
			case tc.worstFrom == "" && tw.Worst != nil:
				t.Errorf("worst %+v, want none", tw.Worst)
			case tc.worstFrom != "" && (tw.Worst == nil || tw.Worst.From != tc.worstFrom):
				t.Errorf("worst %+v, want the window from %s", tw.Worst, tc.worstFrom)
			}
			if s.Fired != hasFired(s) {
				t.Errorf("Status.Fired inconsistent")
			}
		})
	}
}

func hasFired(s Status) bool {
	for _, svc := range s.Services {
		for _, t := range svc.Tripwires {
			if t.Fired {
				return true
			}
		}
	}
	return false
}

func TestDayZeroIsTheFirstOutsideSale(t *testing.T) {
	probe := day("2026-05-02T08:00:00Z")
	memo := day("2026-05-03T08:00:00Z")
	check := day("2026-05-04T08:00:00Z")
	s := Evaluate(store.Tallies{FirstSale: map[store.Op]time.Time{store.OpProbe: probe, store.OpMemo: memo, store.OpCheck: check}},
		bothPass, day("2026-05-10T00:00:00Z"))
	if s.Day0 == nil || !s.Day0.Equal(probe) {
		t.Errorf("Day-0 = %v, want the probe sale", s.Day0)
	}
	if d := s.Services[0].Day0; d == nil || !d.Equal(memo) {
		t.Errorf("payability-verdict Day-0 = %v, want its memo sale", d)
	}
	if d := s.Services[1].Day0; d == nil || !d.Equal(probe) {
		t.Errorf("rail-probe Day-0 = %v", d)
	}
	none := Evaluate(store.Tallies{}, bothPass, day("2026-05-10T00:00:00Z"))
	if none.Day0 != nil || none.Services[0].Day0 != nil || none.Fired {
		t.Errorf("no sales: %+v", none)
	}
}

func TestMeasureFormats(t *testing.T) {
	for _, tc := range []struct {
		m             Measure
		pct, multiple string
		ratio         float64
	}{
		{Measure{Count: 1, Paid: 40}, "2.50%", "0.03×", 0.025},
		{Measure{Count: 1, Paid: 3}, "33.33%", "0.33×", 1.0 / 3},
		{Measure{Count: 2, Paid: 3}, "66.67%", "0.67×", 2.0 / 3},
		{Measure{Count: 0, Paid: 0}, "0.00%", "0.00×", 0},
		{Measure{Count: 5, Paid: 0}, "no paid calls", "no paid calls", math.Inf(1)},
		{Measure{Count: 21, Paid: 2}, "1050.00%", "10.50×", 10.5},
	} {
		if got := tc.m.Percent(); got != tc.pct {
			t.Errorf("%+v Percent = %s, want %s", tc.m, got, tc.pct)
		}
		if got := tc.m.Multiple(); got != tc.multiple {
			t.Errorf("%+v Multiple = %s, want %s", tc.m, got, tc.multiple)
		}
		if got := tc.m.Ratio(); got != tc.ratio {
			t.Errorf("%+v Ratio = %v, want %v", tc.m, got, tc.ratio)
		}
	}
}
