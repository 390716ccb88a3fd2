package ledger

import (
	"math"
	"math/big"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/store"
)

// The tripwires of the criteria's kill line that our own records can
// compute, with their thresholds.
const (
	// WindowDays: "(1) refunds >5% in any 30-day window". The free-use
	// tripwire is read over the same windows (the criteria name none).
	WindowDays = 30
	// RefundPercent: refunds over 5% of paid calls fire (1).
	RefundPercent = 5
	// FreeMultiple: free use over 10× paid use fires (2).
	FreeMultiple = 10
)

// Tripwire names, a closed set (also metrics label values).
const (
	TripRefunds = "refunds"
	TripFreeUse = "free_use"
	TripCorpus  = "corpus"
)

// Service is one service of the criteria and the paid ops it sells; each
// has its own kill line, so its own Day-0 and tripwires.
type Service struct {
	Name string
	Ops  []store.Op
}

// Services are the three services, in a fixed order. x402-preflight has no
// criteria kill line of its own; its tripwires are the same three, so the
// operator sees it the same way.
var Services = []Service{
	{criteria.ServicePayability, []store.Op{store.OpCheck, store.OpMemo}},
	{criteria.ServiceRailProbe, []store.Op{store.OpProbe}},
	{criteria.ServiceX402Preflight, []store.Op{store.OpPreflight, store.OpLint}},
}

// Measure is a count against the outside paid calls of one window of UTC
// days (both ends included).
type Measure struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"` // refunds, or allowed free calls
	Paid  int64  `json:"paid"`  // outside paid calls
}

// Ratio is Count / Paid: +Inf when there is a count and no paid call, 0 when
// there is neither.
func (m Measure) Ratio() float64 {
	switch {
	case m.Count == 0:
		return 0
	case m.Paid == 0:
		return math.Inf(1)
	}
	return float64(m.Count) / float64(m.Paid)
}

// above reports whether Count / Paid > num / den, exactly.
func (m Measure) above(num, den int64) bool {
	return m.Count*den > num*m.Paid
}

// higher reports whether m's ratio is above o's, exactly.
func (m Measure) higher(o Measure) bool {
	switch {
	case m.Count == 0:
		return false
	case o.Count == 0:
		return true
	case m.Paid == 0 || o.Paid == 0:
		return o.Paid != 0
	}
	return m.Count*o.Paid > o.Count*m.Paid
}

// Tripwire is one stop-and-review tripwire and where it stands.
type Tripwire struct {
	Name      string `json:"name"`
	Rule      string `json:"rule"`
	Threshold string `json:"threshold"`
	// Armed: the tripwire counts. The two ratio tripwires count from Day-0:
	// before the first outside sale there is no paid use to weigh against.
	Armed bool `json:"armed"`
	// Current is the window of the last WindowDays days, today included.
	Current *Measure `json:"current,omitempty"`
	// Worst is the highest window since Day-0.
	Worst *Measure `json:"worst,omitempty"`
	// Passing is the corpus tripwire's state: the graders pass 100% of the
	// pinned corpus.
	Passing *bool `json:"passing,omitempty"`
	// Fired: some window since Day-0 went over the threshold, or the corpus
	// does not pass. Stop and review.
	Fired bool `json:"fired"`
}

// ServiceStatus is one service's Day-0 and tripwires.
type ServiceStatus struct {
	Service string `json:"service"`
	// Day0 is the first outside (non-house) paid settlement of the service;
	// nil while there is none.
	Day0      *time.Time `json:"day0"`
	Tripwires []Tripwire `json:"tripwires"`
}

// Status is the tripwires of both services at one time.
type Status struct {
	At time.Time `json:"at"`
	// Day0 is the earliest Day-0 of the services, nil while neither sold.
	Day0 *time.Time `json:"day0"`
	// Fired: some tripwire of some service fired.
	Fired    bool            `json:"fired"`
	Services []ServiceStatus `json:"services"`
}

// Evaluate computes every service's tripwires from the store's tallies at
// now; corpusPasses says, per service, whether its graders pass 100% of the
// pinned corpus.
func Evaluate(t store.Tallies, corpusPasses map[string]bool, now time.Time) Status {
	st := Status{At: now.UTC()}
	today := now.UTC().Format(store.DayLayout)
	for _, svc := range Services {
		ss := ServiceStatus{Service: svc.Name}
		var day0 time.Time
		sales, refunds := map[string]int64{}, map[string]int64{}
		for _, op := range svc.Ops {
			if ts, ok := t.FirstSale[op]; ok && (day0.IsZero() || ts.Before(day0)) {
				day0 = ts
			}
			add(sales, t.Sales[op])
			add(refunds, t.Refunds[op])
		}
		free := map[string]int64{}
		add(free, t.Free[svc.Name])
		if !day0.IsZero() {
			d := day0.UTC()
			ss.Day0 = &d
			if st.Day0 == nil || d.Before(*st.Day0) {
				st.Day0 = &d
			}
		}
		start := ""
		if ss.Day0 != nil {
			start = ss.Day0.Format(store.DayLayout)
		}
		ss.Tripwires = []Tripwire{
			ratioTripwire(TripRefunds, "refunds over 5% of paid calls in any 30-day window",
				"> 5% of outside paid calls", refunds, sales, start, today, RefundPercent, 100),
			ratioTripwire(TripFreeUse, "free use over 10× paid use (read over the same 30-day windows)",
				"> 10× outside paid calls", free, sales, start, today, FreeMultiple, 1),
			corpusTripwire(corpusPasses[svc.Name]),
		}
		for _, tw := range ss.Tripwires {
			st.Fired = st.Fired || tw.Fired
		}
		st.Services = append(st.Services, ss)
	}
	return st
}

func add(m map[string]int64, cs []store.DayCount) {
	for _, c := range cs {
		m[c.Day] += c.Count
	}
}

// ratioTripwire weighs counts against sales over every window of WindowDays
// UTC days that ends on a day from start (Day-0's date) to today, counting
// only days from start on. With no start (no Day-0) it is not armed: the
// current window is shown for information and nothing fires.
func ratioTripwire(name, rule, threshold string, counts, sales map[string]int64, start, today string, num, den int64) Tripwire {
	tw := Tripwire{Name: name, Rule: rule, Threshold: threshold, Armed: start != ""}
	sum := func(from, to string) Measure {
		m := Measure{From: from, To: to}
		for d, n := range counts {
			if d >= from && d <= to && d >= start {
				m.Count += n
			}
		}
		for d, n := range sales {
			if d >= from && d <= to && d >= start {
				m.Paid += n
			}
		}
		return m
	}
	windowFrom := func(end string) string {
		e, _ := time.Parse(store.DayLayout, end)
		return e.AddDate(0, 0, -(WindowDays - 1)).Format(store.DayLayout)
	}
	cur := sum(windowFrom(today), today)
	tw.Current = &cur
	if !tw.Armed {
		return tw
	}
	// Only days with a count or a sale change a window's sums: the windows
	// worth evaluating end on such a day or WindowDays-1 days after one
	// (when a sale leaves the window). Evaluating every day is simpler and
	// cheap: at most a few thousand windows.
	worst := Measure{}
	first := true
	end, _ := time.Parse(store.DayLayout, start)
	last, _ := time.Parse(store.DayLayout, max(today, start))
	for ; !end.After(last); end = end.AddDate(0, 0, 1) {
		e := end.Format(store.DayLayout)
		m := sum(windowFrom(e), e)
		if first || m.higher(worst) {
			worst, first = m, false
		}
		if m.above(num, den) {
			tw.Fired = true
		}
	}
	tw.Worst = &worst
	return tw
}

func corpusTripwire(passes bool) Tripwire {
	return Tripwire{
		Name:      TripCorpus,
		Rule:      "paid ops are served only while the graders pass 100% of the pinned corpus",
		Threshold: "< 100% of the pinned corpus",
		Armed:     true,
		Passing:   &passes,
		Fired:     !passes,
	}
}

// Percent writes m's ratio as a percentage with two decimals, rounded half
// up ("2.50%"); "no paid calls" when there is a count and no paid call.
func (m Measure) Percent() string {
	if m.Count != 0 && m.Paid == 0 {
		return "no paid calls"
	}
	if m.Count == 0 {
		return "0.00%"
	}
	r := new(big.Rat).SetFrac(big.NewInt(m.Count*100), big.NewInt(m.Paid))
	return r.FloatString(2) + "%"
}

// Multiple writes m's ratio as a multiple with two decimals ("3.25×").
func (m Measure) Multiple() string {
	if m.Count != 0 && m.Paid == 0 {
		return "no paid calls"
	}
	if m.Count == 0 {
		return "0.00×"
	}
	r := new(big.Rat).SetFrac(big.NewInt(m.Count), big.NewInt(m.Paid))
	return r.FloatString(2) + "×"
}
