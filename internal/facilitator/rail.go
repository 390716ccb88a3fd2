package facilitator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
)

// Chain looks a settled transaction up, for its fee in lamports and its
// on-chain outcome. *solana.Client is one.
type Chain interface {
	GetTransaction(ctx context.Context, sig string) (*solana.Tx, error)
}

// EVMChain looks a settled EVM transaction's receipt up. *chain.Client is
// one; chain.ErrReceiptNotFound means "not mined yet".
type EVMChain interface {
	TransactionReceipt(ctx context.Context, hash string) (*chain.Receipt, error)
}

// Rail is the facilitator rail of the gate (gate.FacilitatorRail).
//
// One payload settles once. The transaction id is known only after the
// facilitator settled (its fee payer signs last), so the store's UNIQUE
// claim cannot guard the settlement itself. The store's settlement record
// does, across restarts and across instances sharing the database: it is
// keyed by the route's op and the SHA-256 of the decoded payload (a payload
// verified against one route's requirements is never taken as verified for
// another; the payload itself is never stored), and a conditional upsert
// lets exactly one presentation at a time hold it. The holder runs /verify
// and /settle; a payload sent to /settle before (its answer pending or
// lost) resumes straight at /settle, which a facilitator answers from its
// own record of the broadcast transaction; a settled payload maps to its
// transaction without another facilitator call, and the gate's Claim on the
// transaction id then decides (one delivery, the one resume, "already
// used"). A presentation that finds another one holding the record is
// answered payment_in_progress. Inside one process, concurrent
// presentations of one payload also share one store round (single-flight).
type Rail struct {
	Client *Client
	// Terms are ours, with the facilitator's fee payer (Discover).
	Terms gate.Terms
	// Memos verifies a memo a v2 client echoes in accepted.extra.
	Memos gate.Memos
	// Versions are the x402 versions the facilitator settles exact on our
	// network in (Discover); a payload of another version is refused.
	// EVMVersions are the same for the EVM entry's network (Terms.EVM).
	Versions, EVMVersions map[int]bool
	// Store holds the settlement records (required): the one the gate
	// claims payments in.
	Store store.Store
	// Chain, when set (--solana-rpc), must show that a settled transaction
	// credited the price to our token account before the report is
	// released (and gives its fee in lamports). Without it the
	// facilitator's "settled" is trusted for the amount.
	Chain Chain
	// EVMChain, when set (--evm-rpc), does the same for a payment on the
	// EVM entry: its receipt must show success and a USDC Transfer of at
	// least the price to our address before the report is released.
	EVMChain EVMChain
	Now      func() time.Time
	// VerifyTimeout and SettleTimeout bound the facilitator calls; they run
	// to the end even when the paying client hangs up, so an answer about
	// money moved is never lost to a closed connection.
	VerifyTimeout, SettleTimeout time.Duration
	// LookupDelay is the first pause before looking a settled transaction
	// up again when the node does not show it yet (default 300 ms; each
	// retry waits one more step).
	LookupDelay time.Duration

	mu       sync.Mutex
	inflight map[string]*flight
}

// Defaults of a Rail.
const (
	DefaultVerifyTimeout = 15 * time.Second
	DefaultSettleTimeout = 60 * time.Second
	DefaultLookupDelay   = 300 * time.Millisecond
	// leaseSlack is how much longer than the facilitator calls a
	// settlement lease runs: the chain lookups and the store's writes.
	leaseSlack = 30 * time.Second
)

type flight struct {
	done    chan struct{}
	payment gate.Payment
	code    gate.Code
}

var _ gate.FacilitatorRail = (*Rail)(nil)

// Match checks the form and terms of the payment: free, no facilitator call.
func (r *Rail) Match(req gate.Request, offer gate.Offer) gate.Code {
	_, code := r.match(req, offer)
	return code
}

func (r *Rail) match(req gate.Request, offer gate.Offer) (presented, gate.Code) {
	p, code := parse(req.Header, r.Terms, offer)
	if code != "" {
		return presented{}, code
	}
	versions := r.Versions
	if p.evm {
		versions = r.EVMVersions
	}
	if !versions[p.version] {
		return presented{}, gate.CodeRailUnavailable
	}
	if p.memo != "" {
		// Any memo we issued for this op (and URL, when bound) that is still
		// valid, not only the latest one. A payload already settled or sent
		// to /settle may outlive its memo: its resume is the store's to
		// decide.
		_, mc := r.Memos.Verify(p.memo, req.Op, req.TargetURL)
		if mc == gate.CodeMemoExpired && r.remembered(offer, p) {
			mc = ""
		}
		if mc != "" {
			return presented{}, mc
		}
	}
	return p, ""
}

// Settle verifies and settles the payment with the facilitator, once per
// payload, and returns the settled payment or a refusal code.
func (r *Rail) Settle(ctx context.Context, req gate.Request, offer gate.Offer) (gate.Payment, gate.Code) {
	p, code := r.match(req, offer)
	if code != "" {
		return gate.Payment{}, code
	}
	if r.Store == nil {
		return gate.Payment{}, gate.CodeRailUnavailable
	}
	r.mu.Lock()
	if r.inflight == nil {
		r.inflight = map[string]*flight{}
	}
	if f, busy := r.inflight[p.key]; busy {
		r.mu.Unlock()
		select {
		case <-f.done:
			return f.payment, f.code
		case <-ctx.Done():
			return gate.Payment{}, gate.CodeFacilitatorError
		}
	}
	f := &flight{done: make(chan struct{})}
	r.inflight[p.key] = f
	r.mu.Unlock()

	f.payment, f.code = r.settle(context.WithoutCancel(ctx), p, offer, req.Resource)

	r.mu.Lock()
	delete(r.inflight, p.key)
	r.mu.Unlock()
	close(f.done)
	return f.payment, f.code
}

// settle takes the payload's settlement record and does what it says: map
// a settled payload to its transaction, resume at /settle, or run /verify
// and /settle. A store that fails is answered like a facilitator that
// cannot be reached: nothing is accepted, the payer retries.
func (r *Rail) settle(ctx context.Context, p presented, offer gate.Offer, resource string) (gate.Payment, gate.Code) {
	op := store.Op(offer.Op)
	take, err := r.Store.TakeSettlement(ctx, op, p.hash, r.now(), r.lease())
	if err != nil {
		return gate.Payment{}, gate.CodeFacilitatorError
	}
	switch take.Outcome {
	case store.SettleDone:
		return r.settled(ctx, p, offer, take.Settlement)
	case store.SettleBusy:
		return gate.Payment{}, gate.CodePaymentInProgress
	case store.SettleFresh, store.SettleResume:
	default:
		return gate.Payment{}, gate.CodeFacilitatorError
	}
	finish := func(res store.SettlementResult) error {
		return r.Store.FinishSettlement(ctx, op, p.hash, take.LeaseToken, res)
	}
	failed := store.SettlementResult{State: store.SettlementFailed}

	body := Request{X402Version: p.version, PaymentPayload: p.raw,
		PaymentRequirements: requirements(p, r.Terms, offer, resource)}
	var verifiedPayer string
	if take.Outcome == store.SettleFresh {
		vctx, cancel := context.WithTimeout(ctx, cmp.Or(r.VerifyTimeout, DefaultVerifyTimeout))
		v, err := r.Client.Verify(vctx, body)
		cancel()
		switch {
		case err != nil:
			finish(failed)
			return gate.Payment{}, gate.CodeFacilitatorError
		case !*v.IsValid:
			finish(failed)
			return gate.Payment{}, classify(v.InvalidReason, gate.CodeVerifyRefused)
		}
		verifiedPayer = v.Payer
	}
	// From here on the facilitator may broadcast it: record that first, so
	// no later presentation, on any instance, verifies it again.
	if err := r.Store.MarkSettlementSent(ctx, op, p.hash, take.LeaseToken); err != nil {
		finish(failed)
		return gate.Payment{}, gate.CodeFacilitatorError
	}
	attempted := store.SettlementResult{State: store.SettlementAttempted}
	sctx, cancel := context.WithTimeout(ctx, cmp.Or(r.SettleTimeout, DefaultSettleTimeout))
	s, err := r.Client.Settle(sctx, body)
	cancel()
	switch {
	case err != nil:
		// The facilitator may have broadcast it: the same payload goes
		// straight to /settle next time.
		finish(attempted)
		return gate.Payment{}, gate.CodeFacilitatorError
	case !*s.Success && s.ErrorReason == reasonPending:
		finish(attempted)
		return gate.Payment{}, gate.CodeSettlementPending
	case !*s.Success:
		finish(failed)
		if c := classify(s.ErrorReason, gate.CodeSettleFailed); c == gate.CodePaymentAlreadyUsed {
			return gate.Payment{}, c
		}
		return gate.Payment{}, gate.CodeSettleFailed
	case !r.validTx(p, s.Transaction):
		// "Settled" without a transaction id of the payment's chain is
		// not a settlement we can record: fail closed.
		finish(failed)
		return gate.Payment{}, gate.CodeSettleFailed
	case s.Network != "" && !r.namesNetworkOf(p, s.Network):
		finish(failed)
		return gate.Payment{}, gate.CodeSettleFailed
	}
	st := store.Settlement{Op: op, Key: p.hash, State: store.SettlementSettled, Tx: s.Transaction,
		Payer: r.payerOf(p, s.Payer, verifiedPayer)}
	res := store.SettlementResult{State: store.SettlementSettled, Tx: st.Tx, Payer: st.Payer}
	if !r.onChain(p) {
		// A lost write here is harmless: the next presentation resumes at
		// /settle and the facilitator answers from its own record.
		finish(res)
		return r.payment(p, offer, st), ""
	}
	fee, code := r.lookup(ctx, p, st.Tx, offer.Price)
	if code == "" {
		res.Confirmed, res.FeeLamports = true, fee
		st.Confirmed, st.FeeLamports = true, fee
	}
	finish(res)
	if code != "" {
		return gate.Payment{}, code
	}
	return r.payment(p, offer, st), ""
}

// settled maps a payload the store records as settled to its payment. With
// a chain, a settlement the chain has not confirmed yet is looked up again.
func (r *Rail) settled(ctx context.Context, p presented, offer gate.Offer, st store.Settlement) (gate.Payment, gate.Code) {
	if r.onChain(p) && !st.Confirmed {
		fee, code := r.lookup(ctx, p, st.Tx, offer.Price)
		if code != "" {
			return gate.Payment{}, code
		}
		// Another presentation may have confirmed it meanwhile: the fee
		// is the transaction's either way.
		r.Store.ConfirmSettlement(ctx, st.Op, st.Key, st.Tx, fee)
		st.Confirmed, st.FeeLamports = true, fee
	}
	return r.payment(p, offer, st), ""
}

// payment is the gate's payment of a settled payload.
func (r *Rail) payment(p presented, offer gate.Offer, st store.Settlement) gate.Payment {
	pay := gate.Payment{
		Rail: gate.RailFacilitator, Network: p.network, Tx: st.Tx, Amount: offer.Price, X402Version: p.version,
		Payer: r.payerOf(p, st.Payer), FeeLamports: st.FeeLamports,
	}
	pay.SettleResponse, _ = json.Marshal(Receipt{Success: true, Transaction: st.Tx,
		Network: networkOf(p, r.Terms), Payer: pay.Payer})
	return pay
}

// chainCodes are the codes of a settled transaction the chain shows not
// paying us.
var chainCodes = map[string]gate.Code{
	solana.ReasonTxFailed:           gate.CodeTxRejected,
	solana.ReasonWrongMint:          gate.CodeWrongMint,
	solana.ReasonAmountInsufficient: gate.CodeAmountInsufficient,
}

// lookup confirms on chain that the settled transaction sig paid us and
// returns its fee. The facilitator's word is not enough when a node is at
// hand: a transaction the node does not show yet is CodeSettlementPending,
// a node that does not answer CodeChainUnavailable (both resume with the
// same payload), and one the chain shows not paying us is refused with the
// reason.
func (r *Rail) lookup(ctx context.Context, p presented, sig string, price uint64) (fee uint64, code gate.Code) {
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * cmp.Or(r.LookupDelay, DefaultLookupDelay))
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var seen bool
		if p.evm {
			seen, code = r.lookupEVM(lctx, sig, price)
		} else {
			seen, fee, code = r.lookupSolana(lctx, sig, price)
		}
		cancel()
		if seen {
			return fee, code
		}
	}
	return 0, gate.CodeSettlementPending
}

// lookupSolana is one look-up of a settled Solana transaction: it credited
// at least price USDC units to our token account (memo or not: a v1 client
// sends none). seen is false when the node does not show it yet.
func (r *Rail) lookupSolana(ctx context.Context, sig string, price uint64) (seen bool, fee uint64, code gate.Code) {
	tx, err := r.Chain.GetTransaction(ctx, sig)
	switch {
	case errors.Is(err, solana.ErrNotFound), err == nil && tx == nil:
		return false, 0, ""
	case err != nil:
		return true, 0, gate.CodeChainUnavailable
	}
	p, err := solana.VerifyCredit(tx, solana.Credit{TokenAccount: r.Terms.TokenAccount, Mint: r.Terms.Network.Mint, MinAmount: price})
	if err != nil {
		var ref *solana.Refusal
		if errors.As(err, &ref) {
			if c, ok := chainCodes[ref.Reason]; ok {
				return true, 0, c
			}
		}
		return true, 0, gate.CodeTxMalformed
	}
	if p.Signature != sig {
		return true, 0, gate.CodeTxMalformed
	}
	return true, p.FeeLamports, ""
}

// evmCodes are the codes of a settled EVM transaction whose receipt shows
// it not paying us.
var evmCodes = map[string]gate.Code{
	chain.ReasonTxReverted:         gate.CodeTxRejected,
	chain.ReasonWrongToken:         gate.CodeWrongMint,
	chain.ReasonAmountInsufficient: gate.CodeAmountInsufficient,
	chain.ReasonReceiptMalformed:   gate.CodeTxMalformed,
}

// lookupEVM is one look-up of a settled EVM transaction's receipt: it
// succeeded and emitted USDC Transfer logs to our address of at least
// price (an EVM settlement has no Solana fee). seen is false when the node
// has no receipt yet (not mined).
func (r *Rail) lookupEVM(ctx context.Context, hash string, price uint64) (seen bool, code gate.Code) {
	rc, err := r.EVMChain.TransactionReceipt(ctx, hash)
	switch {
	case errors.Is(err, chain.ErrReceiptNotFound):
		return false, ""
	case err != nil:
		return true, gate.CodeChainUnavailable
	}
	credit := chain.TransferCredit{Hash: hash, Token: r.Terms.EVM.Network.USDC, To: r.Terms.EVM.PayTo, Min: price}
	if reason := chain.VerifyTransfer(rc, credit); reason != "" {
		return true, cmp.Or(evmCodes[reason], gate.CodeTxMalformed)
	}
	return true, ""
}

// namesNetworkOf reports whether network (a settle answer's, in either
// version's naming) is the network p pays on.
func (r *Rail) namesNetworkOf(p presented, network string) bool {
	if p.evm {
		return network == r.Terms.EVM.Network.CAIP2 || network == r.Terms.EVM.Network.Name
	}
	return network == r.Terms.Network.CAIP2 || network == r.Terms.Network.Name
}

// onChain reports whether a node is at hand to confirm p's settlement.
func (r *Rail) onChain(p presented) bool {
	if p.evm {
		return r.EVMChain != nil
	}
	return r.Chain != nil
}

// validTx reports whether tx has the form of a transaction id of p's chain.
func (r *Rail) validTx(p presented, tx string) bool {
	if p.evm {
		return store.IsEVMTxHash(tx)
	}
	return solana.ValidSignature(tx)
}

// payerOf is the first of vs that is an address of p's chain (EVM ones in
// their EIP-55 form, so the ledger's house flag matches however the
// facilitator cased it), then the payload's own payer, or "unknown".
func (r *Rail) payerOf(p presented, vs ...string) string {
	if !p.evm {
		return firstAddress(append(vs, p.tx.tokenAuthority())...)
	}
	for _, v := range append(vs, p.auth.From) {
		if gate.ValidEVMAddress(v) {
			return lint.EIP55(v)
		}
	}
	return "unknown"
}

// remembered reports whether the payload is being settled here, or the
// store records it as sent to /settle or settled.
func (r *Rail) remembered(offer gate.Offer, p presented) bool {
	r.mu.Lock()
	_, ok := r.inflight[p.key]
	r.mu.Unlock()
	if ok || r.Store == nil {
		return ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, ok, err := r.Store.Settlement(ctx, store.Op(offer.Op), p.hash)
	return err == nil && ok && (st.State == store.SettlementAttempted || st.State == store.SettlementSettled)
}

// firstAddress is the first of vs that is a Solana address, or "unknown":
// the payer goes into the ledger and the receipt, so a facilitator's free
// text never does.
func firstAddress(vs ...string) string {
	for _, v := range vs {
		if solana.ValidAddress(v) {
			return v
		}
	}
	return "unknown"
}

func (r *Rail) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// lease is how long one presentation holds a payload's settlement record:
// past the slowest /verify, /settle and chain lookups.
func (r *Rail) lease() time.Duration {
	return cmp.Or(r.VerifyTimeout, DefaultVerifyTimeout) + cmp.Or(r.SettleTimeout, DefaultSettleTimeout) + leaseSlack
}
