package monitor

import (
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// StripDays is how many days the status page's strip and the 30-day
// figures cover.
const StripDays = 30

// DayOutcome is one day of the strip: a closed set of words.
type DayOutcome string

const (
	DayPassing DayOutcome = "passing" // every check of the day passed
	DayFailing DayOutcome = "failing" // no check of the day passed
	DayMixed   DayOutcome = "mixed"   // some passed, some did not
	DayNone    DayOutcome = "none"    // no check that day
)

// Day is one UTC day of observations.
type Day struct {
	Date    string // YYYY-MM-DD, UTC
	Checks  int
	Passing int
	Outcome DayOutcome
}

// Strip is the days UTC days ending with now's, oldest first, from the
// endpoint's daily counts (those outside the days are ignored).
func Strip(counts []store.ObservationDay, now time.Time, days int) []Day {
	today := now.UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -(days - 1))
	out := make([]Day, days)
	for i := range out {
		out[i].Date = first.AddDate(0, 0, i).Format(time.DateOnly)
	}
	for _, c := range counts {
		d := c.Day.UTC().Truncate(24 * time.Hour)
		i := int(d.Sub(first) / (24 * time.Hour))
		if d.Before(first) || i >= days {
			continue
		}
		out[i].Checks += int(c.Checks)
		out[i].Passing += int(c.Passing)
	}
	for i := range out {
		d := &out[i]
		switch {
		case d.Checks == 0:
			d.Outcome = DayNone
		case d.Passing == d.Checks:
			d.Outcome = DayPassing
		case d.Passing == 0:
			d.Outcome = DayFailing
		default:
			d.Outcome = DayMixed
		}
	}
	return out
}

// Share is the passing checks among the days' and their count; percent is
// nil when there is no check (nothing was measured: no figure is invented).
func Share(days []Day) (checks int, percent *float64) {
	passing := 0
	for _, d := range days {
		checks += d.Checks
		passing += d.Passing
	}
	if checks == 0 {
		return 0, nil
	}
	// One decimal, rounded half up.
	p := float64(int64(float64(passing)*1000/float64(checks)+0.5)) / 10
	return checks, &p
}

// Change is one change of an op's outcome: the observation after which the
// outcome differed from the op's observation before it.
type Change struct {
	Op       string
	From, To Outcome
	At       time.Time
	Reasons  []string
	State    string
}

// Changes are the changes of outcome in obs (oldest first, any ops), oldest
// first. The first observation of an op is no change.
func Changes(obs []store.Observation) []Change {
	last := map[string]store.Observation{}
	var out []Change
	for _, o := range obs {
		if p, ok := last[o.Op]; ok && p.Passing != o.Passing {
			out = append(out, Change{Op: o.Op, From: OutcomeOf(p), To: OutcomeOf(o), At: o.At, Reasons: o.Reasons, State: o.State})
		}
		last[o.Op] = o
	}
	return out
}

// LastChange is the newest of changes (each op's observation that last
// changed its outcome: store.History.LastChanges) of an op e has, taken at
// or after since (the page's window).
func LastChange(e Endpoint, changes []store.Observation, since time.Time) (Change, bool) {
	var (
		best Change
		ok   bool
	)
	for _, o := range changes {
		if !e.Has(o.Op) || o.At.Before(since) || (ok && !o.At.After(best.At)) {
			continue
		}
		from := prevOutcome(o)
		best, ok = Change{Op: o.Op, From: from, To: OutcomeOf(o), At: o.At, Reasons: o.Reasons, State: o.State}, true
	}
	return best, ok
}

// prevOutcome is the outcome before a change to o's.
func prevOutcome(o store.Observation) Outcome {
	if o.Passing {
		return Failing
	}
	return Passing
}

// Incident is an open incident: the status source's latest observation is
// critical (preflight STOP, lint errors). FailureStage is the first reason
// code of the first critical observation of the current run, OpenedAt its
// time.
type Incident struct {
	FailureStage string
	OpenedAt     time.Time
}

// ActiveIncident is the incident open at the end of obs (the status source
// op's observations, oldest first), or nil when its latest is not critical.
// A run longer than obs opens at obs's first observation: the history read
// is the bound of what can be said.
func ActiveIncident(op string, obs []store.Observation) *Incident {
	i := len(obs) - 1
	if i < 0 || stateStatus(op, obs[i].State) != Critical {
		return nil
	}
	for i > 0 && stateStatus(op, obs[i-1].State) == Critical {
		i--
	}
	in := &Incident{OpenedAt: obs[i].At, FailureStage: "unknown"}
	if len(obs[i].Reasons) > 0 {
		in.FailureStage = obs[i].Reasons[0]
	}
	return in
}
