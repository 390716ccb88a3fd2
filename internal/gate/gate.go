package gate

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
)

// Payment header names. Any of them present means a payment is presented.
const (
	HeaderPaymentTx        = "X-Payment-Tx"
	HeaderPaymentMemo      = "X-Payment-Memo"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE" // x402 v2 facilitator payload
	HeaderXPayment         = "X-PAYMENT"         // x402 v1 facilitator payload
)

// Rails, as recorded with a payment.
const (
	RailDirect      = "direct"
	RailFacilitator = "facilitator"
)

// Payment is a payment a rail confirmed.
type Payment struct {
	Rail string
	// Network is the CAIP-2 id of the chain Tx is on: our Solana cluster,
	// or the Base network of the EVM entry.
	Network     string
	Tx          string
	Payer       string
	Amount      uint64
	FeeLamports uint64
	// SettleResponse is the x402 settle response a facilitator-rail payment
	// is answered with (JSON), and X402Version the version of the payload:
	// 2 renders it as PAYMENT-RESPONSE, 1 as X-PAYMENT-RESPONSE. Empty on
	// the direct rail.
	SettleResponse []byte
	X402Version    int
}

// DirectRail confirms a direct-rail payment on chain: the transaction sig
// succeeded, credited at least price USDC units to our token account, and
// carries exactly one top-level SPL Memo equal to memo. A refusal is a Code;
// CodePaymentNotFound and CodeChainUnavailable mean "retry later".
type DirectRail interface {
	Confirm(ctx context.Context, sig, memo string, price uint64) (Payment, Code)
}

// FacilitatorRail settles an x402 facilitator payment (PAYMENT-SIGNATURE or
// X-PAYMENT) against our own requirements for the route.
type FacilitatorRail interface {
	// Match checks the form of the payment and its terms against ours: free,
	// no facilitator call, so it runs before the URL policy like the direct
	// rail's form checks.
	Match(req Request, offer Offer) Code
	Settle(ctx context.Context, req Request, offer Offer) (Payment, Code)
}

// Gate decides what a request to a paid route gets.
type Gate struct {
	Terms        Terms
	Offers       map[string]Offer // by op
	Memos        Memos
	Direct       DirectRail      // nil: the direct rail is not offered
	Facilitator  FacilitatorRail // nil: the facilitator rail is not offered
	Store        store.Store
	Now          func() time.Time
	LeaseFor     time.Duration // how long a claim holds a payment (longer than the slowest op)
	ResumeWindow time.Duration // how long after verification a resume is allowed
	RetryAfter   time.Duration // advised delay for payment_not_found and friends
}

// Defaults of a Gate's durations.
const (
	DefaultLeaseFor     = 90 * time.Second // the probe's seven fetches take at most 35 s
	DefaultResumeWindow = 15 * time.Minute
	DefaultRetryAfter   = 5 * time.Second
)

// Request is what the gate sees of one request to a paid route.
type Request struct {
	Op string
	// Resource is our own URL as the client called it (the challenge's resource).
	Resource string
	// TargetURL is the URL the request body names, "" when it names none.
	TargetURL string
	// URLErr is the URL-policy refusal of TargetURL (or of a missing one).
	URLErr error
	// Header reads a request header.
	Header http.Header
}

// Kind is the kind of a gate decision.
type Kind int

const (
	// NeedPayment: no payment presented; answer 402 with the challenge.
	NeedPayment Kind = iota
	// Refused: a presented payment was evaluated and refused; answer 402
	// with the code, its sentence and the challenge (RetryAfter may be set).
	Refused
	// BadURL: the request names no URL or one the policy refuses; a free 400.
	BadURL
	// Busy: another request holds this payment; answer 409 with RetryAfter.
	Busy
	// Paid: the payment is verified and claimed; run the op with Ticket.
	Paid
)

// Decision is what the gate decided; the HTTP handler only renders it.
type Decision struct {
	Kind       Kind
	Code       Code
	RetryAfter time.Duration
	Challenge  Challenge
	Ticket     Ticket
}

// Ticket is a verified, claimed payment: the op runs under its lease.
type Ticket struct {
	PaymentID  string
	LeaseToken string
	Payment    Payment
	Resumed    bool
}

// PaymentPresented reports whether any payment header is present.
func PaymentPresented(h http.Header) bool {
	for _, k := range []string{HeaderPaymentTx, HeaderPaymentMemo, HeaderPaymentSignature, HeaderXPayment} {
		if h.Get(k) != "" || len(h.Values(k)) > 0 {
			return true
		}
	}
	return false
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// NewChallenge issues a fresh challenge for op, bound to targetURL when it is
// not empty. It writes nothing anywhere.
func (g *Gate) NewChallenge(op, resource, targetURL string) (Challenge, error) {
	memo, err := g.Memos.Issue(op, targetURL)
	if err != nil {
		return Challenge{}, err
	}
	return g.Terms.Challenge(g.Offers[op], resource, memo), nil
}

// Admit decides a request to a paid route. The order is the paid-service
// issue's: the form of the payment (free, no chain lookup), then the URL
// policy (free: the payment is not consumed), then the rail, then the claim.
func (g *Gate) Admit(ctx context.Context, r Request) (Decision, error) {
	offer, ok := g.Offers[r.Op]
	if !ok {
		return Decision{}, errors.New("gate: no offer for this op")
	}
	challenge, err := g.NewChallenge(r.Op, r.Resource, r.TargetURL)
	if err != nil {
		return Decision{}, err
	}
	refuse := func(c Code) Decision {
		d := Decision{Kind: Refused, Code: c, Challenge: challenge}
		if c == CodePaymentNotFound || c == CodeChainUnavailable || c == CodeSettlementPending {
			d.RetryAfter = cmp.Or(g.RetryAfter, DefaultRetryAfter)
		}
		return d
	}
	if !PaymentPresented(r.Header) {
		if r.URLErr != nil {
			return Decision{Kind: BadURL, Challenge: challenge}, nil
		}
		return Decision{Kind: NeedPayment, Challenge: challenge}, nil
	}

	var pay Payment
	var memo string
	var expired bool
	tx := r.Header.Get(HeaderPaymentTx)
	switch {
	case tx != "" || r.Header.Get(HeaderPaymentMemo) != "":
		if g.Direct == nil {
			return refuse(CodeRailUnavailable), nil
		}
		memo = r.Header.Get(HeaderPaymentMemo)
		switch {
		case !solana.ValidSignature(tx):
			return refuse(CodePaymentMalformed), nil
		case memo == "":
			return refuse(CodeMemoMissing), nil
		}
		// An expired memo may still resume a payment verified while it was
		// valid (the resume window runs from the verification, not from the
		// challenge), but never records a new one: the claim below is then
		// resume-only.
		_, code := g.Memos.Verify(memo, r.Op, r.TargetURL)
		expired = code == CodeMemoExpired
		if code != "" && !expired {
			return refuse(code), nil
		}
		if r.URLErr != nil {
			return Decision{Kind: BadURL, Challenge: challenge}, nil
		}
		if pay, code = g.Direct.Confirm(ctx, tx, memo, offer.Price); code != "" {
			if expired && code != CodeChainUnavailable {
				return refuse(CodeMemoExpired), nil
			}
			return refuse(code), nil
		}
	default:
		if g.Facilitator == nil {
			return refuse(CodeRailUnavailable), nil
		}
		if code := g.Facilitator.Match(r, offer); code != "" {
			return refuse(code), nil
		}
		if r.URLErr != nil {
			return Decision{Kind: BadURL, Challenge: challenge}, nil
		}
		var code Code
		if pay, code = g.Facilitator.Settle(ctx, r, offer); code != "" {
			if code == CodePaymentInProgress {
				// Another presentation, maybe on another instance, holds
				// the payload's settlement.
				return Decision{Kind: Busy, Code: code, RetryAfter: cmp.Or(g.RetryAfter, DefaultRetryAfter)}, nil
			}
			return refuse(code), nil
		}
		// The facilitator rail is bound by the settled transaction itself.
		memo = "facilitator:" + pay.Tx
	}

	if pay.Network == "" {
		// The direct rail pays on our Solana cluster only.
		pay.Network = g.Terms.Network.CAIP2
	}
	res, err := g.Store.Claim(ctx, store.Claim{
		Rail: pay.Rail, Tx: pay.Tx, MemoDigest: g.Memos.Digest(memo), Op: store.Op(r.Op),
		Payer: pay.Payer, Amount: pay.Amount, FeeLamports: pay.FeeLamports, Now: g.now(),
		LeaseFor: cmp.Or(g.LeaseFor, DefaultLeaseFor), ResumeWindow: cmp.Or(g.ResumeWindow, DefaultResumeWindow), ResumeOnly: expired,
	})
	if err != nil {
		return Decision{}, err
	}
	switch res.Outcome {
	case store.Claimed, store.Resumed:
		return Decision{Kind: Paid, Ticket: Ticket{
			PaymentID: res.PaymentID, LeaseToken: res.LeaseToken, Payment: pay, Resumed: res.Outcome == store.Resumed,
		}}, nil
	case store.Busy:
		return Decision{Kind: Busy, Code: CodePaymentInProgress, RetryAfter: res.RetryAfter}, nil
	case store.NotSeen:
		return refuse(CodeMemoExpired), nil
	default:
		return refuse(CodePaymentAlreadyUsed), nil
	}
}
