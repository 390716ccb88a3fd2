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

const dayMS = int64(24 * time.Hour / time.Millisecond)

// Store implements store.Store, except Close, on a DB.
type Store struct {
	db         DB
	useDBClock bool
	// The free tier's statements on its two tables.
	key, source freeSQL
	clock       string
}

type freeSQL struct{ upsert, state string }

// New returns a Store on db. With useDBClock the free tier reads the
// database's clock (d.ClockMS) and ignores the now it is given, so the clocks
// of several instances do not matter.
func New(db DB, d Dialect, useDBClock bool) *Store {
	free := func(table, col string) freeSQL {
		return freeSQL{
			upsert: fmt.Sprintf(freeUpsertSQL, d.ClockMS, table, col),
			state:  fmt.Sprintf(freeStateSQL, d.ClockMS, table, col),
		}
	}
	return &Store{
		db:         db,
		useDBClock: useDBClock,
		key:        free("free_use", "caller_key"),
		source:     free("free_source", "source_key"),
		clock:      fmt.Sprintf(clockSQL, d.ClockMS),
	}
}

// TakeFree implements store.Store.
func (s *Store) TakeFree(ctx context.Context, key string, now time.Time, perDay int, minInterval time.Duration) (store.FreeDecision, error) {
	return s.TakeFreeFrom(ctx, store.FreeTake{Key: key, Now: now, PerDay: perDay, MinInterval: minInterval})
}

// errSourceRefused rolls back a call the source's ceiling refused.
var errSourceRefused = errors.New("store: free tier: source ceiling")

// TakeFreeFrom implements store.Store.
func (s *Store) TakeFreeFrom(ctx context.Context, t store.FreeTake) (store.FreeDecision, error) {
	if t.Key == "" || t.PerDay < 1 || t.MinInterval < 0 || (!s.useDBClock && t.Now.IsZero()) ||
		(t.Source != "" && t.SourcePerDay < 1) {
		return store.FreeDecision{}, store.ErrInvalidFree
	}
	var nowArg any
	if !s.useDBClock {
		nowArg = t.Now.UnixMilli()
	}
	intervalMS := t.MinInterval.Milliseconds()

	take := func(q Querier, f freeSQL, key string, perDay int64, intervalMS int64) (used int64, allowed bool, err error) {
		var last int64
		err = q.QueryRow(ctx, f.upsert, key, nowArg, perDay, intervalMS).Scan(&used, &last)
		switch {
		case err == nil:
			return used, true, nil
		case errors.Is(err, ErrNoRows):
			return 0, false, nil
		}
		return 0, false, err
	}

	var used int64
	var allowed bool
	var err error
	if t.Source == "" {
		used, allowed, err = take(s.db, s.key, t.Key, int64(t.PerDay), intervalMS)
	} else {
		// Both in one transaction, the key's row first: a call the ceiling
		// refuses rolls the key's count (and its daily tally) back.
		err = s.db.InTx(ctx, func(q Querier) error {
			var e error
			if used, allowed, e = take(q, s.key, t.Key, int64(t.PerDay), intervalMS); e != nil || !allowed {
				return e
			}
			_, ok, e := take(q, s.source, t.Source, int64(t.SourcePerDay), 0)
			if e != nil {
				return e
			}
			if !ok {
				allowed = false
				return errSourceRefused
			}
			return nil
		})
		if errors.Is(err, errSourceRefused) {
			return s.sourceRefusal(ctx, t.Source, nowArg)
		}
	}
	if err != nil {
		return store.FreeDecision{}, fmt.Errorf("store: free tier: %w", err)
	}
	if allowed {
		return store.FreeDecision{Allowed: true, UsedToday: int(used)}, nil
	}

	// Refused by the key's limits. Say which, from the row as it is now.
	var day, last, nowMS int64
	if err := s.db.QueryRow(ctx, s.key.state, t.Key, nowArg).Scan(&day, &used, &last, &nowMS); err != nil {
		return store.FreeDecision{}, fmt.Errorf("store: free tier state: %w", err)
	}
	today := nowMS / dayMS
	if day == today && used >= int64(t.PerDay) {
		return store.FreeDecision{
			Reason:     store.FreeDailyLimit,
			UsedToday:  int(used),
			RetryAfter: time.Duration((today+1)*dayMS-nowMS) * time.Millisecond,
		}, nil
	}
	d := store.FreeDecision{
		Reason:     store.FreeMinInterval,
		RetryAfter: time.Duration(max(last+intervalMS-nowMS, 0)) * time.Millisecond,
	}
	if day == today {
		d.UsedToday = int(used)
	}
	return d, nil
}

// sourceRefusal is the answer to a call the source's ceiling refused: it
// lifts at the next UTC midnight.
func (s *Store) sourceRefusal(ctx context.Context, source string, nowArg any) (store.FreeDecision, error) {
	var day, used, last, nowMS int64
	if err := s.db.QueryRow(ctx, s.source.state, source, nowArg).Scan(&day, &used, &last, &nowMS); err != nil {
		return store.FreeDecision{}, fmt.Errorf("store: free tier state: %w", err)
	}
	today := nowMS / dayMS
	return store.FreeDecision{
		Reason:     store.FreeSourceLimit,
		RetryAfter: time.Duration((today+1)*dayMS-nowMS) * time.Millisecond,
	}, nil
}

// Prune implements store.Store.
func (s *Store) Prune(ctx context.Context, now time.Time) (store.Pruned, error) {
	nowMS := now.UnixMilli()
	if s.useDBClock {
		if err := s.db.QueryRow(ctx, s.clock).Scan(&nowMS); err != nil {
			return store.Pruned{}, fmt.Errorf("store: prune: %w", err)
		}
	} else if now.IsZero() {
		return store.Pruned{}, errors.New("store: prune: no time given")
	}
	var p store.Pruned
	var err error
	if p.Free, err = s.db.Exec(ctx, pruneFreeSQL, nowMS-store.FreeRetention.Milliseconds()); err != nil {
		return p, fmt.Errorf("store: prune: %w", err)
	}
	if p.FreeSources, err = s.db.Exec(ctx, pruneFreeSourceSQL, nowMS-store.FreeRetention.Milliseconds()); err != nil {
		return p, fmt.Errorf("store: prune: %w", err)
	}
	if p.Settlements, err = s.db.Exec(ctx, pruneSettlementsSQL, nowMS-store.SettlementRetention.Milliseconds(), nowMS); err != nil {
		return p, fmt.Errorf("store: prune: %w", err)
	}
	return p, nil
}

// Sizes implements store.Store.
func (s *Store) Sizes(ctx context.Context) (store.Sizes, error) {
	var z store.Sizes
	if err := s.db.QueryRow(ctx, sizesSQL).Scan(&z.Free, &z.FreeSources, &z.Settlements, &z.Payments); err != nil {
		return store.Sizes{}, fmt.Errorf("store: sizes: %w", err)
	}
	return z, nil
}

type payment struct {
	id, rail, tx, memo, op string
	verified, leaseUntil   int64
	resumes                int64
	delivered              *int64
}

// Claim implements store.Store.
func (s *Store) Claim(ctx context.Context, c store.Claim) (store.ClaimResult, error) {
	if err := c.Validate(); err != nil {
		return store.ClaimResult{}, err
	}
	now := c.Now.UnixMilli()
	leaseUntil := now + c.LeaseFor.Milliseconds()
	token := rand.Text()

	if !c.ResumeOnly {
		id := rand.Text()
		n, err := s.db.Exec(ctx, insertPaymentSQL, id, c.Rail, c.Tx, c.MemoDigest, string(c.Op), c.Payer,
			strconv.FormatUint(c.Amount, 10), strconv.FormatUint(c.FeeLamports, 10), now, token, leaseUntil)
		if err != nil {
			return store.ClaimResult{}, fmt.Errorf("store: claim: %w", err)
		}
		if n == 1 {
			return store.ClaimResult{Outcome: store.Claimed, PaymentID: id, LeaseToken: token}, nil
		}
	}

	// Seen before. A lost compare-and-set means another presentation moved
	// the payment on (resumed or delivered it), so reading it again decides;
	// its state only moves forward, so a few rounds always suffice.
	for range 3 {
		ps, err := s.findPayments(ctx, c.Tx, c.MemoDigest)
		if err != nil {
			return store.ClaimResult{}, err
		}
		if len(ps) == 0 {
			if c.ResumeOnly {
				return store.ClaimResult{Outcome: store.NotSeen}, nil
			}
			return store.ClaimResult{}, errors.New("store: claim: conflicting payment not found")
		}
		p := ps[0]
		switch {
		case len(ps) > 1, p.tx != c.Tx, p.memo != c.MemoDigest, p.op != string(c.Op), p.rail != c.Rail:
			// The tx and the memo were each spent, or not together.
			return store.ClaimResult{Outcome: store.AlreadyUsed}, nil
		case p.delivered != nil:
			return store.ClaimResult{Outcome: store.AlreadyUsed}, nil
		case p.leaseUntil > now:
			return store.ClaimResult{
				Outcome:    store.Busy,
				RetryAfter: time.Duration(p.leaseUntil-now) * time.Millisecond,
			}, nil
		case p.resumes > 0, now >= p.verified+c.ResumeWindow.Milliseconds():
			return store.ClaimResult{Outcome: store.AlreadyUsed}, nil
		}
		n, err := s.db.Exec(ctx, resumeSQL, p.id, token, leaseUntil, now, c.ResumeWindow.Milliseconds())
		if err != nil {
			return store.ClaimResult{}, fmt.Errorf("store: resume: %w", err)
		}
		if n == 1 {
			return store.ClaimResult{Outcome: store.Resumed, PaymentID: p.id, LeaseToken: token}, nil
		}
	}
	return store.ClaimResult{}, errors.New("store: claim: payment state kept changing")
}

func (s *Store) findPayments(ctx context.Context, tx, memo string) ([]payment, error) {
	rows, err := s.db.Query(ctx, findPaymentsSQL, tx, memo)
	if err != nil {
		return nil, fmt.Errorf("store: find payment: %w", err)
	}
	defer rows.Close()
	var ps []payment
	for rows.Next() {
		var p payment
		if err := rows.Scan(&p.id, &p.rail, &p.tx, &p.memo, &p.op, &p.verified, &p.leaseUntil, &p.resumes, &p.delivered); err != nil {
			return nil, fmt.Errorf("store: find payment: %w", err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: find payment: %w", err)
	}
	return ps, nil
}

// Deliver implements store.Store.
func (s *Store) Deliver(ctx context.Context, paymentID, leaseToken string, e store.Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	op := e.Op()
	e.ID = paymentID
	e.Timestamp = e.Timestamp.UTC().Truncate(time.Millisecond)
	return s.db.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, deliverSQL, paymentID, leaseToken, e.Timestamp.UnixMilli(), e.PaymentTx, string(op))
		if err != nil {
			return fmt.Errorf("store: deliver: %w", err)
		}
		if n != 1 {
			return s.deliverRefusal(ctx, q, paymentID, leaseToken)
		}
		// A reopened delivery (Reopen) left its entry: the resumed
		// delivery keeps it and writes none, so a payment has one entry.
		var have int64
		if err := q.QueryRow(ctx, ledgerQueries()[op].entryOfPayment, paymentID, e.PaymentTx).Scan(&have); err != nil {
			return fmt.Errorf("store: ledger entry: %w", err)
		}
		if have > 0 {
			return nil
		}
		if _, err := q.Exec(ctx, ledgerQueries()[op].insert, entryArgs(e)...); err != nil {
			return fmt.Errorf("store: ledger entry: %w", err)
		}
		return nil
	})
}

// deliverRefusal says why the delivery's compare-and-set matched no row.
func (s *Store) deliverRefusal(ctx context.Context, q Querier, paymentID, leaseToken string) error {
	var token *string
	var delivered *int64
	err := q.QueryRow(ctx, paymentStateSQL, paymentID).Scan(&token, &delivered)
	switch {
	case errors.Is(err, ErrNoRows):
		return store.ErrLeaseLost
	case err != nil:
		return fmt.Errorf("store: deliver: %w", err)
	case delivered != nil, token == nil, *token != leaseToken:
		return store.ErrLeaseLost
	}
	// The lease is held: the entry names another tx or op.
	return store.ErrInvalidEntry
}

// Reopen implements store.Store.
func (s *Store) Reopen(ctx context.Context, paymentID, leaseToken string) (bool, error) {
	n, err := s.db.Exec(ctx, reopenSQL, paymentID, leaseToken)
	if err != nil {
		return false, fmt.Errorf("store: reopen: %w", err)
	}
	return n == 1, nil
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, paymentID, leaseToken string) error {
	n, err := s.db.Exec(ctx, releaseSQL, paymentID, leaseToken)
	if err != nil {
		return fmt.Errorf("store: release: %w", err)
	}
	if n != 1 {
		return store.ErrLeaseLost
	}
	return nil
}

// Entries implements store.Store.
func (s *Store) Entries(ctx context.Context, op store.Op, from, to time.Time) ([]store.Entry, error) {
	if !op.Valid() {
		return nil, fmt.Errorf("store: entries: unknown op")
	}
	rows, err := s.db.Query(ctx, ledgerQueries()[op].selectRange,
		from.UTC().Format(store.TimestampLayout), to.UTC().Format(store.TimestampLayout))
	if err != nil {
		return nil, fmt.Errorf("store: entries: %w", err)
	}
	defer rows.Close()
	var es []store.Entry
	for rows.Next() {
		e, err := scanEntry(rows, op)
		if err != nil {
			return nil, fmt.Errorf("store: entries: %w", err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: entries: %w", err)
	}
	return es, nil
}

// entryArgs lists e's values in the order of the ledger columns.
func entryArgs(e store.Entry) []any {
	args := []any{
		e.ID, e.PayerWallet, e.Timestamp.Format(store.TimestampLayout), e.Day(),
		strconv.FormatUint(e.PriceUSDCUnits, 10),
		nullText(e.CAD.Rate), nullText(e.CAD.RateDate), e.CAD.Basis, e.CAD.Pending, nullText(e.CAD.Refund),
		e.PaymentTx, nullText(e.PaymentNetwork), strconv.FormatUint(e.SolanaFeeLamports, 10), e.CriteriaVersion, e.VerdictLine,
	}
	switch {
	case e.Check != nil:
		args = append(args, e.Check.PayabilityState, e.Check.DescriptionOverlong)
	case e.Memo != nil:
		args = append(args, e.Memo.MemoBindingState)
	case e.Probe != nil:
		args = append(args, e.Probe.DirectGrade, e.Probe.FacilitatorGrade, int64(e.Probe.ExposuresCount))
	case e.Preflight != nil:
		args = append(args, e.Preflight.Decision, e.Preflight.Reasons)
	case e.Lint != nil:
		args = append(args, e.Lint.Conforms, int64(e.Lint.ErrorsCount), int64(e.Lint.WarningsCount))
	}
	return append(args, e.House)
}

func scanEntry(rows Rows, op store.Op) (store.Entry, error) {
	var (
		e                      store.Entry
		ts, day, price, fee    string
		rate, rateDate, refund *string
		network                *string
		exposures, errs, warns int64
		dest                   []any
		check                  store.CheckFields
		memo                   store.MemoFields
		probe                  store.ProbeFields
		pre                    store.PreflightFields
		lint                   store.LintFields
	)
	dest = []any{
		&e.ID, &e.PayerWallet, &ts, &day, &price,
		&rate, &rateDate, &e.CAD.Basis, &e.CAD.Pending, &refund,
		&e.PaymentTx, &network, &fee, &e.CriteriaVersion, &e.VerdictLine,
	}
	switch op {
	case store.OpCheck:
		dest = append(dest, &check.PayabilityState, &check.DescriptionOverlong)
		e.Check = &check
	case store.OpMemo:
		dest = append(dest, &memo.MemoBindingState)
		e.Memo = &memo
	case store.OpProbe:
		dest = append(dest, &probe.DirectGrade, &probe.FacilitatorGrade, &exposures)
		e.Probe = &probe
	case store.OpPreflight:
		dest = append(dest, &pre.Decision, &pre.Reasons)
		e.Preflight = &pre
	case store.OpLint:
		dest = append(dest, &lint.Conforms, &errs, &warns)
		e.Lint = &lint
	}
	dest = append(dest, &e.House)
	if err := rows.Scan(dest...); err != nil {
		return store.Entry{}, err
	}
	var err error
	if e.Timestamp, err = time.Parse(store.TimestampLayout, ts); err != nil {
		return store.Entry{}, errors.New("bad timestamp column")
	}
	if e.PriceUSDCUnits, err = strconv.ParseUint(price, 10, 64); err != nil {
		return store.Entry{}, errors.New("bad price_usdc_units column")
	}
	if e.SolanaFeeLamports, err = strconv.ParseUint(fee, 10, 64); err != nil {
		return store.Entry{}, errors.New("bad solana_fee_lamports column")
	}
	e.CAD.Rate, e.CAD.RateDate, e.CAD.Refund = deref(rate), deref(rateDate), deref(refund)
	e.PaymentNetwork = deref(network)
	probe.ExposuresCount = int(exposures)
	lint.ErrorsCount, lint.WarningsCount = int(errs), int(warns)
	return e, nil
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
