package monitor

import (
	"context"

	"github.com/exchangerebel/payability/internal/store"
)

// The webhooks' alert policy: an op's outcome is announced (an
// outcome_changed event) only when failures_before_alert observations in a
// row fail after a passing announcement, or successes_before_resolve in a
// row pass after a failing one, so that one flaky answer pages no one.
// A failure is an observation that is not passing (Observation.Passing:
// preflight not GO, lint with errors, check not POPULATED, memo not BOUND,
// probe with an exposure or a rail not PRESENT-FAIL-CLOSED); a success is a
// passing one. The state lives in the store (store.Alerts): it survives a
// restart and every instance on one database steps the same state.

// Defaults and bounds of the policy (the configuration file's keys).
const (
	DefaultFailuresBeforeAlert    = 2
	DefaultSuccessesBeforeResolve = 2
	MaxAlertRun                   = 100
)

// AlertPolicy is how many observations in a row change an announcement.
// A zero field means 1 (every change is announced, the behaviour before
// the policy); ParseConfig fills in the defaults.
type AlertPolicy struct {
	FailuresBeforeAlert    int
	SuccessesBeforeResolve int
}

func (p AlertPolicy) need(passing bool) int {
	n := p.FailuresBeforeAlert
	if passing {
		n = p.SuccessesBeforeResolve
	}
	return max(n, 1)
}

// NextAlert steps the state s with the observation of slot (pure). The
// op's first observation sets the announced outcome and announces nothing.
// An observation of a slot at or before the newest counted changes nothing
// (a retried job, or a late one of an older slot); fired is then true only
// for the slot that fired, so a retried job tells its event again (events
// are idempotent by id).
func NextAlert(s store.AlertState, slot int64, passing bool, p AlertPolicy) (next store.AlertState, fired bool) {
	if !s.Seen {
		return store.AlertState{Seen: true, Passing: passing, LastSlot: slot, FiredSlot: -1}, false
	}
	if slot <= s.LastSlot {
		return s, slot == s.FiredSlot
	}
	s.LastSlot = slot
	if passing == s.Passing {
		s.Streak = 0
		return s, false
	}
	s.Streak++
	if s.Streak >= p.need(passing) {
		s.Passing, s.Streak, s.FiredSlot = passing, 0, slot
		return s, true
	}
	return s, false
}

// alert steps cur's op's state and tells of an announced change. Without a
// store that keeps the state, every change of outcome from prev is told.
func (m *Monitor) alert(ctx context.Context, e Endpoint, prev *store.Observation, cur store.Observation) error {
	if m.Changed == nil {
		return nil
	}
	al, ok := m.History.(store.Alerts)
	if !ok {
		if prev != nil && prev.Slot < cur.Slot {
			return m.changed(ctx, *prev, cur)
		}
		return nil
	}
	fired := false
	if _, err := al.StepAlert(ctx, cur.Endpoint, cur.Op, func(s store.AlertState) store.AlertState {
		var next store.AlertState
		next, fired = NextAlert(s, cur.Slot, cur.Passing, e.Alert)
		return next
	}); err != nil {
		return err
	}
	if !fired {
		return nil
	}
	// The event says from the outcome announced before to cur's.
	before := cur
	before.Passing = !cur.Passing
	return m.Changed(ctx, before, cur)
}
