package ledger

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// Row is one entry of the export with its CAD block and its refund: the
// entry's closed fields, plus what the operator's books need and the entry
// does not store (the USD and CAD amounts, the refund's tx and time). The op
// fields of the other ops are empty. The CSV header is the JSON names, in
// this order.
type Row struct {
	Op                string `json:"op"`
	ID                string `json:"id"`
	Timestamp         string `json:"timestamp"`
	Day               string `json:"day"`
	PayerWallet       string `json:"payer_wallet"`
	House             bool   `json:"house"`
	PriceUSDCUnits    string `json:"price_usdc_units"`
	PriceUSD          string `json:"price_usd"`
	CADRate           string `json:"cad_rate"`
	CADRateDate       string `json:"cad_rate_date"`
	CADPending        bool   `json:"cad_pending"`
	CADAmount         string `json:"cad_amount"` // price × rate, exact; empty while pending
	CADBasis          string `json:"cad_basis"`
	Refund            string `json:"refund"` // the refund record's id
	RefundTx          string `json:"refund_tx"`
	RefundedAt        string `json:"refunded_at"`
	PaymentTx         string `json:"payment_tx"`
	PaymentNetwork    string `json:"payment_network"` // CAIP-2; empty for entries before it was recorded
	SolanaFeeLamports string `json:"solana_fee_lamports"`
	CriteriaVersion   string `json:"criteria_version"`
	VerdictLine       string `json:"verdict_line"`

	PayabilityState     string `json:"payability_state,omitempty"`
	DescriptionOverlong *bool  `json:"description_overlong,omitempty"`
	MemoBindingState    string `json:"memo_binding_state,omitempty"`
	DirectGrade         string `json:"direct_grade,omitempty"`
	FacilitatorGrade    string `json:"facilitator_grade,omitempty"`
	ExposuresCount      *int   `json:"exposures_count,omitempty"`
	Decision            string `json:"decision,omitempty"`
	Reasons             string `json:"reasons,omitempty"`
	Conforms            *bool  `json:"conforms,omitempty"`
	ErrorsCount         *int   `json:"errors_count,omitempty"`
	WarningsCount       *int   `json:"warnings_count,omitempty"`
}

// SummaryRow sums the rows of one UTC day and op ("total" and "all" for the
// sums over days and over ops). Sales are outside entries only: house
// entries are the operator's proofs and are counted apart.
type SummaryRow struct {
	Day            string `json:"day"`
	Op             string `json:"op"`
	Sales          int    `json:"sales"`
	SalesUSDCUnits string `json:"sales_usdc_units"`
	SalesUSD       string `json:"sales_usd"`
	// SalesCAD sums the CAD amounts of the sales whose rate is known;
	// CADPending counts the others, missing from the sum.
	SalesCAD   string `json:"sales_cad"`
	CADPending int    `json:"cad_pending"`
	// Refunds counts the sales refunded (so far), valued like the sale.
	Refunds          int    `json:"refunds"`
	RefundsUSDCUnits string `json:"refunds_usdc_units"`
	RefundsCAD       string `json:"refunds_cad"`
	House            int    `json:"house"`
}

// Range is an export's dates: UTC days from From to To, both included.
type Range struct{ From, To string }

// Bounds returns the half-open time range of the days.
func (r Range) Bounds() (time.Time, time.Time, error) {
	from, err1 := time.Parse(store.DayLayout, r.From)
	to, err2 := time.Parse(store.DayLayout, r.To)
	if err1 != nil || err2 != nil || !store.IsDate(r.From) || !store.IsDate(r.To) {
		return time.Time{}, time.Time{}, errors.New("ledger: dates must be YYYY-MM-DD")
	}
	if to.Before(from) {
		return time.Time{}, time.Time{}, errors.New("ledger: --to is before --from")
	}
	return from, to.AddDate(0, 0, 1), nil
}

// Export reads the entries of every op in the range and their refunds.
func Export(ctx context.Context, st store.Store, r Range) ([]Row, error) {
	from, to, err := r.Bounds()
	if err != nil {
		return nil, err
	}
	var es []store.Entry
	for _, op := range store.Ops {
		got, err := st.Entries(ctx, op, from, to)
		if err != nil {
			return nil, err
		}
		es = append(es, got...)
	}
	// Refunds are recorded after their entries, at any later time.
	refunds, err := st.Refunds(ctx, from, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return nil, err
	}
	return Rows(es, refunds)
}

// Rows turns entries and refunds into export rows, oldest first (then by op
// and id).
func Rows(es []store.Entry, refunds []store.Refund) ([]Row, error) {
	byEntry := map[string]store.Refund{}
	for _, r := range refunds {
		byEntry[string(r.Op)+"/"+r.EntryID] = r
	}
	rows := make([]Row, 0, len(es))
	for _, e := range es {
		row := Row{
			Op:                string(e.Op()),
			ID:                e.ID,
			Timestamp:         e.Timestamp.UTC().Format(store.TimestampLayout),
			Day:               e.Day(),
			PayerWallet:       e.PayerWallet,
			House:             e.House,
			PriceUSDCUnits:    strconv.FormatUint(e.PriceUSDCUnits, 10),
			PriceUSD:          Units(e.PriceUSDCUnits, USDCDecimals).String(),
			CADRate:           e.CAD.Rate,
			CADRateDate:       e.CAD.RateDate,
			CADPending:        e.CAD.Pending,
			CADBasis:          e.CAD.Basis,
			Refund:            e.CAD.Refund,
			PaymentTx:         e.PaymentTx,
			PaymentNetwork:    e.PaymentNetwork,
			SolanaFeeLamports: strconv.FormatUint(e.SolanaFeeLamports, 10),
			CriteriaVersion:   e.CriteriaVersion,
			VerdictLine:       e.VerdictLine,
		}
		if !e.CAD.Pending {
			a, err := Amount(e.PriceUSDCUnits, e.CAD.Rate)
			if err != nil {
				return nil, fmt.Errorf("ledger: entry %s: the stored rate is not a decimal", e.ID)
			}
			row.CADAmount = a
		}
		if r, ok := byEntry[row.Op+"/"+e.ID]; ok {
			row.RefundTx = r.Tx
			row.RefundedAt = r.Time.UTC().Format(store.TimestampLayout)
		}
		switch {
		case e.Check != nil:
			row.PayabilityState = e.Check.PayabilityState
			row.DescriptionOverlong = &e.Check.DescriptionOverlong
		case e.Memo != nil:
			row.MemoBindingState = e.Memo.MemoBindingState
		case e.Probe != nil:
			row.DirectGrade, row.FacilitatorGrade = e.Probe.DirectGrade, e.Probe.FacilitatorGrade
			row.ExposuresCount = &e.Probe.ExposuresCount
		case e.Preflight != nil:
			row.Decision, row.Reasons = e.Preflight.Decision, e.Preflight.Reasons
		case e.Lint != nil:
			row.Conforms = &e.Lint.Conforms
			row.ErrorsCount, row.WarningsCount = &e.Lint.ErrorsCount, &e.Lint.WarningsCount
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Timestamp != b.Timestamp {
			return a.Timestamp < b.Timestamp
		}
		if a.Op != b.Op {
			return opRank(a.Op) < opRank(b.Op)
		}
		return a.ID < b.ID
	})
	return rows, nil
}

func opRank(op string) int {
	for i, o := range store.Ops {
		if string(o) == op {
			return i
		}
	}
	return len(store.Ops)
}

// Summarize sums rows per UTC day and op, then per op over all days
// ("total"), then over everything ("total", "all").
func Summarize(rows []Row) ([]SummaryRow, error) {
	type key struct{ day, op string }
	type acc struct {
		sales, pending, refunds, house int
		units, cad, rUnits, rCAD       Decimal
	}
	sums := map[key]*acc{}
	var keys []key
	get := func(k key) *acc {
		a, ok := sums[k]
		if !ok {
			a = &acc{units: Zero(), cad: Zero(), rUnits: Zero(), rCAD: Zero()}
			sums[k] = a
			keys = append(keys, k)
		}
		return a
	}
	for _, r := range rows {
		for _, k := range []key{{r.Day, r.Op}, {"total", r.Op}, {"total", "all"}} {
			a := get(k)
			if r.House {
				a.house++
				continue
			}
			units, err := ParseDecimal(r.PriceUSDCUnits)
			if err != nil {
				return nil, fmt.Errorf("ledger: entry %s: bad price", r.ID)
			}
			var cad Decimal
			if !r.CADPending {
				if cad, err = ParseDecimal(r.CADAmount); err != nil {
					return nil, fmt.Errorf("ledger: entry %s: bad CAD amount", r.ID)
				}
			}
			a.sales++
			a.units = a.units.Add(units)
			if r.CADPending {
				a.pending++
			} else {
				a.cad = a.cad.Add(cad)
			}
			if r.Refund != "" {
				a.refunds++
				a.rUnits = a.rUnits.Add(units)
				if !r.CADPending {
					a.rCAD = a.rCAD.Add(cad)
				}
			}
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a.day == "total") != (b.day == "total") {
			return b.day == "total"
		}
		if a.day != b.day {
			return a.day < b.day
		}
		return opRank(a.op) < opRank(b.op)
	})
	usd := func(units Decimal) string {
		return Decimal{coef: units.c(), scale: units.scale + USDCDecimals}.String()
	}
	out := make([]SummaryRow, 0, len(keys))
	for _, k := range keys {
		a := sums[k]
		out = append(out, SummaryRow{
			Day: k.day, Op: k.op, Sales: a.sales,
			SalesUSDCUnits: a.units.String(), SalesUSD: usd(a.units), SalesCAD: a.cad.String(), CADPending: a.pending,
			Refunds: a.refunds, RefundsUSDCUnits: a.rUnits.String(), RefundsCAD: a.rCAD.String(),
			House: a.house,
		})
	}
	return out, nil
}

// WriteCSV writes rows (a slice of Row or SummaryRow) as CSV: a header row
// of the JSON names, then one line per row.
func WriteCSV(w io.Writer, rows any) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return errors.New("ledger: WriteCSV wants a slice")
	}
	t := v.Type().Elem()
	cw := csv.NewWriter(w)
	header := make([]string, t.NumField())
	for i := range header {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		header[i] = name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := 0; i < v.Len(); i++ {
		rec := make([]string, t.NumField())
		for j := range rec {
			rec[j] = cell(v.Index(i).Field(j))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func cell(f reflect.Value) string {
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			return ""
		}
		return cell(f.Elem())
	case reflect.String:
		return f.String()
	case reflect.Bool:
		return strconv.FormatBool(f.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(f.Int(), 10)
	}
	return ""
}

// WriteJSON writes rows as one JSON array, an object per row.
func WriteJSON(w io.Writer, rows any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rows)
}
