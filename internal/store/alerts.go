package store

import "context"

// Alerts keeps the webhooks' alert policy state per endpoint and op in the
// store, so that it survives restarts and is shared by every instance on
// one database. Both adapters implement it beside History.
type Alerts interface {
	// StepAlert reads the state of endpoint's op (zero when none), applies
	// step to it and stores the result, atomically against every other
	// instance (a compare-and-swap, retried), and returns what it stored.
	// step is pure: it may be called more than once.
	StepAlert(ctx context.Context, endpoint, op string, step func(AlertState) AlertState) (AlertState, error)
}

// AlertState is the hysteresis of one endpoint's op (internal/monitor's
// NextAlert computes it): the outcome last announced (the first
// observation's, until an alert changes it), how many observations in a row
// since contradict it, the newest slot counted, and the slot that last
// changed the announced outcome (-1: none).
type AlertState struct {
	Seen      bool
	Passing   bool
	Streak    int
	LastSlot  int64
	FiredSlot int64
}
