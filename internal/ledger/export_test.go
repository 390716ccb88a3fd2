package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/mr-tron/base58"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// bookEntries is a small ledger of fixed entries: every op, a house proof,
// pending and filled CAD blocks, a weekend valued at Friday's rate, two
// refunds (one of a pending entry).
func bookEntries() ([]store.Entry, []store.Refund) {
	overlong := true
	base := func(id, ts string, price uint64) store.Entry {
		return store.Entry{
			ID: id, PayerWallet: "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV", Timestamp: day(ts), PriceUSDCUnits: price,
			CAD:               store.CAD{Basis: Basis, Pending: true},
			PaymentTx:         "tx-" + id,
			PaymentNetwork:    "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
			SolanaFeeLamports: 5000, CriteriaVersion: "payability-verdict@r1",
		}
	}
	fill := func(e store.Entry, rate, date string) store.Entry {
		e.CAD.Rate, e.CAD.RateDate, e.CAD.Pending = rate, date, false
		return e
	}
	c1 := fill(base("C1", "2026-03-27T10:00:00Z", 10000), "1.3810", "2026-03-27")
	c1.VerdictLine = "CHALLENGE PAYABILITY VERDICT — state: POPULATED — 2026-03-27T10:00:00Z"
	c1.Check = &store.CheckFields{PayabilityState: "POPULATED", DescriptionOverlong: overlong}
	house := fill(base("C2", "2026-03-27T11:00:00Z", 10000), "1.3810", "2026-03-27")
	house.House = true
	house.VerdictLine = "CHALLENGE PAYABILITY VERDICT — state: HEADER-MISSING — 2026-03-27T11:00:00Z"
	house.Check = &store.CheckFields{PayabilityState: "HEADER-MISSING"}
	m1 := fill(base("M1", "2026-03-28T23:59:59.999Z", 10000), "1.3810", "2026-03-27") // Saturday: Friday's rate
	m1.VerdictLine = "MEMO BINDING VERDICT — state: BOUND — 2026-03-28T23:59:59Z"
	m1.Memo = &store.MemoFields{MemoBindingState: "BOUND"}
	m1.CAD.Refund = "R1"
	p1 := fill(base("P1", "2026-03-27T12:00:00Z", 20000), "1.3810", "2026-03-27")
	p1.CriteriaVersion = "rail-probe@r1"
	// Paid on Base: an EVM transaction hash, no Solana fee, valued like
	// any other USDC (the same rate and date rule).
	p1.PaymentTx, p1.PaymentNetwork, p1.SolanaFeeLamports = "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480", "eip155:8453", 0
	p1.PayerWallet = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
	p1.VerdictLine = "RAIL PROBE VERDICT — direct: PRESENT-FAIL-CLOSED · facilitator: ABSENT — 2026-03-27T12:00:00Z"
	p1.Probe = &store.ProbeFields{DirectGrade: "PRESENT-FAIL-CLOSED", FacilitatorGrade: "ABSENT", ExposuresCount: 2}
	p2 := base("P2", "2026-03-30T09:00:00Z", 20000) // pending
	p2.CriteriaVersion = "rail-probe@r1"
	p2.VerdictLine = "RAIL PROBE VERDICT — direct: ABSENT · facilitator: ABSENT — 2026-03-30T09:00:00Z"
	p2.Probe = &store.ProbeFields{DirectGrade: "ABSENT", FacilitatorGrade: "ABSENT"}
	p2.CAD.Refund = "R2"
	refunds := []store.Refund{
		{ID: "R1", Op: store.OpMemo, EntryID: "M1", Tx: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi5Y1uEXaWzxFqqAzV7eVsy7rM8y1MypT8jKpBmmLkFAGSX", Time: day("2026-03-31T15:00:00Z")},
		{ID: "R2", Op: store.OpProbe, EntryID: "P2", Tx: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb", Time: day("2026-03-30T10:00:00Z")},
		{ID: "R9", Op: store.OpCheck, EntryID: "M1", Tx: "3Bxs4ThwQbE4vyj5SWSKW7ALGaBaQ9mYQyrdwc5DGB8k", Time: day("2026-03-31T15:00:00Z")}, // same id, other op: not M1's
	}
	// Out of order on purpose: rows come out by time.
	return []store.Entry{p2, m1, c1, p1, house}, refunds
}

func TestExportGolden(t *testing.T) {
	es, refunds := bookEntries()
	rows, err := Rows(es, refunds)
	if err != nil {
		t.Fatal(err)
	}
	var csvOut, jsonOut bytes.Buffer
	if err := WriteCSV(&csvOut, rows); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jsonOut, rows); err != nil {
		t.Fatal(err)
	}
	golden(t, "export.csv", csvOut.Bytes())
	golden(t, "export.json", jsonOut.Bytes())

	sum, err := Summarize(rows)
	if err != nil {
		t.Fatal(err)
	}
	csvOut.Reset()
	jsonOut.Reset()
	if err := WriteCSV(&csvOut, sum); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jsonOut, sum); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.csv", csvOut.Bytes())
	golden(t, "summary.json", jsonOut.Bytes())
}

func TestExportRowsCarryTheCADBlock(t *testing.T) {
	es, refunds := bookEntries()
	rows, _ := Rows(es, refunds)
	byID := map[string]Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	if r := byID["C1"]; r.CADAmount != "0.01381" || r.PriceUSD != "0.01" || r.CADRateDate != "2026-03-27" {
		t.Errorf("C1: %+v", r)
	}
	if r := byID["M1"]; r.CADRateDate != "2026-03-27" || r.Day != "2026-03-28" || r.RefundTx == "" || r.RefundedAt != "2026-03-31T15:00:00.000Z" {
		t.Errorf("M1 (a Saturday valued at Friday's rate, refunded): %+v", r)
	}
	if r := byID["P2"]; !r.CADPending || r.CADAmount != "" || r.CADRate != "" {
		t.Errorf("P2 (pending): %+v", r)
	}
	if r := byID["C1"]; r.RefundTx != "" {
		t.Errorf("a refund of another op's entry was linked to C1")
	}
	// The CSV header is the JSON names, in order, and every row has them all.
	var b bytes.Buffer
	WriteCSV(&b, rows)
	header := strings.Split(strings.SplitN(b.String(), "\n", 2)[0], ",")
	typ := reflect.TypeOf(Row{})
	if len(header) != typ.NumField() || header[0] != "op" || header[len(header)-1] != "warnings_count" {
		t.Errorf("header %v", header)
	}
}

func TestSummaryCountsSalesNotHouseProofs(t *testing.T) {
	es, refunds := bookEntries()
	rows, _ := Rows(es, refunds)
	sum, err := Summarize(rows)
	if err != nil {
		t.Fatal(err)
	}
	total := sum[len(sum)-1]
	want := SummaryRow{Day: "total", Op: "all", Sales: 4, SalesUSDCUnits: "60000", SalesUSD: "0.06", SalesCAD: "0.05524",
		CADPending: 1, Refunds: 2, RefundsUSDCUnits: "30000", RefundsCAD: "0.01381", House: 1}
	if total != want {
		t.Errorf("total\n got %+v\nwant %+v", total, want)
	}
}

// TestExportReadsTheStore: entries of every op in the date range (both days
// included), their refunds joined.
func TestExportReadsTheStore(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	before := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-03-26T23:59:59Z")})
	first := deliver(t, st, delivery{op: store.OpCheck, at: day("2026-03-27T00:00:00Z")})
	memo := deliver(t, st, delivery{op: store.OpMemo, at: day("2026-03-28T12:00:00Z")})
	last := deliver(t, st, delivery{op: store.OpProbe, at: day("2026-03-29T23:59:59.999Z")})
	deliver(t, st, delivery{op: store.OpProbe, at: day("2026-03-30T00:00:00Z")})
	r, err := Refund(ctx, st, "", memo.ID, signature(), day("2026-04-02T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Refund(ctx, st, "", before.ID, signature(), day("2026-03-27T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	rows, err := Export(ctx, st, Range{From: "2026-03-27", To: "2026-03-29"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, row := range rows {
		ids = append(ids, row.ID)
	}
	if want := []string{first.ID, memo.ID, last.ID}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("exported %v, want %v", ids, want)
	}
	if rows[1].Refund != r.ID || rows[1].RefundTx != r.Tx || rows[0].Refund != "" {
		t.Errorf("refund not joined: %+v", rows[1])
	}
	for _, bad := range []Range{{"2026-03-29", "2026-03-27"}, {"27/03/2026", "2026-03-29"}, {"2026-02-30", "2026-03-01"}} {
		if _, err := Export(ctx, st, bad); err == nil {
			t.Errorf("range %v accepted", bad)
		}
	}
}

func TestRefundFindsTheEntrysOp(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	e := deliver(t, st, delivery{op: store.OpProbe, at: day("2026-03-27T10:00:00Z")})
	tx := signature()
	at := day("2026-03-28T10:00:00Z")
	if _, err := Refund(ctx, st, store.OpCheck, e.ID, tx, at); !errors.Is(err, store.ErrNoEntry) {
		t.Errorf("refund under the wrong op: %v", err)
	}
	r, err := Refund(ctx, st, "", e.ID, tx, at)
	if err != nil || r.Op != store.OpProbe || r.EntryID != e.ID || r.Tx != tx {
		t.Fatalf("Refund = %+v, %v", r, err)
	}
	if _, err := Refund(ctx, st, "", e.ID, signature(), at); !errors.Is(err, store.ErrAlreadyRefunded) {
		t.Errorf("second refund: %v", err)
	}
	if _, err := Refund(ctx, st, "", "no-such-entry", signature(), at); !errors.Is(err, store.ErrNoEntry) {
		t.Errorf("unknown entry: %v", err)
	}
	// A 65-byte value: one byte more than a signature, whatever the random draw
	// (a random signature with a digit appended can still decode to 64 bytes).
	tooLong := base58.Encode(bytes.Repeat([]byte{0xff}, 65))
	for _, tx := range []string{"", "https://seller.example/", "pbl1.ck.q7Rr2hV0bXo9Zl1cN4yT8wJm3Kd5HsAe", "1111", tooLong} {
		if _, err := Refund(ctx, st, "", e.ID, tx, at); !errors.Is(err, ErrRefundTx) {
			t.Errorf("tx %q: %v, want ErrRefundTx", tx, err)
		}
	}
	if _, err := Refund(ctx, st, "scan", e.ID, signature(), at); err == nil {
		t.Errorf("an unknown op was accepted")
	}
}

func TestStatusRendering(t *testing.T) {
	tl := store.Tallies{
		Sales:     map[store.Op][]store.DayCount{store.OpCheck: counts("2026-06-01", 30, "2026-06-20", 10), store.OpMemo: counts("2026-06-21", 2)},
		Refunds:   map[store.Op][]store.DayCount{store.OpCheck: counts("2026-06-22", 3)},
		Free:      map[string][]store.DayCount{"payability-verdict": counts("2026-06-25", 100), "rail-probe": counts("2026-06-25", 7)},
		FirstSale: map[store.Op]time.Time{store.OpCheck: day("2026-06-01T09:30:00Z"), store.OpMemo: day("2026-06-21T00:00:01Z")},
	}
	s := Evaluate(tl, map[string]bool{"payability-verdict": true, "rail-probe": false}, day("2026-06-30T12:00:00Z"))
	var text, js bytes.Buffer
	if err := WriteStatus(&text, s); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	golden(t, "tripwires.txt", text.Bytes())
	golden(t, "tripwires.json", js.Bytes())
}
