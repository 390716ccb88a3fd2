package facilitator

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/solana"
)

// Chain looks a settled transaction up, for its fee in lamports and its
// on-chain outcome. *solana.Client is one.
type Chain interface {
	GetTransaction(ctx context.Context, sig string) (*solana.Tx, error)
}

// Rail is the facilitator rail of the gate (gate.FacilitatorRail).
//
// One payload settles once. The transaction id is known only after the
// facilitator settled (its fee payer signs last), so the store's UNIQUE
// claim cannot guard the settlement itself. The rail does, per process:
// concurrent presentations of one payload share one verify+settle (keyed by
// the route's op and the SHA-256 of the decoded payload: a payload verified
// against one route's requirements is never taken as verified for another),
// and what settled is remembered for
// Keep, so a later presentation of the same payload gets the same Payment
// without another facilitator call; the gate's Claim on the transaction id
// then decides (one delivery, the one resume, "already used"). A settlement
// the facilitator reports pending (or whose answer was lost) is remembered
// as attempted: the same payload presented again goes straight to /settle,
// which a facilitator answers from its own record of the broadcast
// transaction. Across processes (several instances on one database), the
// facilitator's own duplicate-settlement refusal and the UNIQUE claim keep
// one payment paying once.
type Rail struct {
	Client *Client
	// Terms are ours, with the facilitator's fee payer (Discover).
	Terms gate.Terms
	// Memos verifies a memo a v2 client echoes in accepted.extra.
	Memos gate.Memos
	// Versions are the x402 versions the facilitator settles exact on our
	// network in (Discover); a payload of another version is refused.
	Versions map[int]bool
	// Chain, when set (--solana-rpc), gives the fee of a settled
	// transaction in lamports and refuses one the chain shows failed.
	Chain Chain
	Now   func() time.Time
	// Keep is how long a settled or attempted payload is remembered
	// (default DefaultKeep).
	Keep time.Duration
	// VerifyTimeout and SettleTimeout bound the facilitator calls; they run
	// to the end even when the paying client hangs up, so an answer about
	// money moved is never lost to a closed connection.
	VerifyTimeout, SettleTimeout time.Duration

	mu       sync.Mutex
	inflight map[string]*flight
	known    map[string]record
}

// Defaults of a Rail.
const (
	DefaultKeep          = 30 * time.Minute // past the store's 15-minute resume window
	DefaultVerifyTimeout = 15 * time.Second
	DefaultSettleTimeout = 60 * time.Second
	// maxKnown bounds the remembered payloads; each one is a real
	// settlement (or a facilitator's "pending"), so reaching it takes money.
	maxKnown = 100_000
)

type recordState int

const (
	attempted recordState = iota + 1 // pending, or the settle answer was lost
	settled
)

type record struct {
	state   recordState
	payment gate.Payment
	until   time.Time
}

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
	if !r.Versions[p.version] {
		return presented{}, gate.CodeRailUnavailable
	}
	if p.memo != "" {
		// Any memo we issued for this op (and URL, when bound) that is still
		// valid, not only the latest one. A payload already settled or being
		// settled may outlive its memo: its resume is the store's to decide.
		_, mc := r.Memos.Verify(p.memo, req.Op, req.TargetURL)
		if mc == gate.CodeMemoExpired && r.remembered(p.key) {
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
	r.mu.Lock()
	if r.inflight == nil {
		r.inflight, r.known = map[string]*flight{}, map[string]record{}
	}
	rec, ok := r.known[p.key]
	if ok && !r.now().Before(rec.until) {
		delete(r.known, p.key)
		ok = false
	}
	if ok && rec.state == settled {
		r.mu.Unlock()
		return rec.payment, ""
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

	var state recordState
	f.payment, f.code, state = r.settle(context.WithoutCancel(ctx), p, offer, req.Resource, ok)

	r.mu.Lock()
	delete(r.inflight, p.key)
	if state != 0 {
		r.remember(p.key, record{state: state, payment: f.payment, until: r.now().Add(r.keep())})
	} else {
		delete(r.known, p.key)
	}
	r.mu.Unlock()
	close(f.done)
	return f.payment, f.code
}

// settle runs /verify (unless the payload was already sent to /settle) and
// /settle, and checks the answer. It returns what to remember of the
// payload: settled, attempted, or nothing (0).
func (r *Rail) settle(ctx context.Context, p presented, offer gate.Offer, resource string, resumed bool) (gate.Payment, gate.Code, recordState) {
	body := Request{X402Version: p.version, PaymentPayload: p.raw,
		PaymentRequirements: requirements(p.version, r.Terms, offer, resource, p.memo)}
	var verifiedPayer string
	if !resumed {
		vctx, cancel := context.WithTimeout(ctx, r.verifyTimeout())
		v, err := r.Client.Verify(vctx, body)
		cancel()
		switch {
		case err != nil:
			return gate.Payment{}, gate.CodeFacilitatorError, 0
		case !*v.IsValid:
			return gate.Payment{}, classify(v.InvalidReason, gate.CodeVerifyRefused), 0
		}
		verifiedPayer = v.Payer
	}
	sctx, cancel := context.WithTimeout(ctx, r.settleTimeout())
	s, err := r.Client.Settle(sctx, body)
	cancel()
	switch {
	case err != nil:
		// The facilitator may have broadcast it: the same payload goes
		// straight to /settle next time.
		return gate.Payment{}, gate.CodeFacilitatorError, attempted
	case !*s.Success && s.ErrorReason == reasonPending:
		return gate.Payment{}, gate.CodeSettlementPending, attempted
	case !*s.Success:
		if c := classify(s.ErrorReason, gate.CodeSettleFailed); c == gate.CodePaymentAlreadyUsed {
			return gate.Payment{}, c, 0
		}
		return gate.Payment{}, gate.CodeSettleFailed, 0
	case !solana.ValidSignature(s.Transaction):
		// "Settled" without a transaction id is not a settlement we can
		// record: fail closed.
		return gate.Payment{}, gate.CodeSettleFailed, 0
	case s.Network != "" && s.Network != r.Terms.Network.CAIP2 && s.Network != r.Terms.Network.Name:
		return gate.Payment{}, gate.CodeSettleFailed, 0
	}
	pay := gate.Payment{
		Rail: gate.RailFacilitator, Tx: s.Transaction, Amount: offer.Price, X402Version: p.version,
		Payer: firstAddress(s.Payer, verifiedPayer, p.tx.tokenAuthority()),
	}
	if r.Chain != nil {
		fee, failed := r.lookup(ctx, s.Transaction)
		if failed {
			return gate.Payment{}, gate.CodeTxRejected, 0
		}
		pay.FeeLamports = fee
	}
	pay.SettleResponse, _ = json.Marshal(Receipt{Success: true, Transaction: s.Transaction,
		Network: networkOf(p.version, r.Terms.Network), Payer: pay.Payer})
	return pay, "", settled
}

// lookup reads the settled transaction's fee; failed is true when the chain
// shows the transaction failed. A transaction the node does not show yet
// (or a node that does not answer) leaves the fee at 0: the facilitator
// settled it, and a bookkeeping field never withholds a paid report.
func (r *Rail) lookup(ctx context.Context, sig string) (fee uint64, failed bool) {
	for attempt := range 3 {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		tx, err := r.Chain.GetTransaction(lctx, sig)
		cancel()
		switch {
		case err == nil && tx.Meta != nil:
			return tx.Meta.Fee, len(tx.Meta.Err) > 0 && string(tx.Meta.Err) != "null"
		case err == nil, errors.Is(err, solana.ErrNotFound):
			time.Sleep(time.Duration(attempt+1) * 300 * time.Millisecond)
		default:
			return 0, false
		}
	}
	return 0, false
}

// remembered reports whether the payload is settled or being settled.
func (r *Rail) remembered(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.inflight[key]; ok {
		return true
	}
	rec, ok := r.known[key]
	return ok && r.now().Before(rec.until)
}

// remember records a payload's outcome; r.mu is held.
func (r *Rail) remember(key string, rec record) {
	if len(r.known) >= maxKnown {
		now := r.now()
		for k, v := range r.known {
			if !now.Before(v.until) {
				delete(r.known, k)
			}
		}
		for k := range r.known {
			if len(r.known) < maxKnown {
				break
			}
			delete(r.known, k)
		}
	}
	r.known[key] = rec
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

func (r *Rail) keep() time.Duration {
	if r.Keep > 0 {
		return r.Keep
	}
	return DefaultKeep
}

func (r *Rail) verifyTimeout() time.Duration {
	if r.VerifyTimeout > 0 {
		return r.VerifyTimeout
	}
	return DefaultVerifyTimeout
}

func (r *Rail) settleTimeout() time.Duration {
	if r.SettleTimeout > 0 {
		return r.SettleTimeout
	}
	return DefaultSettleTimeout
}
