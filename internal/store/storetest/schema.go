package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
)

// SchemaReader is what every backend offers beside store.Store: the column
// names of an op's ledger table as the live database has them.
type SchemaReader interface {
	LedgerColumns(ctx context.Context, op store.Op) ([]string, error)
}

// keyColumn is the one ledger column that is no field of the criteria: the
// primary key (the payment id).
const keyColumn = "id"

// closedFieldColumns maps each phrase of the criteria's closed ledger field
// lists to the columns that carry it. A phrase missing here fails the test:
// a criteria change needs a deliberate schema change, and the reverse.
var closedFieldColumns = map[string][]string{
	"payer wallet":  {"payer_wallet"},
	"timestamp/day": {"timestamp", "day"},
	"price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)": {
		"price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund",
	},
	// The network (CAIP-2) qualifies the tx id: one id names a transaction
	// only together with the chain it is on (a Solana signature, or an EVM
	// transaction hash on Base), so it is part of this field, not a new one.
	"payment tx id + Solana fee (lamports)": {"payment_tx", "payment_network", "solana_fee_lamports"},
	"criteria version":                      {"criteria_version"},
	"verdict line":                          {"verdict_line"},
	"payability state":                      {"payability_state"},
	"description_overlong flag":             {"description_overlong"},
	"memo_binding_state":                    {"memo_binding_state"},
	"direct grade":                          {"direct_grade"},
	"facilitator grade":                     {"facilitator_grade"},
	"exposures count":                       {"exposures_count"},
	"house flag":                            {"house"},
}

// ownClosedFields are the closed ledger field lists of x402-preflight's ops,
// which no published criteria document carries: ours (docs/ledger.md), kept
// here beside the criteria's so the schema is held against them the same
// way. Their common fields are the criteria's phrases above.
var ownClosedFields = map[store.Op][]string{
	store.OpPreflight: append(commonPhrases(), "decision", "reasons", "house flag"),
	store.OpLint:      append(commonPhrases(), "conforms flag", "errors count", "warnings count", "house flag"),
}

// ownFieldColumns maps the phrases of ownClosedFields that are not the
// criteria's to their columns.
var ownFieldColumns = map[string][]string{
	"decision":       {"decision"},
	"reasons":        {"reasons"},
	"conforms flag":  {"conforms"},
	"errors count":   {"errors_count"},
	"warnings count": {"warnings_count"},
}

// commonPhrases are the criteria's fields every ledger table carries.
func commonPhrases() []string {
	return []string{"payer wallet", "timestamp/day",
		"price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)",
		"payment tx id + Solana fee (lamports)", "criteria version", "verdict line"}
}

// criteriaFields reads each op's closed ledger field list from the criteria
// documents the binary embeds (internal/criteria/*.json).
func criteriaFields(t *testing.T) map[store.Op][]string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the storetest source to find the criteria")
	}
	dir := filepath.Join(filepath.Dir(self), "..", "..", "criteria")
	read := func(name string, v any) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("criteria: %v", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("criteria %s: %v", name, err)
		}
	}
	var payability struct {
		Custody struct {
			LedgerClosedFields []string `json:"ledger_closed_fields"`
		} `json:"custody"`
		MemoOp struct {
			Ledger struct {
				ClosedFields []string `json:"closed_fields"`
			} `json:"ledger"`
		} `json:"memo_op"`
	}
	var railProbe struct {
		Custody struct {
			LedgerClosedFields []string `json:"ledger_closed_fields"`
		} `json:"custody"`
	}
	read("payability.criteria.json", &payability)
	read("rail-probe.criteria.json", &railProbe)
	fields := map[store.Op][]string{
		store.OpCheck: payability.Custody.LedgerClosedFields,
		store.OpMemo:  payability.MemoOp.Ledger.ClosedFields,
		store.OpProbe: railProbe.Custody.LedgerClosedFields,
	}
	for op, fs := range ownClosedFields {
		fields[op] = fs
	}
	for op, fs := range fields {
		if len(fs) == 0 {
			t.Fatalf("criteria: no closed ledger field list for op %s", op)
		}
	}
	return fields
}

// wantColumns is the column set the criteria allow for one op.
func wantColumns(t *testing.T, op store.Op, phrases []string) []string {
	t.Helper()
	cols := []string{keyColumn}
	for _, p := range phrases {
		cs, ok := closedFieldColumns[p]
		if !ok {
			cs, ok = ownFieldColumns[p]
		}
		if !ok {
			t.Errorf("%s: the criteria field %q maps to no column: a criteria change needs a schema change", op, p)
			continue
		}
		cols = append(cols, cs...)
	}
	slices.Sort(cols)
	return cols
}

func testLedgerSchema(t *testing.T, s store.Store) {
	sr, ok := s.(SchemaReader)
	if !ok {
		t.Fatalf("%T does not report its ledger schema (storetest.SchemaReader)", s)
	}
	fields := criteriaFields(t)
	for phrase := range closedFieldColumns {
		used := false
		for _, fs := range fields {
			used = used || slices.Contains(fs, phrase)
		}
		if !used {
			t.Errorf("the column mapping names %q, which no criteria list has any more", phrase)
		}
	}
	for _, op := range store.Ops {
		got, err := sr.LedgerColumns(context.Background(), op)
		if err != nil {
			t.Fatalf("LedgerColumns(%s): %v", op, err)
		}
		slices.Sort(got)
		want := wantColumns(t, op, fields[op])
		if !slices.Equal(got, want) {
			t.Errorf("%s ledger columns differ from the criteria's closed field list:\n got %q\nwant %q\nextra %q\nmissing %q",
				op, got, want, minus(got, want), minus(want, got))
		}
	}
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	return d
}

func fmtValue(v any) string {
	return fmt.Sprintf("%+v", v)
}
