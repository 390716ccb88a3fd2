package ledger

import (
	"errors"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
)

func TestParseDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"1.3643": "1.3643", "10000": "10000", "0.0100": "0.01", "0": "0", "000.50": "0.5", "1.0": "1",
	} {
		d, err := ParseDecimal(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDecimal(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"", ".5", "1.", "-1", "+1", "1e3", "1,5", " 1", "1.2.3", "0x10", "١", "NaN", "Inf",
		"1234567890123456789012345678901234567890123456789012345678901234567890"} {
		if _, err := ParseDecimal(in); !errors.Is(err, ErrDecimal) {
			t.Errorf("ParseDecimal(%q) accepted", in)
		}
	}
}

func TestDecimalArithmeticIsExact(t *testing.T) {
	d := func(s string) Decimal {
		v, err := ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// 0.1 + 0.2 is 0.3, not a float's 0.30000000000000004.
	if got := d("0.1").Add(d("0.2")).String(); got != "0.3" {
		t.Errorf("0.1 + 0.2 = %s", got)
	}
	if got := d("1.3643").Mul(d("0.01")).String(); got != "0.013643" {
		t.Errorf("1.3643 × 0.01 = %s", got)
	}
	if got := d("0.013643").Add(d("0.0273")).Add(Zero()).String(); got != "0.040943" {
		t.Errorf("sum = %s", got)
	}
	if d("1.30").Cmp(d("1.3")) != 0 || d("1.31").Cmp(d("1.3")) != 1 || Zero().Sign() != 0 {
		t.Errorf("Cmp/Sign")
	}
}

func TestAmountIsPriceTimesRate(t *testing.T) {
	for _, tc := range []struct {
		units uint64
		rate  string
		want  string
	}{
		{10000, "1.3643", "0.013643"}, // a check or memo call: $0.01
		{20000, "1.3650", "0.0273"},   // a probe call: $0.02
		{1, "1.3643", "0.0000013643"}, // one USDC unit
		{1000000, "1.4000", "1.4"},    // one USDC
		{18446744073709551615, "1.3643", "25166892939761.9412683445"},
	} {
		got, err := Amount(tc.units, tc.rate)
		if err != nil || got != tc.want {
			t.Errorf("Amount(%d, %s) = %s, %v; want %s", tc.units, tc.rate, got, err, tc.want)
		}
	}
	if _, err := Amount(10000, "1.3e0"); err == nil {
		t.Errorf("a rate with an exponent was accepted")
	}
}

// The published rates of the rule's table: a week around Good Friday 2026
// (2026-04-03, no rate) and its weekend; Monday not published yet.
var aroundGoodFriday = []store.Rate{
	{Date: "2026-03-27", Value: "1.3810"}, // Friday
	{Date: "2026-03-30", Value: "1.3795"},
	{Date: "2026-03-31", Value: "1.3802"},
	{Date: "2026-04-01", Value: "1.3777"},
	{Date: "2026-04-02", Value: "1.3760"}, // Thursday; then Good Friday and the weekend
}

func TestValueRule(t *testing.T) {
	monday := append(append([]store.Rate{}, aroundGoodFriday...), store.Rate{Date: "2026-04-06", Value: "1.3741"})
	for _, tc := range []struct {
		name  string
		day   string
		rates []store.Rate
		want  Valuation
	}{
		{"the date's own rate", "2026-03-31", aroundGoodFriday, Valuation{Rate: "1.3802", RateDate: "2026-03-31"}},
		{"the last published date itself", "2026-04-02", aroundGoodFriday, Valuation{Rate: "1.3760", RateDate: "2026-04-02"}},
		{"a weekend, once Monday is out: Friday's rate", "2026-03-29", aroundGoodFriday, Valuation{Rate: "1.3810", RateDate: "2026-03-27"}},
		{"holiday not final yet: pending", "2026-04-03", aroundGoodFriday, Valuation{Pending: true}},
		{"weekend after the holiday, not final: pending", "2026-04-05", aroundGoodFriday, Valuation{Pending: true}},
		{"holiday, final once Monday is out: Thursday's rate", "2026-04-03", monday, Valuation{Rate: "1.3760", RateDate: "2026-04-02"}},
		{"Sunday after the holiday: Thursday's rate", "2026-04-05", monday, Valuation{Rate: "1.3760", RateDate: "2026-04-02"}},
		{"today, not published yet: pending", "2026-04-07", monday, Valuation{Pending: true}},
		{"order does not matter", "2026-04-04", []store.Rate{monday[5], monday[0], monday[4], monday[2]}, Valuation{Rate: "1.3760", RateDate: "2026-04-02"}},
		{"nothing published within MaxGapDays before: pending", "2026-04-20", []store.Rate{{Date: "2026-04-02", Value: "1.3760"}, {Date: "2026-04-21", Value: "1.37"}}, Valuation{Pending: true}},
		{"MaxGapDays back exactly is still close enough", "2026-04-16", []store.Rate{{Date: "2026-04-02", Value: "1.3760"}, {Date: "2026-04-21", Value: "1.37"}}, Valuation{Rate: "1.3760", RateDate: "2026-04-02"}},
		{"no rates at all: pending", "2026-04-02", nil, Valuation{Pending: true}},
		{"not a date: pending", "April 2", aroundGoodFriday, Valuation{Pending: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Value(tc.day, tc.rates); got != tc.want {
				t.Errorf("Value(%s) = %+v, want %+v", tc.day, got, tc.want)
			}
		})
	}
	if Final("2026-04-03", aroundGoodFriday) || !Final("2026-04-03", monday) {
		t.Errorf("Final: a date is final exactly when a later date is published")
	}
}
