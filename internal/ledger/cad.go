// Package ledger is the operator's accounting over the store's ledger: the
// CAD fair-market-value rule and its rate source (the Bank of Canada Valet
// API), the backfill of pending entries, refunds, the tripwires of the
// criteria's kill line, and the exports.
//
// The rule, the tripwires and the export rows are pure functions of what the
// store holds; Backfill, Refund and the metrics collector are the thin parts
// that read and write it.
package ledger

import (
	"sort"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// Basis is the fixed sentence every entry's CAD block carries: the source
// and the rule of its value.
const Basis = "Bank of Canada daily exchange rate FXUSDCAD of the payment's UTC date (or the closest preceding published date); USDC valued at par with USD."

// USDCDecimals: 10000 USDC units are $0.01.
const USDCDecimals = 6

// MaxGapDays is how far back the rule looks for the closest preceding
// published date. Canadian closures are at most a few days in a row (a long
// weekend, Christmas to Boxing Day); a payment date with no rate within this
// many days before it stays pending, flagged, rather than take a stale rate.
const MaxGapDays = 14

// Valuation is the rate part of a CAD block: pending, or a rate and the date
// it is of.
type Valuation struct {
	Pending  bool
	Rate     string // CAD per USD; empty while Pending
	RateDate string // the date of Rate; empty while Pending
}

// Value applies the CAD rule to a payment made on day (its UTC date,
// YYYY-MM-DD), given the published rates known. rates must hold every rate
// published from MaxGapDays before day onwards that the source has published
// (Backfill fetches that range first); their order does not matter.
//
//  1. The rate of day itself, when published.
//  2. Otherwise, once the source has published a rate for a later date, day
//     is final (it will have no rate of its own: a weekend or a holiday), and
//     the closest preceding published date's rate is used; RateDate says
//     which date that is.
//  3. Otherwise the rate is not published yet: pending.
func Value(day string, rates []store.Rate) Valuation {
	d, err := time.Parse(store.DayLayout, day)
	if err != nil {
		return Valuation{Pending: true}
	}
	floor := d.AddDate(0, 0, -MaxGapDays).Format(store.DayLayout)
	var preceding store.Rate
	later := false
	for _, r := range rates {
		switch {
		case r.Date == day:
			return Valuation{Rate: r.Value, RateDate: r.Date}
		case r.Date > day:
			later = true
		case r.Date >= floor && r.Date > preceding.Date:
			preceding = r
		}
	}
	if later && preceding.Date != "" {
		return Valuation{Rate: preceding.Value, RateDate: preceding.Date}
	}
	return Valuation{Pending: true}
}

// Final reports whether day can no longer get a rate of its own: a later
// date has a published rate. This is the finality rule behind Value's case 2.
func Final(day string, rates []store.Rate) bool {
	for _, r := range rates {
		if r.Date > day {
			return true
		}
	}
	return false
}

// Amount is the CAD value of a price in USDC units at rate (CAD per USD,
// USDC at par): price × rate, exact.
func Amount(priceUnits uint64, rate string) (string, error) {
	r, err := ParseDecimal(rate)
	if err != nil {
		return "", err
	}
	return Units(priceUnits, USDCDecimals).Mul(r).String(), nil
}

// sortRates orders rates by date.
func sortRates(rs []store.Rate) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Date < rs[j].Date })
}
