package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ledger"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/verdict"
)

// PaidReport is a delivered report: the op's report, the payment that paid
// for it and the price, then signed.
type PaidReport struct {
	ops.Report
	Payment PaymentRef `json:"payment"`
	Price   PriceRef   `json:"price"`
}

// PaymentRef names the payment of a paid report.
type PaymentRef struct {
	Rail string `json:"rail"`
	// Network is the CAIP-2 network of the payment transaction (a Solana
	// cluster or an EVM chain): Tx is read on it.
	Network string `json:"network"`
	Tx      string `json:"tx"`
	Resumed bool   `json:"resumed"`
}

// PriceRef is the price of a paid report; amounts are strings.
type PriceRef struct {
	USDCUnits string `json:"usdc_units"`
	Label     string `json:"label"`
}

func priceLabel(units uint64) string { return PriceLabel(units) }

// PriceLabel writes USDC units (6 decimals) as dollars, exactly: at least
// two decimals, more only when the price has them ($0.01, $0.015,
// $0.000001). An operator's price (serve --price-*) may have six.
func PriceLabel(units uint64) string {
	frac := strings.TrimRight(strconv.FormatUint(units%1_000_000+1_000_000, 10)[1:], "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return "$" + strconv.FormatUint(units/1_000_000, 10) + "." + frac
}

func (s *Server) handlePaid(w http.ResponseWriter, r *http.Request, op, route string) {
	if !s.cfg.ReadyCorpus {
		// Not sold: no challenge may invite a payment we would then refuse.
		s.count(route, "unavailable")
		writeJSON(w, http.StatusServiceUnavailable, problem{errCorpusNotReady,
			"Paid ops are not served: the graders do not pass 100% of the pinned corpus."})
		return
	}
	req := gate.Request{Op: op, Resource: s.resourceOf(r), Header: r.Header}
	var call paidCall
	if r.Method == http.MethodPost {
		var ok bool
		if call, ok = s.decodePaid(w, r, op, route); !ok {
			return
		}
		req.TargetURL, req.URLErr = call.url, call.urlErr
	} else {
		// A GET or HEAD names no URL: without payment it gets the challenge
		// (not bound to a URL); with payment it is refused like a POST {}.
		req.URLErr = errMissingURL
		if !gate.PaymentPresented(r.Header) {
			c, err := s.cfg.Gate.NewChallenge(op, req.Resource, "")
			if err != nil {
				s.count(route, "error")
				writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The challenge could not be issued."})
				return
			}
			s.count(route, "payment_required")
			writeChallenge(w, r, http.StatusPaymentRequired, c, c.Body, 0)
			return
		}
	}
	d, err := s.cfg.Gate.Admit(r.Context(), req)
	if err != nil {
		s.cfg.Logger.Error("gate failed", "route", route, "error", err.Error())
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal, "The payment could not be evaluated."})
		return
	}
	rail := railOf(r.Header)
	switch d.Kind {
	case gate.NeedPayment:
		s.count(route, "payment_required")
		writeChallenge(w, r, http.StatusPaymentRequired, d.Challenge, d.Challenge.Body, 0)
	case gate.BadURL:
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, urlProblem(req.URLErr))
	case gate.Refused:
		s.count(route, "refused")
		s.metrics.payments.WithLabelValues(rail, string(d.Code)).Inc()
		writeChallenge(w, r, http.StatusPaymentRequired, d.Challenge, gate.RefusalBody(d.Code, d.Challenge), d.RetryAfter)
	case gate.Busy:
		s.count(route, "busy")
		s.metrics.payments.WithLabelValues(rail, string(d.Code)).Inc()
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((d.RetryAfter+time.Second-1)/time.Second))))
		writeJSON(w, http.StatusConflict, problem{string(d.Code), d.Code.Detail()})
	case gate.Paid:
		outcome := "paid"
		if d.Ticket.Resumed {
			outcome = "resumed"
		}
		s.metrics.payments.WithLabelValues(d.Ticket.Payment.Rail, outcome).Inc()
		s.deliver(w, r, op, route, call, d.Ticket)
	}
}

// paidCall is a paid request's op, decoded from its body: the URL it
// names, the refusal of the URL (or of another argument) and the op to run.
type paidCall struct {
	url    string
	urlErr error
	run    func(ctx context.Context) (ops.Report, error)
}

// decodePaid reads the body of a paid POST: {"url"} for the seed
// services' ops, the op's own arguments for preflight and lint. ok is false
// when an answer has been written.
func (s *Server) decodePaid(w http.ResponseWriter, r *http.Request, op, route string) (paidCall, bool) {
	if op == ops.OpPreflight || op == ops.OpLint {
		return s.x402Call(w, r, op, route)
	}
	var body paidRequest
	if !s.readBody(w, r, route, &body) {
		return paidCall{}, false
	}
	c := paidCall{url: deref(body.URL), urlErr: checkTargetURL(body.URL)}
	c.run = func(ctx context.Context) (ops.Report, error) { return s.cfg.Runner.Run(ctx, op, c.url) }
	return c, true
}

func railOf(h http.Header) string {
	if h.Get(gate.HeaderPaymentTx) != "" || h.Get(gate.HeaderPaymentMemo) != "" {
		return gate.RailDirect
	}
	return gate.RailFacilitator
}

// deliver runs the paid op, signs the report and records delivery and the
// ledger entry in one transaction, then answers. A failure of ours before the
// record releases the payment so the same request can resume it once; so
// does a buyer gone before the answer, and an answer that could not be
// written reopens the delivery (undelivered).
func (s *Server) deliver(w http.ResponseWriter, r *http.Request, op, route string, call paidCall, t gate.Ticket) {
	ctx, cancel := s.opContext(r.Context())
	defer cancel()
	fail := func(what string, err error) {
		if rerr := s.cfg.Store.Release(ctx, t.PaymentID, t.LeaseToken); rerr != nil && !errors.Is(rerr, store.ErrLeaseLost) {
			s.cfg.Logger.Error("release failed", "route", route, "error", rerr.Error())
		}
		s.cfg.Logger.Error(what, "route", route, "error", err.Error())
		s.count(route, "error")
		writeJSON(w, http.StatusInternalServerError, problem{errInternal,
			"The op failed on our side; repeat the same request with the same payment headers to resume it once at no charge."})
	}

	start := time.Now()
	rep, err := call.run(ctx)
	s.metrics.fetchDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		fail("op failed", err)
		return
	}
	price := s.cfg.Gate.Offers[op].Price
	signed, err := report.Sign(PaidReport{
		Report:  rep,
		Payment: PaymentRef{Rail: t.Payment.Rail, Network: t.Payment.Network, Tx: t.Payment.Tx, Resumed: t.Resumed},
		Price:   PriceRef{USDCUnits: strconv.FormatUint(price, 10), Label: priceLabel(price)},
	}, s.cfg.Key)
	if err != nil {
		fail("signing failed", err)
		return
	}
	if r.Context().Err() != nil {
		// The buyer hung up while the op ran: nothing can be written, so
		// nothing is delivered. The lease goes back and the same payment
		// presented again resumes at no charge (its one resume).
		s.undelivered(ctx, route, t, false)
		return
	}
	entry := s.entry(rep, t, price)
	if err := s.cfg.Store.Deliver(ctx, t.PaymentID, t.LeaseToken, entry); err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			s.count(route, "busy")
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusConflict, problem{string(gate.CodePaymentInProgress), gate.CodePaymentInProgress.Detail()})
			return
		}
		fail("delivery record failed", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if receipt := t.Payment.SettleResponse; len(receipt) > 0 {
		// The facilitator rail's settle response: PAYMENT-RESPONSE for an
		// x402 v2 payment, X-PAYMENT-RESPONSE for v1.
		name := "PAYMENT-RESPONSE"
		if t.Payment.X402Version == 1 {
			name = "X-PAYMENT-RESPONSE"
		}
		w.Header().Set(name, base64.StdEncoding.EncodeToString(receipt))
	}
	w.WriteHeader(http.StatusOK)
	var werr error
	if r.Method != http.MethodHead {
		_, werr = w.Write(signed)
	}
	// The answer is final only once it left: written and flushed to the
	// connection with the buyer still there. Otherwise the delivery is
	// taken back so that the report, which is never stored, can be had once
	// more with the same payment.
	if werr == nil {
		if err := http.NewResponseController(w).Flush(); !errors.Is(err, http.ErrNotSupported) {
			werr = err
		}
	}
	if werr != nil || r.Context().Err() != nil {
		s.undelivered(ctx, route, t, true)
		return
	}
	s.countVerdict(rep)
	s.count(route, "ok")
}

// undelivered handles a paid report that could not be written: before the
// delivery record (the lease is released) or after it (the delivery is
// reopened). Either way the same payment resumes once at no charge, and the
// ledger keeps one entry. The log names the route and the case only.
func (s *Server) undelivered(ctx context.Context, route string, t gate.Ticket, recorded bool) {
	s.count(route, "client_gone")
	if !recorded {
		if err := s.cfg.Store.Release(ctx, t.PaymentID, t.LeaseToken); err != nil && !errors.Is(err, store.ErrLeaseLost) {
			s.cfg.Logger.Error("release failed", "route", route, "error", err.Error())
		}
		if t.Resumed {
			s.cfg.Logger.Warn("buyer gone before the answer; the payment's one resume is used", "route", route)
		} else {
			s.cfg.Logger.Warn("buyer gone before the answer; the payment resumes once", "route", route)
		}
		return
	}
	ok, err := s.cfg.Store.Reopen(ctx, t.PaymentID, t.LeaseToken)
	switch {
	case err != nil:
		s.cfg.Logger.Error("reopen failed", "route", route, "error", err.Error())
	case ok:
		s.cfg.Logger.Warn("answer not written; the delivery is reopened and the payment resumes once", "route", route)
	default:
		// The report not written was the resumed one: no resume is left.
		s.cfg.Logger.Warn("answer not written; the payment's one resume is used", "route", route)
	}
}

// MarshalJSON flattens the op report and the payment fields into one object.
func (p PaidReport) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(p.Report)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["payment"], _ = json.Marshal(p.Payment)
	m["price"], _ = json.Marshal(p.Price)
	return json.Marshal(m)
}

func (s *Server) countVerdict(rep ops.Report) {
	switch r := rep.(type) {
	case ops.CheckReport:
		s.metrics.verdicts.WithLabelValues(ops.OpCheck, string(r.State)).Inc()
	case ops.MemoReport:
		s.metrics.verdicts.WithLabelValues(ops.OpMemo, string(r.State)).Inc()
	case ops.ProbeReport:
		s.metrics.grades.WithLabelValues("direct", string(r.Grades.Direct.Grade)).Inc()
		s.metrics.grades.WithLabelValues("facilitator", string(r.Grades.Facilitator.Grade)).Inc()
	case ops.PreflightReport:
		s.metrics.verdicts.WithLabelValues(ops.OpPreflight, string(r.Decision)).Inc()
	case ops.LintReport:
		s.metrics.verdicts.WithLabelValues(ops.OpLint, r.Outcome()).Inc()
	}
}

// CADBasis is the fixed sentence naming the CAD valuation source and rule;
// the entry is written pending and the ledger's backfill fills its rate.
const CADBasis = ledger.Basis

// entry builds the ledger row: exactly the op's closed field list.
func (s *Server) entry(rep ops.Report, t gate.Ticket, price uint64) store.Entry {
	env := rep.Common()
	e := store.Entry{
		PayerWallet:       t.Payment.Payer,
		Timestamp:         s.cfg.Now().UTC(),
		PriceUSDCUnits:    price,
		CAD:               store.CAD{Basis: CADBasis, Pending: true},
		PaymentTx:         t.Payment.Tx,
		PaymentNetwork:    t.Payment.Network,
		SolanaFeeLamports: t.Payment.FeeLamports,
		CriteriaVersion:   env.CriteriaID + "@" + env.CriteriaRevision,
		VerdictLine:       env.VerdictLine,
		House:             s.cfg.HouseWallets[t.Payment.Payer],
	}
	switch r := rep.(type) {
	case ops.CheckReport:
		e.Check = &store.CheckFields{PayabilityState: string(r.State), DescriptionOverlong: isTrue(r.Factors.DescriptionOverlong)}
	case ops.MemoReport:
		e.Memo = &store.MemoFields{MemoBindingState: string(r.State)}
	case ops.ProbeReport:
		e.Probe = &store.ProbeFields{DirectGrade: string(r.Grades.Direct.Grade),
			FacilitatorGrade: string(r.Grades.Facilitator.Grade), ExposuresCount: len(r.Exposures)}
	case ops.PreflightReport:
		// The document and its revision stand for the criteria version,
		// the summary (decision and reason codes) for the verdict line.
		e.CriteriaVersion = r.Document + "@" + r.Revision
		codes := make([]string, len(r.Reasons))
		for i, c := range r.Reasons {
			codes[i] = string(c)
		}
		e.Preflight = &store.PreflightFields{Decision: string(r.Decision), Reasons: strings.Join(codes, " ")}
	case ops.LintReport:
		e.CriteriaVersion = r.Rules.ID + "@" + r.Rules.Revision
		e.VerdictLine = r.LintLine()
		errs, warns := r.Counts()
		e.Lint = &store.LintFields{Conforms: r.Conforms, ErrorsCount: errs, WarningsCount: warns}
	}
	return e
}

func isTrue(b *bool) bool { return b != nil && *b }

var _ = criteria.TimeFormat
var _ = verdict.Populated
