package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
)

// ErrRefundTx: the refund transaction is neither a Solana transaction
// signature nor an EVM transaction hash.
var ErrRefundTx = errors.New("ledger: the refund tx is not a transaction id (a base58 Solana signature of 64 bytes, or 0x and 64 hex digits on Base)")

// Refund records a refund of the entry id, paid back by the transaction tx,
// at the time at. With op empty the entry is looked up in every op's ledger
// (an entry's id is its payment's, unique across ops). The entry is never
// touched: the refund is its own record, linked to it.
func Refund(ctx context.Context, st store.Store, op store.Op, id, tx string, at time.Time) (store.Refund, error) {
	if !solana.ValidSignature(tx) && !store.IsEVMTxHash(tx) {
		return store.Refund{}, ErrRefundTx
	}
	ops := store.Ops
	if op != "" {
		if !op.Valid() {
			return store.Refund{}, errors.New("ledger: op must be check, memo, probe, preflight or lint")
		}
		ops = []store.Op{op}
	}
	for _, o := range ops {
		r, err := st.AddRefund(ctx, store.Refund{Op: o, EntryID: id, Tx: tx, Time: at})
		if errors.Is(err, store.ErrNoEntry) {
			continue
		}
		return r, err
	}
	return store.Refund{}, store.ErrNoEntry
}
