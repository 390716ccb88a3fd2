package gate

import (
	"context"
	"errors"

	"github.com/exchangerebel/payability/internal/solana"
)

// SolanaRail is the direct rail on a Solana JSON-RPC node: the buyer sent
// USDC to our token account with an SPL Memo equal to the challenge memo.
type SolanaRail struct {
	Client       *solana.Client
	TokenAccount string
	Mint         string
}

var solanaCodes = map[string]Code{
	solana.ReasonMalformedTx:        CodeTxMalformed,
	solana.ReasonTxFailed:           CodeTxFailed,
	solana.ReasonMemoMissing:        CodeMemoNotInTx,
	solana.ReasonMemoMultiple:       CodeMemoMultiple,
	solana.ReasonMemoMismatch:       CodeMemoMismatch,
	solana.ReasonWrongMint:          CodeWrongMint,
	solana.ReasonAmountInsufficient: CodeAmountInsufficient,
}

// Confirm looks the transaction up and verifies it pays price with memo.
func (r SolanaRail) Confirm(ctx context.Context, sig, memo string, price uint64) (Payment, Code) {
	tx, err := r.Client.GetTransaction(ctx, sig)
	switch {
	case errors.Is(err, solana.ErrNotFound):
		return Payment{}, CodePaymentNotFound
	case errors.Is(err, solana.ErrInvalidSignature):
		return Payment{}, CodePaymentMalformed
	case err != nil:
		return Payment{}, CodeChainUnavailable
	}
	p, err := solana.Verify(tx, solana.Expect{TokenAccount: r.TokenAccount, Mint: r.Mint, MinAmount: price, Memo: memo})
	if err != nil {
		var ref *solana.Refusal
		if errors.As(err, &ref) {
			if c, ok := solanaCodes[ref.Reason]; ok {
				return Payment{}, c
			}
		}
		return Payment{}, CodeTxMalformed
	}
	return Payment{Rail: RailDirect, Tx: sig, Payer: p.Payer, Amount: p.Amount, FeeLamports: p.FeeLamports}, ""
}
