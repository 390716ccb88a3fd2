package sqlcore

import (
	"context"
	"errors"

	"github.com/exchangerebel/payability/internal/store"
)

// The alert policy's state (store.Alerts), migration 0011. A step is a
// compare-and-swap on the row's last_slot, fired_slot and streak, so two
// instances stepping one endpoint's op at once never both win: the loser
// reads again and steps from what the winner stored.
const (
	alertStateSQL  = `SELECT passing, streak, last_slot, fired_slot FROM alert_states WHERE endpoint = $1 AND op = $2`
	addAlertSQL    = `INSERT INTO alert_states (endpoint, op, passing, streak, last_slot, fired_slot) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (endpoint, op) DO NOTHING`
	updateAlertSQL = `UPDATE alert_states SET passing = $3, streak = $4, last_slot = $5, fired_slot = $6
WHERE endpoint = $1 AND op = $2 AND passing = $7 AND streak = $8 AND last_slot = $9 AND fired_slot = $10`
	// alertAttempts bounds the compare-and-swap's retries; each lost
	// attempt means another instance stored a step.
	alertAttempts = 16
)

// ErrAlertContended: the state kept changing under every attempt.
var ErrAlertContended = errors.New("store: alert state contended")

// StepAlert implements store.Alerts.
func (s *Store) StepAlert(ctx context.Context, endpoint, op string, step func(store.AlertState) store.AlertState) (store.AlertState, error) {
	if !store.ValidID(endpoint) || !store.ValidMonitorOp(op) {
		return store.AlertState{}, store.ErrInvalidObservation
	}
	for range alertAttempts {
		var (
			cur                 store.AlertState
			passing, streak     int64
			lastSlot, firedSlot int64
		)
		err := s.db.QueryRow(ctx, alertStateSQL, endpoint, op).Scan(&passing, &streak, &lastSlot, &firedSlot)
		switch {
		case errors.Is(err, ErrNoRows):
		case err != nil:
			return store.AlertState{}, err
		default:
			cur = store.AlertState{Seen: true, Passing: passing == 1, Streak: int(streak), LastSlot: lastSlot, FiredSlot: firedSlot}
		}
		next := step(cur)
		if next == cur {
			return cur, nil
		}
		if next.Streak < 0 || !next.Seen {
			return store.AlertState{}, store.ErrInvalidObservation
		}
		var n int64
		if !cur.Seen {
			n, err = s.db.Exec(ctx, addAlertSQL, endpoint, op, b2i(next.Passing), int64(next.Streak), next.LastSlot, next.FiredSlot)
		} else {
			n, err = s.db.Exec(ctx, updateAlertSQL, endpoint, op, b2i(next.Passing), int64(next.Streak), next.LastSlot, next.FiredSlot,
				passing, streak, lastSlot, firedSlot)
		}
		if err != nil {
			return store.AlertState{}, err
		}
		if n == 1 {
			return next, nil
		}
	}
	return store.AlertState{}, ErrAlertContended
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
