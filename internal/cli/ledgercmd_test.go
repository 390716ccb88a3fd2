//go:build !quick

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/exchangerebel/payability/internal/ledger"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// ledgerValet is a Bank of Canada Valet API on loopback: a Friday and the
// Monday after, and it counts the requests.
func ledgerValet(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/valet/observations/FXUSDCAD/json" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"observations":[{"d":"2026-03-27","FXUSDCAD":{"v":"1.3810"}},{"d":"2026-03-30","FXUSDCAD":{"v":"1.3795"}}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/valet", &n
}

func ledgerSig() string {
	b := make([]byte, 64)
	rand.Read(b)
	return base58.Encode(b)
}

// ledgerSeed delivers paid calls into the data directory's store the way the
// server does, and returns their entries.
func ledgerSeed(t *testing.T, dir string, calls ...ledgerCall) []store.Entry {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "payability.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var es []store.Entry
	for _, c := range calls {
		tx := ledgerSig()
		sum := sha256.Sum256([]byte(tx))
		r, err := st.Claim(ctx, store.Claim{Rail: "direct", Tx: tx, MemoDigest: hex.EncodeToString(sum[:]), Op: c.op,
			Payer: "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV", Amount: 10000, FeeLamports: 5000,
			Now: c.at, LeaseFor: time.Minute, ResumeWindow: 15 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		e := store.Entry{PayerWallet: "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV", Timestamp: c.at, PriceUSDCUnits: 10000,
			CAD: store.CAD{Basis: ledger.Basis, Pending: true}, PaymentTx: tx, PaymentNetwork: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", SolanaFeeLamports: 5000,
			CriteriaVersion: "payability-verdict@r1", VerdictLine: "verdict line", House: c.house}
		switch c.op {
		case store.OpCheck:
			e.Check = &store.CheckFields{PayabilityState: "POPULATED"}
		case store.OpMemo:
			e.Memo = &store.MemoFields{MemoBindingState: "BOUND"}
		case store.OpProbe:
			e.Probe = &store.ProbeFields{DirectGrade: "PRESENT-FAIL-CLOSED", FacilitatorGrade: "ABSENT"}
		}
		if err := st.Deliver(ctx, r.PaymentID, r.LeaseToken, e); err != nil {
			t.Fatal(err)
		}
		e.ID = r.PaymentID
		es = append(es, e)
	}
	return es
}

type ledgerCall struct {
	op    store.Op
	at    time.Time
	house bool
}

func ledgerRun(t *testing.T, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }}
	code := e.Run(context.Background(), append([]string{"ledger"}, args...))
	return code, out.String(), errb.String()
}

func TestLedgerBackfillExportRefund(t *testing.T) {
	dir := t.TempDir()
	valet, requests := ledgerValet(t)
	sat := time.Date(2026, 3, 28, 15, 0, 0, 0, time.UTC)
	es := ledgerSeed(t, dir,
		ledgerCall{op: store.OpCheck, at: time.Date(2026, 3, 27, 10, 0, 0, 0, time.UTC)},
		ledgerCall{op: store.OpMemo, at: sat},
		ledgerCall{op: store.OpProbe, at: time.Date(2026, 3, 31, 9, 0, 0, 0, time.UTC)}, // not published yet
	)
	monday := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)

	code, out, errOut := ledgerRun(t, monday, "backfill", "--data-dir", dir, "--rates-url", valet)
	if code != ExitOK || !strings.Contains(out, "3 pending, 2 filled, 1 still pending") {
		t.Fatalf("backfill: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = ledgerRun(t, monday, "backfill", "--data-dir", dir, "--rates-url", valet)
	if code != ExitOK || !strings.Contains(out, "1 pending, 0 filled") {
		t.Errorf("second backfill: exit %d %s", code, out)
	}
	if requests.Load() != 2 {
		t.Errorf("%d requests to the rate source, want 2 (the probe entry's date is still unpublished)", requests.Load())
	}

	// A refund of the Saturday memo entry, found by its id alone.
	code, out, errOut = ledgerRun(t, monday, "refund", es[1].ID, "--tx", ledgerSig(), "--data-dir", dir)
	if code != ExitOK || !strings.Contains(out, "against memo entry "+es[1].ID) {
		t.Fatalf("refund: exit %d %s%s", code, out, errOut)
	}
	for name, args := range map[string][]string{
		"again":           {"refund", es[1].ID, "--tx", ledgerSig()},
		"no such entry":   {"refund", "NOSUCHENTRY", "--tx", ledgerSig()},
		"wrong op":        {"refund", es[0].ID, "--tx", ledgerSig(), "--op", "probe"},
		"tx not base58":   {"refund", es[0].ID, "--tx", "https://seller.example/"},
		"tx not 64 bytes": {"refund", es[0].ID, "--tx", "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb"},
	} {
		if code, out, errOut := ledgerRun(t, monday, append(args, "--data-dir", dir)...); code != ExitRefused {
			t.Errorf("refund %s: exit %d %s%s, want %d", name, code, out, errOut, ExitRefused)
		}
	}
	if code, _, _ := ledgerRun(t, monday, "refund", es[0].ID, "--data-dir", dir); code != exitUsage {
		t.Errorf("refund without --tx: exit %d", code)
	}

	// The export: one row per entry, a header row, the CAD block.
	code, out, errOut = ledgerRun(t, monday, "export", "--from", "2026-03-27", "--to", "2026-03-31", "--data-dir", dir)
	if code != ExitOK {
		t.Fatalf("export: exit %d %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 || recs[0][0] != "op" {
		t.Fatalf("export CSV: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	memo := recs[2]
	if memo[col["id"]] != es[1].ID || memo[col["cad_rate"]] != "1.3810" || memo[col["cad_rate_date"]] != "2026-03-27" ||
		memo[col["cad_amount"]] != "0.01381" || memo[col["refund"]] == "" || memo[col["refund_tx"]] == "" {
		t.Errorf("the Saturday memo row: %v", memo)
	}
	if probe := recs[3]; probe[col["cad_pending"]] != "true" || probe[col["cad_amount"]] != "" {
		t.Errorf("the pending probe row: %v", probe)
	}
	// The same as JSON; and a range that holds only the Friday.
	code, out, _ = ledgerRun(t, monday, "export", "--from", "2026-03-27", "--to", "2026-03-27", "--format", "json", "--data-dir", dir)
	var rows []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0]["cad_amount"] != "0.01381" {
		t.Errorf("export JSON: exit %d %s", code, out)
	}
	code, out, _ = ledgerRun(t, monday, "export", "--from", "2026-03-01", "--to", "2026-03-31", "--summary", "--data-dir", dir)
	if code != ExitOK || !strings.Contains(out, "total,all,3,30000,0.03,0.02762,1,1,10000,0.01381,0") {
		t.Errorf("summary: exit %d\n%s", code, out)
	}
	for name, args := range map[string][]string{
		"reversed range": {"export", "--from", "2026-03-31", "--to", "2026-03-01"},
		"bad date":       {"export", "--from", "31/03/2026", "--to", "2026-03-31"},
		"no --to":        {"export", "--from", "2026-03-01"},
		"bad format":     {"export", "--from", "2026-03-01", "--to", "2026-03-31", "--format", "xml"},
	} {
		if code, _, _ := ledgerRun(t, monday, append(args, "--data-dir", dir)...); code != exitUsage {
			t.Errorf("export %s: exit %d, want %d", name, code, exitUsage)
		}
	}
}

func TestLedgerTripwires(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	// Only a house proof: no Day-0, nothing armed, nothing fired.
	ledgerSeed(t, dir, ledgerCall{op: store.OpCheck, at: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC), house: true})
	code, out, errOut := ledgerRun(t, now, "tripwires", "--data-dir", dir)
	if code != ExitOK || !strings.Contains(out, "Day-0 (first outside paid settlement, house proofs never count): not yet") ||
		!strings.Contains(out, "corpus    ok") {
		t.Fatalf("tripwires: exit %d\n%s%s", code, out, errOut)
	}

	// Ten outside sales and one refund: 10% of paid calls, over 5%.
	var calls []ledgerCall
	for i := range 10 {
		calls = append(calls, ledgerCall{op: store.OpProbe, at: time.Date(2026, 6, 10, 9, i, 0, 0, time.UTC)})
	}
	es := ledgerSeed(t, dir, calls...)
	if code, _, errOut := ledgerRun(t, now, "refund", es[0].ID, "--tx", ledgerSig(), "--data-dir", dir); code != ExitOK {
		t.Fatalf("refund: %s", errOut)
	}
	code, out, _ = ledgerRun(t, now, "tripwires", "--format", "json", "--data-dir", dir)
	var s ledger.Status
	if code != ExitUnexpected || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("tripwires: exit %d, want %d\n%s", code, ExitUnexpected, out)
	}
	if s.Day0 == nil || !s.Day0.Equal(time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)) || !s.Fired {
		t.Errorf("status %+v", s)
	}
	rp := s.Services[1]
	if rp.Service != "rail-probe" || !rp.Tripwires[0].Fired || rp.Tripwires[0].Current.Count != 1 || rp.Tripwires[0].Current.Paid != 10 {
		t.Errorf("rail-probe refunds tripwire %+v", rp.Tripwires[0])
	}
	if s.Services[0].Day0 != nil {
		t.Errorf("payability-verdict has only a house proof, yet a Day-0")
	}
}

func TestLedgerUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"audit"}, {"backfill", "extra"}, {"tripwires", "--format", "xml"}, {"refund"}} {
		if code, _, _ := ledgerRun(t, time.Now(), args...); code != exitUsage {
			t.Errorf("ledger %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := ledgerRun(t, time.Now(), "--help"); code != ExitOK || !strings.Contains(out, "ledger export") {
		t.Errorf("help: %d %s", code, out)
	}
	if code, _, errOut := ledgerRun(t, time.Now(), "backfill", "--rates-url", "", "--data-dir", t.TempDir()); code != exitUsage || !strings.Contains(errOut, "--rates-url") {
		t.Errorf("empty --rates-url: %d %s", code, errOut)
	}
}

// TestServeRunsTheBackfill: serve fills a pending entry at start from
// --rates-url (a loopback Valet), and its cleanup stops the backfill before
// closing the store.
func TestServeRunsTheBackfill(t *testing.T) {
	dir := t.TempDir()
	es := ledgerSeed(t, dir, ledgerCall{op: store.OpCheck, at: time.Date(2026, 3, 28, 15, 0, 0, 0, time.UTC)})
	valet, _ := ledgerValet(t)
	var errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &syncWriter{w: &errb},
		Now: func() time.Time { return time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC) }}
	f := serveFlags{addr: "127.0.0.1:0", dataDir: dir, service: "all", payTo: wallet, tokenAccount: account,
		solanaRPC: fakeRPC(t), network: "solana", commitment: "confirmed", maxTimeout: 120, ratesURL: valet}
	_, cleanup, err := buildServer(context.Background(), e, f)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // turns a hang into a failure only
	var got store.CAD
	for time.Now().Before(deadline) {
		got = ledgerCAD(t, dir, es[0].ID)
		if !got.Pending {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cleanup()
	if got.Pending || got.Rate != "1.3810" || got.RateDate != "2026-03-27" {
		t.Errorf("after serve's backfill the entry's CAD is %+v; want Friday's rate", got)
	}
}

func ledgerCAD(t *testing.T, dir, id string) store.CAD {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "payability.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	es, err := st.Entries(context.Background(), store.OpCheck, time.Time{}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.ID == id {
			return e.CAD
		}
	}
	t.Fatalf("entry %s not found", id)
	return store.CAD{}
}
