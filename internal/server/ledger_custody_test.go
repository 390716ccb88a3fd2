package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ledger"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
)

// lgHarnessOn is newHarness on a given store: the same server, gate and fake
// chain, so the ledger's custody can be proven on every backend.
func lgHarnessOn(t *testing.T, st store.Store) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}, store: st}
	var rpcURL string
	h.chain, rpcURL = newFakeChain(t)
	client, err := solana.New(rpcURL, nil, "confirmed")
	if err != nil {
		t.Fatal(err)
	}
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h.keys = report.NewKeySet(key)
	h.gate = &gate.Gate{
		Terms:  gate.Terms{Network: gate.Mainnet, PayTo: testPayTo, TokenAccount: testTokenAccount, MaxTimeoutSeconds: 120},
		Offers: testOffers(),
		Memos:  gate.Memos{Key: bytes.Repeat([]byte{7}, 32), Now: h.clock.Now, Rand: rand.Reader},
		Direct: gate.SolanaRail{Client: client, TokenAccount: testTokenAccount, Mint: gate.Mainnet.Mint},
		Store:  st, Now: h.clock.Now, LeaseFor: 90 * time.Second,
	}
	h.s, err = New(Config{
		Service: ServeAll, Gate: h.gate,
		Runner: ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: h.clock.Now},
		Key:    key, KeySet: h.keys, Store: st, Registry: prometheus.NewRegistry(), Now: h.clock.Now,
		Logger: newTestLogger(h.logs), ClientLimiter: NewLimiter(1000, 1000, h.clock.Now), ReadyCorpus: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(h.s)
	t.Cleanup(h.srv.Close)
	return h
}

// lgValet is a Bank of Canada Valet API on loopback publishing the Friday
// and Monday around the harness's Sunday.
func lgValet(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"observations":[{"d":"2026-11-27","FXUSDCAD":{"v":"1.3912"}},{"d":"2026-11-30","FXUSDCAD":{"v":"1.3899"}}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestLedgerCustodyOnEveryBackend runs a batch of paid calls whose targets
// serve a canary, free calls, a backfill and a refund, then searches the
// whole database, every table of it (and on SQLite the files, -wal
// included), plus /metrics: no called URL, no memo, no canary, and no hash
// of one appears anywhere.
func TestLedgerCustodyOnEveryBackend(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "payability.db")
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		lgCustody(t, st, func() []string {
			dump := lgDumpSQLite(t, path)
			st.Close()
			for _, f := range []string{path, path + "-wal", path + "-shm"} {
				if b, err := os.ReadFile(f); err == nil {
					dump = append(dump, string(b))
				}
			}
			return dump
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgSchema(t)
		st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		lgCustody(t, st, func() []string { return lgDumpPG(t, dsn) })
	})
}

func lgCustody(t *testing.T, st store.Store, dump func() []string) {
	ctx := context.Background()
	h := lgHarnessOn(t, st)
	const canary = "CANARY-4c1d-ledger-custody"
	mux := http.NewServeMux()
	mux.HandleFunc("/paid/"+canary, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Canary", canary)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(`{"accepts":[{"extra":{"memo":"`+canary+`"}}]}`)))
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprintf(w, `{"x402Version":1,"error":%q,"accepts":[{"scheme":"exact","network":"solana","amount":"1","payTo":%q,"resource":%q,"description":%q,"extra":{"memo":%q}}],"memo":%q}`,
			canary, canary, canary, canary, canary, canary)
	})
	mux.HandleFunc("/open", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"result":"`+canary+`"}`)
	})
	seller := httptest.NewServer(mux)
	defer seller.Close()

	// The client address keys the free tier by design (issue 3); the
	// seller's address and port are what no row may hold.
	var memos, urls []string
	for _, path := range []string{"/paid/" + canary + "?q=" + canary + "#frag", "/open"} {
		for _, route := range allPaidRoutes {
			res, _, memo := h.payAndPost(route, seller.URL+path)
			if res.status != http.StatusOK {
				t.Fatalf("%s %s: %d %s", route, path, res.status, res.body)
			}
			memos = append(memos, memo)
			urls = append(urls, seller.URL+path)
			h.clock.Add(time.Second)
		}
		h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":%q,"caller":"wallet-a"}`, seller.URL+path), nil)
		h.do(http.MethodPost, "/toll/rail-probe/precheck", fmt.Sprintf(`{"url":%q}`, seller.URL+path), nil)
		h.do(http.MethodPost, "/toll/x402/precheck", fmt.Sprintf(`{"url":%q,"op":"lint"}`, seller.URL+path), nil)
		h.clock.Add(10 * time.Second)
	}

	// The accounting: the Sunday entries take Friday's rate once Monday's
	// is out; one refund.
	res, err := ledger.Backfiller{Store: st, Rates: ledger.Valet{BaseURL: lgValet(t)},
		Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}.Run(ctx)
	if want := 2 * len(allPaidRoutes); err != nil || res.Filled != want {
		t.Fatalf("backfill = %+v, %v; want %d filled", res, err, want)
	}
	es, err := st.Entries(ctx, store.OpProbe, time.Time{}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || len(es) != 2 || es[0].CAD.RateDate != "2026-11-27" || es[0].CAD.Basis != CADBasis {
		t.Fatalf("probe entries %+v, %v", es, err)
	}
	if _, err := ledger.Refund(ctx, st, "", es[0].ID, h.chain.payNothing(), h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	metrics := h.do(http.MethodGet, "/metrics", "", nil)
	if !strings.Contains(string(metrics.body), "payability_refund_ratio") || !strings.Contains(string(metrics.body), "payability_corpus_passing") {
		t.Errorf("/metrics lacks the ledger's gauges")
	}

	sum := sha256.Sum256([]byte(canary))
	needles := []string{canary, hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:]),
		base64.StdEncoding.EncodeToString([]byte(canary)), "://", strings.TrimPrefix(seller.URL, "http://"), "pbl1."}
	for _, u := range urls {
		s := sha256.Sum256([]byte(u))
		needles = append(needles, u, url.QueryEscape(u), hex.EncodeToString(s[:]))
	}
	for _, m := range memos {
		s := sha256.Sum256([]byte(m))
		needles = append(needles, m, hex.EncodeToString(s[:]), base64.StdEncoding.EncodeToString(s[:]))
	}
	searched := append(dump(), string(metrics.body))
	all := strings.Join(searched, "\n")
	// The dump is a real one: it holds the ledger's own values.
	for _, want := range []string{es[0].PaymentTx, "1.3912", "2026-11-27", es[0].VerdictLine} {
		if !strings.Contains(all, want) {
			t.Fatalf("the dump does not hold the ledger's %q (%d bytes)", want, len(all))
		}
	}
	for _, n := range needles {
		if i := strings.Index(all, n); i >= 0 {
			t.Errorf("custody: %.60q found in the database or /metrics near %.80q", n, all[max(0, i-40):min(len(all), i+40)])
		}
	}
}

// lgDumpSQLite reads every row of every table as text.
func lgDumpSQLite(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var out []string
	for _, table := range tables {
		out = append(out, lgDumpRows(t, db, `SELECT * FROM "`+table+`"`)...)
	}
	if len(tables) < 8 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	return out
}

// lgDumpRows reads every column of every row of query as text.
func lgDumpRows(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				out = append(out, string(b))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lgDumpPG reads every row of every table of the schema as text.
func lgDumpPG(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 8 {
		t.Fatalf("tables %v, %v", tables, err)
	}
	var out []string
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM "`+table+`" AS t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, texts...)
	}
	return out
}
