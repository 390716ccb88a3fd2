package sqlcore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The facilitator rail's settlements: one row per (op, payload key).
//
// takeSettlementSQL inserts a new record held by the caller, or takes an
// existing one that is not settled and whose lease is free or ended, in one
// conditional upsert: of any number of concurrent takes, on any instance,
// one matches. A record sent to /settle stays "attempted" (the taker resumes
// there); any other becomes "verifying". A take that matched no row returns
// no row and wrote nothing.
// $1 op, $2 key, $3 token, $4 lease end, $5 now, $6 false.
const takeSettlementSQL = `
INSERT INTO settlements (op, payload_key, state, lease_token, lease_until_ms, tx, payer, confirmed, fee_lamports, created_ms)
VALUES ($1, $2, 'verifying', $3, $4, NULL, NULL, $6, '0', $5)
ON CONFLICT (op, payload_key) DO UPDATE SET
	state = CASE WHEN settlements.state = 'attempted' THEN 'attempted' ELSE 'verifying' END,
	lease_token = excluded.lease_token,
	lease_until_ms = excluded.lease_until_ms
WHERE settlements.state <> 'settled' AND settlements.lease_until_ms <= $5
RETURNING state`

const selectSettlementSQL = `
SELECT state, lease_until_ms, tx, payer, confirmed, fee_lamports
FROM settlements WHERE op = $1 AND payload_key = $2`

// markSettlementSentSQL: compare-and-set on the lease token.
const markSettlementSentSQL = `
UPDATE settlements SET state = 'attempted'
WHERE op = $1 AND payload_key = $2 AND lease_token = $3 AND state IN ('verifying', 'attempted')`

// finishSettlementSQL records the holder's outcome and frees the lease,
// compare-and-set on the lease token. A settled record is final.
// $1 op, $2 key, $3 token, $4 state, $5 tx, $6 payer, $7 confirmed, $8 fee.
const finishSettlementSQL = `
UPDATE settlements SET state = $4, tx = $5, payer = $6, confirmed = $7, fee_lamports = $8,
	lease_token = NULL, lease_until_ms = 0
WHERE op = $1 AND payload_key = $2 AND lease_token = $3 AND state <> 'settled'`

// confirmSettlementSQL: compare-and-set on a settled, unconfirmed record.
// $1 op, $2 key, $3 tx, $4 true, $5 fee, $6 false.
const confirmSettlementSQL = `
UPDATE settlements SET confirmed = $4, fee_lamports = $5
WHERE op = $1 AND payload_key = $2 AND state = 'settled' AND tx = $3 AND confirmed = $6`

func validSettlementKey(op store.Op, key string) error {
	if !op.Valid() || !store.IsDigest(key) {
		return store.ErrInvalidSettlement
	}
	return nil
}

// TakeSettlement implements store.Store.
func (s *Store) TakeSettlement(ctx context.Context, op store.Op, key string, now time.Time, leaseFor time.Duration) (store.SettlementTake, error) {
	if err := validSettlementKey(op, key); err != nil {
		return store.SettlementTake{}, err
	}
	if now.IsZero() || leaseFor <= 0 {
		return store.SettlementTake{}, store.ErrInvalidSettlement
	}
	nowMS := now.UnixMilli()
	token := rand.Text()
	// A take that matched nothing reads the record to say why; a record
	// freed between the two statements is taken in the next round.
	for range 3 {
		var state string
		err := s.db.QueryRow(ctx, takeSettlementSQL, string(op), key, token, nowMS+leaseFor.Milliseconds(), nowMS, false).Scan(&state)
		switch {
		case err == nil:
			if store.SettlementState(state) == store.SettlementAttempted {
				return store.SettlementTake{Outcome: store.SettleResume, LeaseToken: token}, nil
			}
			return store.SettlementTake{Outcome: store.SettleFresh, LeaseToken: token}, nil
		case !errors.Is(err, ErrNoRows):
			return store.SettlementTake{}, fmt.Errorf("store: take settlement: %w", err)
		}
		st, leaseUntil, ok, err := s.readSettlement(ctx, op, key)
		if err != nil {
			return store.SettlementTake{}, err
		}
		switch {
		case !ok:
			continue
		case st.State == store.SettlementSettled:
			return store.SettlementTake{Outcome: store.SettleDone, Settlement: st}, nil
		case leaseUntil > nowMS:
			return store.SettlementTake{Outcome: store.SettleBusy, RetryAfter: time.Duration(leaseUntil-nowMS) * time.Millisecond}, nil
		}
	}
	return store.SettlementTake{}, errors.New("store: take settlement: record kept changing")
}

func (s *Store) readSettlement(ctx context.Context, op store.Op, key string) (st store.Settlement, leaseUntil int64, ok bool, err error) {
	var state, fee string
	var tx, payer *string
	err = s.db.QueryRow(ctx, selectSettlementSQL, string(op), key).Scan(&state, &leaseUntil, &tx, &payer, &st.Confirmed, &fee)
	switch {
	case errors.Is(err, ErrNoRows):
		return store.Settlement{}, 0, false, nil
	case err != nil:
		return store.Settlement{}, 0, false, fmt.Errorf("store: read settlement: %w", err)
	}
	st.Op, st.Key, st.State, st.Tx, st.Payer = op, key, store.SettlementState(state), deref(tx), deref(payer)
	if st.FeeLamports, err = strconv.ParseUint(fee, 10, 64); err != nil {
		return store.Settlement{}, 0, false, errors.New("store: read settlement: bad fee_lamports column")
	}
	return st, leaseUntil, true, nil
}

// Settlement implements store.Store.
func (s *Store) Settlement(ctx context.Context, op store.Op, key string) (store.Settlement, bool, error) {
	if err := validSettlementKey(op, key); err != nil {
		return store.Settlement{}, false, err
	}
	st, _, ok, err := s.readSettlement(ctx, op, key)
	return st, ok, err
}

// MarkSettlementSent implements store.Store.
func (s *Store) MarkSettlementSent(ctx context.Context, op store.Op, key, leaseToken string) error {
	if err := validSettlementKey(op, key); err != nil {
		return err
	}
	n, err := s.db.Exec(ctx, markSettlementSentSQL, string(op), key, leaseToken)
	if err != nil {
		return fmt.Errorf("store: mark settlement sent: %w", err)
	}
	if n != 1 {
		return store.ErrLeaseLost
	}
	return nil
}

// FinishSettlement implements store.Store.
func (s *Store) FinishSettlement(ctx context.Context, op store.Op, key, leaseToken string, r store.SettlementResult) error {
	if err := validSettlementKey(op, key); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	n, err := s.db.Exec(ctx, finishSettlementSQL, string(op), key, leaseToken, string(r.State),
		nullText(r.Tx), nullText(r.Payer), r.Confirmed, strconv.FormatUint(r.FeeLamports, 10))
	if err != nil {
		return fmt.Errorf("store: finish settlement: %w", err)
	}
	if n != 1 {
		return store.ErrLeaseLost
	}
	return nil
}

// ConfirmSettlement implements store.Store.
func (s *Store) ConfirmSettlement(ctx context.Context, op store.Op, key, tx string, feeLamports uint64) (bool, error) {
	if err := validSettlementKey(op, key); err != nil {
		return false, err
	}
	n, err := s.db.Exec(ctx, confirmSettlementSQL, string(op), key, tx, true, strconv.FormatUint(feeLamports, 10), false)
	if err != nil {
		return false, fmt.Errorf("store: confirm settlement: %w", err)
	}
	return n == 1, nil
}
