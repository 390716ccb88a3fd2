// Package store is the one storage contract of the paid service: the free-tier
// counters, the payments seen-set with its resume lease, and the ledger. It
// holds the interface and its types only; the adapters live in store/sqlite
// (the embedded default) and store/postgres (several instances), and
// store/storetest is the conformance suite both of them run.
//
// Every guarantee here is a database guarantee (UNIQUE constraints, one
// conditional upsert, compare-and-set updates), never an in-process lock, so
// it holds across processes and instances sharing one database.
package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Store is the storage of one paid-service deployment.
type Store interface {
	// TakeFree takes one free pre-check for key (a caller wallet or a client
	// address, scoped by the caller to its service and op) in ONE atomic
	// conditional upsert: at most perDay allowed calls per UTC day (the day
	// of now) and at least minInterval between allowed calls. A refused call
	// changes nothing. A backend opened with a database clock ignores now.
	// Every allowed call also counts, in the same statement, toward the
	// daily free-use tally of the key's scope: the part of key before its
	// first "|" (see Tallies.Free).
	TakeFree(ctx context.Context, key string, now time.Time, perDay int, minInterval time.Duration) (FreeDecision, error)

	// TakeFreeFrom is TakeFree with a ceiling per source on top: when
	// t.Source is set, the call is allowed only when both the key's limits
	// and the source's daily ceiling (t.SourcePerDay allowed calls per UTC
	// day, all keys of that source together) allow it, in one transaction:
	// a call either counts toward both or changes nothing. A refusal by the
	// ceiling is FreeSourceLimit.
	TakeFreeFrom(ctx context.Context, t FreeTake) (FreeDecision, error)

	// Prune deletes what is past its use (see Retention): free-tier rows two
	// days after their last allowed call, and facilitator settlement
	// records two days after they were created, unless held. It never
	// touches the ledger, refunds, rates, the daily tallies or the payments
	// seen-set. A backend with a database clock ignores now.
	Prune(ctx context.Context, now time.Time) (Pruned, error)

	// Sizes counts the rows of the tables that grow with traffic.
	Sizes(ctx context.Context) (Sizes, error)

	// Claim records a verified payment before its op runs, or takes it back
	// for the one resume it allows; see ClaimOutcome for the outcomes.
	Claim(ctx context.Context, c Claim) (ClaimResult, error)

	// Deliver marks the payment delivered and writes its ledger entry in one
	// transaction. It fails with ErrLeaseLost, writing nothing, when the
	// caller no longer holds the lease (released, or taken over by a resume
	// after it expired) or the payment is already delivered; a lease that
	// ran out but was not taken over still delivers, as the token, not the
	// clock, is the lease's identity. The entry is
	// stored under the payment's id; e.ID is ignored. e.PaymentTx and the
	// entry's op must be those of the claimed payment (else ErrInvalidEntry).
	// An entry is born unrefunded: e.CAD.Refund must be empty.
	Deliver(ctx context.Context, paymentID, leaseToken string, e Entry) error

	// Reopen takes back a delivery whose report could not be written (the
	// buyer hung up before or during the answer): compare-and-set on the
	// lease token of the delivery, it makes the payment undelivered again
	// with its lease free, so the same payment presented again resumes, at
	// no charge, through Claim's one resume. The ledger entry stays as it
	// is: the resumed delivery writes no second one. It reports false,
	// changing nothing, when the payment is not delivered under that token
	// or its one resume is used already (the report that could not be
	// written was the resumed one).
	Reopen(ctx context.Context, paymentID, leaseToken string) (bool, error)

	// Release gives the lease back after a failure on our side, so the payer
	// can resume at once instead of waiting for the lease to expire. It fails
	// with ErrLeaseLost when the caller no longer holds the lease.
	Release(ctx context.Context, paymentID, leaseToken string) error

	// Entries returns the ledger entries of op whose timestamp is in
	// [from, to), oldest first. An entry's CAD.Refund is the id of the
	// refund recorded against it, if any (see AddRefund).
	Entries(ctx context.Context, op Op, from, to time.Time) ([]Entry, error)

	// PendingEntries returns op's entries still waiting for their CAD rate
	// (cad_pending), oldest first.
	PendingEntries(ctx context.Context, op Op) ([]Entry, error)

	// FillCAD gives one pending entry its rate and rate date, compare-and-set
	// on cad_pending: it reports false, changing nothing, when the entry is
	// filled already or does not exist. A filled entry is never rewritten.
	FillCAD(ctx context.Context, op Op, id, rate, rateDate string) (bool, error)

	// PutRates caches published daily rates (CAD per USD). A date cached
	// before keeps its first value: cached rates are never rewritten. It
	// returns how many dates were new.
	PutRates(ctx context.Context, rates []Rate, fetchedAt time.Time) (int, error)

	// Rates returns the cached rates dated from..to (YYYY-MM-DD, both
	// included), oldest first.
	Rates(ctx context.Context, from, to string) ([]Rate, error)

	// AddRefund records a refund against the entry (r.Op, r.EntryID) as an
	// append-only record of its own, linked to the entry, which stays as it
	// was. r.ID is assigned. It fails with ErrNoEntry when op's ledger has
	// no such entry and ErrAlreadyRefunded when the entry has a refund.
	AddRefund(ctx context.Context, r Refund) (Refund, error)

	// Refunds returns the refunds recorded in [from, to), oldest first.
	Refunds(ctx context.Context, from, to time.Time) ([]Refund, error)

	// Tallies returns the day-by-day counts the tripwires are computed
	// from: outside sales, their refunds, and allowed free calls.
	Tallies(ctx context.Context) (Tallies, error)

	// TakeSettlement takes the facilitator-rail settlement of one payload
	// (op, key: the SHA-256 of the decoded payload, 64 lowercase hex
	// digits; the payload itself is never stored) for one presentation, in
	// one conditional upsert, so across instances sharing the database
	// exactly one presentation at a time holds it (see SettlementOutcome).
	// The lease runs leaseFor from now; a holder that died is taken over
	// when its lease ends.
	TakeSettlement(ctx context.Context, op Op, key string, now time.Time, leaseFor time.Duration) (SettlementTake, error)

	// MarkSettlementSent records, compare-and-set on the lease token, that
	// the holder is about to send the payload to /settle: from then on a
	// presentation (after the lease is freed or has ended) resumes at
	// /settle and never verifies again. ErrLeaseLost when not held.
	MarkSettlementSent(ctx context.Context, op Op, key, leaseToken string) error

	// FinishSettlement frees the lease and records what the holder learnt,
	// compare-and-set on the lease token (ErrLeaseLost when not held):
	// SettlementSettled (with its Tx and Payer), SettlementAttempted (sent
	// to /settle, answer pending or lost: the next presentation resumes at
	// /settle) or SettlementFailed (refused before or at settlement: the
	// next presentation starts over at /verify).
	FinishSettlement(ctx context.Context, op Op, key, leaseToken string, o SettlementResult) error

	// ConfirmSettlement records that the chain shows a settled payload's
	// transaction credited the price, with its fee: compare-and-set on a
	// settled, unconfirmed record of tx. It reports false, changing
	// nothing, otherwise.
	ConfirmSettlement(ctx context.Context, op Op, key, tx string, feeLamports uint64) (bool, error)

	// Settlement reads the record of one payload; ok is false when there is
	// none.
	Settlement(ctx context.Context, op Op, key string) (s Settlement, ok bool, err error)

	Close() error
}

// SettlementState is the state of a facilitator-rail settlement record. The
// values are a closed set.
type SettlementState string

const (
	// SettlementVerifying: a presentation holds the record and has not sent
	// the payload to /settle (it may be at /verify).
	SettlementVerifying SettlementState = "verifying"
	// SettlementAttempted: the payload was sent to /settle and the answer
	// was "pending" or was lost; the facilitator may have broadcast it.
	SettlementAttempted SettlementState = "attempted"
	// SettlementSettled: the facilitator settled it as Tx. Settled is
	// final: the record never changes again but for its confirmation.
	SettlementSettled SettlementState = "settled"
	// SettlementFailed: refused at /verify or /settle (or the facilitator
	// failed before /settle); a new presentation starts over.
	SettlementFailed SettlementState = "failed"
)

// Settlement is the durable record of one facilitator-rail payload: its
// hash, never the payload.
type Settlement struct {
	Op    Op
	Key   string // SHA-256 of the decoded payload, 64 lowercase hex digits
	State SettlementState
	// Tx and Payer are set when Settled.
	Tx, Payer string
	// Confirmed: the chain showed Tx credited the price (--solana-rpc);
	// FeeLamports is then the transaction's fee.
	Confirmed   bool
	FeeLamports uint64
}

// SettlementOutcome is what TakeSettlement decided; a closed set.
type SettlementOutcome string

const (
	// SettleFresh: the caller holds the record and starts at /verify (a
	// new payload, a failed one presented again, or a holder that died
	// before /settle).
	SettleFresh SettlementOutcome = "fresh"
	// SettleResume: the caller holds the record and goes straight to
	// /settle (the payload was sent there before).
	SettleResume SettlementOutcome = "resume"
	// SettleBusy: another presentation holds the record.
	SettleBusy SettlementOutcome = "busy"
	// SettleDone: the payload is settled; Settlement says as what.
	SettleDone SettlementOutcome = "done"
)

// SettlementTake is the answer of TakeSettlement.
type SettlementTake struct {
	Outcome SettlementOutcome
	// LeaseToken is set when the caller holds the record (Fresh, Resume).
	LeaseToken string
	// Settlement is set when Done.
	Settlement Settlement
	// RetryAfter is set when Busy: how long the holder's lease still runs.
	RetryAfter time.Duration
}

// SettlementResult is what a holder records with FinishSettlement.
type SettlementResult struct {
	State       SettlementState // Settled, Attempted or Failed
	Tx, Payer   string          // with Settled
	Confirmed   bool            // with Settled: see Settlement
	FeeLamports uint64          // with Confirmed
}

// Validate checks the form of a settlement result.
func (r SettlementResult) Validate() error {
	switch r.State {
	case SettlementSettled:
		if !IsTxID(r.Tx) || r.Payer == "" || len(r.Payer) > 64 || (!r.Confirmed && r.FeeLamports != 0) {
			return ErrInvalidSettlement
		}
	case SettlementAttempted, SettlementFailed:
		if r.Tx != "" || r.Payer != "" || r.Confirmed || r.FeeLamports != 0 {
			return ErrInvalidSettlement
		}
	default:
		return ErrInvalidSettlement
	}
	return nil
}

// Retention of the rows the prune job deletes (Prune). Both outlast every
// window that reads them: the free tier reads a key's row of the current
// UTC day and its last call (5 s ago at most); a settlement record serves
// presentations of its payload within its memo's 15 minutes and the
// 15-minute resume window.
const (
	FreeRetention       = 48 * time.Hour
	SettlementRetention = 48 * time.Hour
)

// Pruned counts the rows one Prune deleted.
type Pruned struct {
	Free        int64 // free_use rows (per caller key)
	FreeSources int64 // free_source rows (per client address)
	Settlements int64
}

// Sizes are row counts of the tables that grow with traffic.
type Sizes struct {
	Free, FreeSources, Settlements, Payments int64
}

// FreeTake is one free call to take (TakeFreeFrom).
type FreeTake struct {
	Key         string // as TakeFree's key
	Now         time.Time
	PerDay      int
	MinInterval time.Duration
	// Source is the client address the call comes from (scoped like Key);
	// "" means no ceiling per source.
	Source       string
	SourcePerDay int
}

// Rate is one published daily rate of the CAD valuation source.
type Rate struct {
	Date  string // YYYY-MM-DD
	Value string // CAD per USD, an exact decimal
}

// Refund is a refund recorded against a ledger entry: its own append-only
// record, never an edit of the entry. It carries no URL, memo or challenge
// value: only the link to the entry and the refund transaction.
type Refund struct {
	ID      string // assigned by AddRefund
	Op      Op     // the entry's op (each op has its own ledger)
	EntryID string // the entry's id (its payment's id)
	// Tx is the refund transaction: a base58 Solana signature or an EVM
	// transaction hash (see IsTxID).
	Tx   string
	Time time.Time // when the refund was recorded; stored like Entry.Timestamp
}

// Validate checks the form of a refund.
func (r Refund) Validate() error {
	if !r.Op.Valid() || r.EntryID == "" || !IsTxID(r.Tx) || r.Time.IsZero() {
		return ErrInvalidRefund
	}
	return nil
}

// DayCount is a count of one UTC day.
type DayCount struct {
	Day   string // YYYY-MM-DD
	Count int64
}

// Tallies are the day-by-day counts the tripwires are computed from. Each
// list is oldest first and holds only days with a count.
type Tallies struct {
	// Sales counts each op's outside (non-house) entries by the UTC day of
	// the entry: house entries are the operator's proofs, never sales.
	Sales map[Op][]DayCount
	// Refunds counts the refunds of each op's outside entries by the UTC
	// day of the refund.
	Refunds map[Op][]DayCount
	// Free counts allowed free calls by scope (the part of the TakeFree key
	// before its first "|", the service) and UTC day.
	Free map[string][]DayCount
	// FirstSale is the timestamp of each op's first outside entry, absent
	// while the op has none.
	FirstSale map[Op]time.Time
}

// Op names a paid op. Each op has its own ledger, as the criteria keep the
// memo op's entries apart from the check op's.
type Op string

// The paid ops of the three services.
const (
	OpCheck     Op = "check"     // payability-verdict, POST /check
	OpMemo      Op = "memo"      // payability-verdict, POST /memo
	OpProbe     Op = "probe"     // rail-probe, POST /probe
	OpPreflight Op = "preflight" // x402-preflight, POST /preflight
	OpLint      Op = "lint"      // x402-preflight, POST /lint
)

// Ops lists every paid op, in a fixed order.
var Ops = []Op{OpCheck, OpMemo, OpProbe, OpPreflight, OpLint}

// Valid reports whether op is one of Ops.
func (op Op) Valid() bool {
	return slices.Contains(Ops, op)
}

// FreeReason says which free-tier limit refused a call.
type FreeReason string

// The free-tier refusal reasons (a closed set, usable as a metrics label).
const (
	FreeDailyLimit  FreeReason = "daily_limit"
	FreeMinInterval FreeReason = "min_interval"
	// FreeSourceLimit: the source's daily ceiling (TakeFreeFrom) is spent.
	FreeSourceLimit FreeReason = "source_limit"
)

// FreeDecision is the answer of TakeFree.
type FreeDecision struct {
	Allowed bool
	// Reason is empty when Allowed; otherwise the limit that refused the
	// call. The key's daily limit wins over its minimum interval, and both
	// over the source's ceiling.
	Reason FreeReason
	// UsedToday counts the allowed calls of the key on the UTC day of the
	// call, this one included when Allowed.
	UsedToday int
	// RetryAfter is zero when Allowed; otherwise how long until the refusing
	// limit lifts (the next UTC midnight for the daily limit).
	RetryAfter time.Duration
}

// Claim is a verified payment presented for an op.
type Claim struct {
	Rail string // the payment rail ("direct", "facilitator")
	Tx   string // the payment transaction signature; UNIQUE
	// MemoDigest is a keyed digest of the memo the payment carried: 64
	// lowercase hex digits, UNIQUE. A memo value is never stored, so Claim
	// refuses anything else (ErrInvalidClaim).
	MemoDigest  string
	Op          Op
	Payer       string // the paying wallet
	Amount      uint64 // USDC units received
	FeeLamports uint64 // the Solana fee of the transaction
	// Now is the time of the presentation (the first one: the verification).
	Now time.Time
	// LeaseFor is how long the claim holds the payment before another
	// presentation may resume it.
	LeaseFor time.Duration
	// ResumeWindow is how long after the verification a resume is allowed
	// (15 minutes in the paid-service issue).
	ResumeWindow time.Duration
	// ResumeOnly records nothing new: a payment seen before is decided as
	// always (its one resume, Busy, AlreadyUsed), and one never seen is
	// NotSeen, with no row written. The gate sets it when the payment's memo
	// has expired since: the resume may outlive the memo, a first
	// presentation may not.
	ResumeOnly bool
}

// ClaimOutcome is what Claim decided. The values are a closed set, usable as
// a metrics label.
type ClaimOutcome string

const (
	// Claimed: the first presentation of the payment; the caller holds the
	// lease and runs the op.
	Claimed ClaimOutcome = "claimed"
	// Resumed: the payment was verified before but never delivered, its
	// lease is free and its one resume was unused and within the window; the
	// caller now holds the lease and runs the op again at no charge.
	Resumed ClaimOutcome = "resumed"
	// Busy: another presentation holds the lease; the caller answers 409
	// with Retry-After.
	Busy ClaimOutcome = "busy"
	// AlreadyUsed: the payment (its tx or its memo) is spent: delivered,
	// resumed once already, past the resume window, or presented with a tx
	// and memo that do not belong together.
	AlreadyUsed ClaimOutcome = "already_used"
	// NotSeen: a ResumeOnly claim of a payment never claimed before;
	// nothing was written.
	NotSeen ClaimOutcome = "not_seen"
)

// ClaimResult is the answer of Claim.
type ClaimResult struct {
	Outcome ClaimOutcome
	// PaymentID and LeaseToken are set when the caller holds the lease
	// (Claimed, Resumed); Deliver and Release need both.
	PaymentID  string
	LeaseToken string
	// RetryAfter is set when Busy: how long the current lease still runs.
	RetryAfter time.Duration
}

// Entry is one ledger row: exactly the closed field list the criteria publish
// for its op, nothing else. It never carries a called URL, a memo, a
// challenge or probe-response value, or a hash of one.
type Entry struct {
	// ID is the primary key: the id of the payment the entry records.
	ID string
	// PayerWallet is "payer wallet".
	PayerWallet string
	// Timestamp is "timestamp/day": stored as UTC RFC 3339 text with
	// milliseconds, and its UTC date.
	Timestamp time.Time
	// PriceUSDCUnits is "price (USDC units)" (10000 = $0.01), stored as text.
	PriceUSDCUnits uint64
	// CAD is the CAD fair-market-value block that goes with the price.
	CAD CAD
	// PaymentTx, PaymentNetwork and SolanaFeeLamports are "payment tx id +
	// Solana fee (lamports)": the tx id is a Solana signature or an EVM
	// transaction hash, and PaymentNetwork the CAIP-2 id of the chain it is
	// on, without which the id names no transaction. An entry of an EVM
	// payment has no Solana fee (0). The fee is stored as text. Entries
	// delivered before the network was recorded (migration 0008) read "".
	PaymentTx         string
	PaymentNetwork    string
	SolanaFeeLamports uint64
	CriteriaVersion   string
	VerdictLine       string
	// House is "house flag": the payer is one of the operator's own wallets.
	House bool

	// Exactly one of the op fields is set; it names the entry's op.
	Check     *CheckFields
	Memo      *MemoFields
	Probe     *ProbeFields
	Preflight *PreflightFields
	Lint      *LintFields
}

// CAD is the CAD fair-market-value block of an entry: "rate, rate date,
// basis, cad_pending, refund". Rates are exact decimals as text; an empty
// string is stored as NULL.
type CAD struct {
	Rate     string // CAD per USD; empty while Pending
	RateDate string // YYYY-MM-DD of the rate used; empty while Pending
	Basis    string // the fixed sentence naming the source and the rule
	Pending  bool   // the rate of the payment's date is not published yet
	// Refund is the id of the refund recorded against the entry, empty for
	// none. Entries are never rewritten: the stored column stays NULL and a
	// read joins the refund record in (see AddRefund), so Deliver refuses
	// an entry that names one.
	Refund string
}

// CheckFields are the check op's own ledger fields.
type CheckFields struct {
	PayabilityState     string // "payability state"
	DescriptionOverlong bool   // "description_overlong flag"
}

// MemoFields are the memo op's own ledger fields.
type MemoFields struct {
	MemoBindingState string // "memo_binding_state"
}

// ProbeFields are the probe op's own ledger fields.
type ProbeFields struct {
	DirectGrade      string // "direct grade"
	FacilitatorGrade string // "facilitator grade"
	ExposuresCount   int    // "exposures count"
}

// PreflightFields are the preflight op's own ledger fields (x402-preflight
// publishes no ledger list of its own: these are ours, docs/ledger.md).
type PreflightFields struct {
	Decision string // GO, HOLD or STOP
	// Reasons are the decision's reason codes, the closed codes of
	// x402-preflight/v1 separated by single spaces ("" for none).
	Reasons string
}

// LintFields are the lint op's own ledger fields (ours, docs/ledger.md).
type LintFields struct {
	Conforms      bool
	ErrorsCount   int // findings of severity error
	WarningsCount int // findings of severity warn
}

// Op returns the op named by the entry's op fields, or "" unless exactly one
// of them is set.
func (e Entry) Op() Op {
	var op Op
	n := 0
	for _, f := range []struct {
		set bool
		op  Op
	}{{e.Check != nil, OpCheck}, {e.Memo != nil, OpMemo}, {e.Probe != nil, OpProbe},
		{e.Preflight != nil, OpPreflight}, {e.Lint != nil, OpLint}} {
		if f.set {
			op, n = f.op, n+1
		}
	}
	if n != 1 {
		return ""
	}
	return op
}

// Day returns the UTC date of the entry's timestamp, YYYY-MM-DD.
func (e Entry) Day() string {
	return e.Timestamp.UTC().Format(DayLayout)
}

// Time formats of the ledger's text columns.
const (
	// TimestampLayout is UTC RFC 3339 with milliseconds. Its text sorts in
	// time order, so ranges are plain text comparisons on every backend.
	TimestampLayout = "2006-01-02T15:04:05.000Z"
	DayLayout       = "2006-01-02"
)

// Errors of the contract. They are closed-form: no value of a payment, an
// entry or a fetched response is ever formatted into them.
var (
	// ErrLeaseLost: the caller does not hold the payment's lease (any more).
	ErrLeaseLost = errors.New("store: payment lease not held")
	// ErrInvalidClaim: a Claim is missing a field or its memo digest is not
	// 64 lowercase hex digits.
	ErrInvalidClaim = errors.New("store: invalid claim")
	// ErrInvalidEntry: an Entry is incomplete, names no single op, or does
	// not belong to the payment it is delivered for.
	ErrInvalidEntry = errors.New("store: invalid ledger entry")
	// ErrInvalidFree: a free-tier limit is out of range.
	ErrInvalidFree = errors.New("store: invalid free-tier limit")
	// ErrInvalidRefund: a Refund is missing a field or its tx is not base58.
	ErrInvalidRefund = errors.New("store: invalid refund")
	// ErrInvalidRate: a rate or a date is not of its form.
	ErrInvalidRate = errors.New("store: invalid rate")
	// ErrNoEntry: the op's ledger has no entry of that id.
	ErrNoEntry = errors.New("store: no such ledger entry")
	// ErrAlreadyRefunded: the entry has a refund recorded against it.
	ErrAlreadyRefunded = errors.New("store: ledger entry already refunded")
	// ErrInvalidSettlement: a settlement key is not a SHA-256 in hex, an op
	// is unknown, or a result is not of its form.
	ErrInvalidSettlement = errors.New("store: invalid settlement")
)

// Validate checks the form of a claim.
func (c Claim) Validate() error {
	switch {
	case c.Rail == "", c.Tx == "", c.Payer == "", !c.Op.Valid(),
		!IsDigest(c.MemoDigest), c.Now.IsZero(), c.LeaseFor <= 0, c.ResumeWindow <= 0:
		return ErrInvalidClaim
	}
	return nil
}

// Validate checks the form of an entry to be delivered (Deliver also checks
// that it belongs to its payment). A new entry names no refund.
func (e Entry) Validate() error {
	switch {
	case e.Op() == "", e.PayerWallet == "", e.Timestamp.IsZero(), e.PaymentTx == "", !IsCAIP2(e.PaymentNetwork),
		e.CriteriaVersion == "", e.VerdictLine == "", e.CAD.Basis == "", e.CAD.Refund != "",
		e.CAD.Pending && (e.CAD.Rate != "" || e.CAD.RateDate != ""),
		!e.CAD.Pending && (e.CAD.Rate == "" || e.CAD.RateDate == ""),
		e.Probe != nil && e.Probe.ExposuresCount < 0,
		e.Preflight != nil && !validPreflight(*e.Preflight),
		e.Lint != nil && (e.Lint.ErrorsCount < 0 || e.Lint.WarningsCount < 0):
		return ErrInvalidEntry
	}
	return nil
}

// validPreflight checks the closed form of the preflight fields: a decision
// word and reason codes of lowercase letters, digits and '_' only, so the
// column can carry nothing else.
func validPreflight(f PreflightFields) bool {
	switch f.Decision {
	case "GO", "HOLD", "STOP":
	default:
		return false
	}
	if len(f.Reasons) > 512 {
		return false
	}
	if f.Reasons == "" {
		return true
	}
	for _, code := range strings.Split(f.Reasons, " ") {
		if code == "" {
			return false
		}
		for i := 0; i < len(code); i++ {
			c := code[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
				return false
			}
		}
	}
	return true
}

// IsDigest reports whether s has the form of a memo digest: 64 lowercase hex
// digits (a SHA-256-sized keyed digest).
func IsDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// base58Alphabet is the Bitcoin alphabet Solana writes signatures in.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// IsBase58 reports whether s is non-empty base58 text. A refund tx must be:
// such text can carry no URL, memo or challenge value of ours.
func IsBase58(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(base58Alphabet, rune(s[i])) {
			return false
		}
	}
	return true
}

// IsRate reports whether s has the form of a rate: a decimal of digits
// with at most one point between them, at most 32 characters. No other text
// (a URL, a memo) can be cached or filled as a rate.
func IsRate(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	whole, frac, point := strings.Cut(s, ".")
	if whole == "" || (point && frac == "") {
		return false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// IsDate reports whether s is a YYYY-MM-DD calendar date.
func IsDate(s string) bool {
	t, err := time.Parse(DayLayout, s)
	return err == nil && t.Format(DayLayout) == s
}

// Readier is a store that can answer a readiness probe: nil when the
// database answers and its schema is the running build's.
type Readier interface {
	Ready(ctx context.Context) error
}

// IsCAIP2 reports whether s has the form of a CAIP-2 chain id
// (namespace:reference, [-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}): the network
// of a payment, never free text.
func IsCAIP2(s string) bool {
	ns, ref, ok := strings.Cut(s, ":")
	if !ok || len(ns) < 3 || len(ns) > 8 || len(ref) < 1 || len(ref) > 32 {
		return false
	}
	for _, c := range ns {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	for _, c := range ref {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// IsEVMTxHash reports whether s has the form of an EVM transaction hash:
// 0x and 64 lowercase or uppercase hex digits. Like base58, such text can
// carry no URL, memo or challenge value of ours.
func IsEVMTxHash(s string) bool {
	if len(s) != 66 || s[0] != '0' || s[1] != 'x' {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// IsTxID reports whether s is a payment transaction id of a rail we take:
// a base58 Solana signature (at most 128 characters) or an EVM
// transaction hash.
func IsTxID(s string) bool {
	return (IsBase58(s) && len(s) <= 128) || IsEVMTxHash(s)
}
