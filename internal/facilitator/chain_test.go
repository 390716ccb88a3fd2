package facilitator_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/solana"
)

// creditChain is a node that shows every transaction it is asked for as
// its show function says: a transaction crediting our token account, or
// not found, or an error.
type creditChain struct {
	mu     sync.Mutex
	show   func(sig string) (*solana.Tx, error)
	lookup []string
}

func (c *creditChain) GetTransaction(_ context.Context, sig string) (*solana.Tx, error) {
	c.mu.Lock()
	c.lookup = append(c.lookup, sig)
	show := c.show
	c.mu.Unlock()
	return show(sig)
}

func (c *creditChain) set(show func(sig string) (*solana.Tx, error)) {
	c.mu.Lock()
	c.show = show
	c.mu.Unlock()
}

// credited is a jsonParsed transaction sig moving amount of mint into the
// token account to, with fee lamports; failed gives meta.err.
func credited(sig, to, mint string, amount uint64, failed bool) *solana.Tx {
	tx := &solana.Tx{Slot: 1000, Meta: &solana.Meta{Fee: 5000, Err: json.RawMessage("null")}}
	if failed {
		tx.Meta.Err = json.RawMessage(`{"InstructionError":[2,"Custom"]}`)
	}
	tx.Transaction.Signatures = []string{sig}
	tx.Transaction.Message.AccountKeys = []solana.AccountKey{
		{Pubkey: facilitatortest.Address("facilitator-fee-payer"), Signer: true, Writable: true},
		{Pubkey: facilitatortest.Address("buyer"), Signer: true},
		{Pubkey: facilitatortest.Address("buyer-usdc"), Writable: true},
		{Pubkey: to, Writable: true},
	}
	bal := func(index int, amount uint64) solana.TokenBalance {
		b := solana.TokenBalance{AccountIndex: index, Mint: mint, ProgramID: solana.TokenProgram}
		b.UITokenAmount.Amount, b.UITokenAmount.Decimals = strconv.FormatUint(amount, 10), 6
		return b
	}
	tx.Meta.PreTokenBalances = []solana.TokenBalance{bal(2, 1_000_000), bal(3, 7)}
	tx.Meta.PostTokenBalances = []solana.TokenBalance{bal(2, 1_000_000-amount), bal(3, 7+amount)}
	return tx
}

func pays(amount uint64) func(string) (*solana.Tx, error) {
	return func(sig string) (*solana.Tx, error) {
		return credited(sig, tokenAccount, gate.Mainnet.Mint, amount, false), nil
	}
}

// With an RPC node, a settled transaction releases the report only when the
// chain shows it credited the price to our token account, memo or not.
func TestChainMustShowTheCredit(t *testing.T) {
	notFound := func(string) (*solana.Tx, error) { return nil, solana.ErrNotFound }
	tests := []struct {
		name string
		show func(string) (*solana.Tx, error)
		code gate.Code
	}{
		{"credit of the price", pays(offer.Price), ""},
		{"credit above the price", pays(offer.Price + 1), ""},
		{"credit below the price", pays(offer.Price - 1), gate.CodeAmountInsufficient},
		{"another mint", func(sig string) (*solana.Tx, error) {
			return credited(sig, tokenAccount, gate.Devnet.Mint, offer.Price, false), nil
		}, gate.CodeWrongMint},
		{"another token account", func(sig string) (*solana.Tx, error) {
			return credited(sig, facilitatortest.Address("someone-else"), gate.Mainnet.Mint, offer.Price, false), nil
		}, gate.CodeAmountInsufficient},
		{"failed on chain", func(sig string) (*solana.Tx, error) {
			return credited(sig, tokenAccount, gate.Mainnet.Mint, offer.Price, true), nil
		}, gate.CodeTxRejected},
		{"another transaction's answer", func(string) (*solana.Tx, error) {
			return credited(facilitatortest.TxOf([]byte("other")), tokenAccount, gate.Mainnet.Mint, offer.Price, false), nil
		}, gate.CodeTxMalformed},
		{"not found yet", notFound, gate.CodeSettlementPending},
		{"node unavailable", func(string) (*solana.Tx, error) {
			return nil, &solana.Error{Code: solana.CodeTransport}
		}, gate.CodeChainUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			chain := &creditChain{show: tt.show}
			fx.rail.Chain = chain
			pay, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer)
			if code != tt.code {
				t.Fatalf("code %q, want %q", code, tt.code)
			}
			if code == "" && (pay.FeeLamports != 5000 || pay.Tx == "") {
				t.Errorf("payment %+v", pay)
			}
			if code != "" && pay.Tx != "" {
				t.Errorf("a refusal carries a payment: %+v", pay)
			}
			if len(chain.lookup) == 0 {
				t.Error("the chain was not asked")
			}
		})
	}
}

// A v1 payment carries no memo: the credit alone is checked.
func TestChainCreditOfAV1Payment(t *testing.T) {
	fx := newFixture(t)
	fx.rail.Chain = &creditChain{show: pays(offer.Price)}
	tx := facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: facilitatortest.Address("buyer"), FeePayer: facilitatortest.Address("facilitator-fee-payer"),
		Mint: gate.Mainnet.Mint, To: tokenAccount, Amount: offer.Price,
	})
	pay, code := fx.rail.Settle(context.Background(), request(header("X-PAYMENT", facilitatortest.PayloadV1("solana", tx))), offer)
	if code != "" || pay.FeeLamports != 5000 {
		t.Errorf("v1: %q %+v", code, pay)
	}
}

// A settled transaction the node does not show yet is pending, never a
// release; the same payload resumes, here or after a restart, by looking
// the transaction up again, with no further facilitator call.
func TestSettledButNotOnChainYetResumes(t *testing.T) {
	fx := newFixture(t)
	chain := &creditChain{show: func(string) (*solana.Tx, error) { return nil, solana.ErrNotFound }}
	fx.rail.Chain = chain
	h := fx.v2()
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("first: %q", code)
	}
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("still not found: %q", code)
	}
	chain.set(pays(offer.Price))
	other := fx.restarted()
	other.Chain = chain
	pay, code := other.Settle(context.Background(), request(h), offer)
	if code != "" || pay.FeeLamports != 5000 || pay.Tx != facilitatortest.TxOf(fx.fake.Calls("/settle")[0].Payload) {
		t.Fatalf("resume: %q %+v", code, pay)
	}
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
	// Confirmed: no further lookup.
	n := len(chain.lookup)
	if again, code := other.Settle(context.Background(), request(h), offer); code != "" || again.Tx != pay.Tx || again.FeeLamports != 5000 || len(chain.lookup) != n {
		t.Errorf("again: %q %+v, %d lookups", code, again, len(chain.lookup)-n)
	}
}
