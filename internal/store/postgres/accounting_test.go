package postgres_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

func rawConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestLedgerIsAppendOnlyInTheDatabase: whatever writes, the database refuses
// to delete or edit an entry, a refund or a cached rate; the one edit it
// allows is the pending → filled step of an entry's CAD block.
func TestLedgerIsAppendOnlyInTheDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t)
	s := open(t, dsn, postgres.Options{})
	defer s.Close()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	id := storetest.DeliverOne(t, s, now)
	if _, err := s.AddRefund(ctx, store.Refund{Op: store.OpCheck, EntryID: id, Tx: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb", Time: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRates(ctx, []store.Rate{{Date: "2026-03-02", Value: "1.3643"}}, now); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, dsn)
	for name, stmt := range map[string]string{
		"delete an entry":              `DELETE FROM ledger_check`,
		"edit a verdict line":          `UPDATE ledger_check SET verdict_line = 'x'`,
		"set the refund column":        `UPDATE ledger_check SET refund = 'r'`,
		"fill and edit the payer":      `UPDATE ledger_check SET cad_rate = '1.3', cad_rate_date = '2026-03-02', cad_pending = false, payer_wallet = 'w'`,
		"fill the rate, leave pending": `UPDATE ledger_check SET cad_rate = '1.3', cad_rate_date = '2026-03-02'`,
		"edit the network":             `UPDATE ledger_check SET payment_network = 'eip155:8453'`,
		"fill and edit the network":    `UPDATE ledger_check SET cad_rate = '1.3', cad_rate_date = '2026-03-02', cad_pending = false, payment_network = 'eip155:1'`,
		"mark filled without a rate":   `UPDATE ledger_check SET cad_pending = false`,
		"delete a refund":              `DELETE FROM refunds`,
		"edit a refund":                `UPDATE refunds SET refund_tx = 'x'`,
		"rewrite a cached rate":        `UPDATE cad_rates SET cad_per_usd = '9'`,
		"delete a cached rate":         `DELETE FROM cad_rates`,
	} {
		if _, err := conn.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused as append-only", name, err)
		}
	}
	if _, err := conn.Exec(ctx, `UPDATE ledger_check SET cad_rate = '1.3643', cad_rate_date = '2026-03-02', cad_pending = false`); err != nil {
		t.Errorf("the pending → filled step: %v", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE ledger_check SET cad_rate = '1.9', cad_rate_date = '2026-03-01'`); err == nil {
		t.Errorf("a filled entry was rewritten")
	}
}

// TestMigrationCountsEarlierFreeUse: the free-use tally starts from the calls
// a store allowed before the ledger migration.
func TestMigrationCountsEarlierFreeUse(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t)
	conn := rawConn(t, dsn)
	init, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		string(init),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (1, '0001_init')`,
		`INSERT INTO free_use VALUES ('rail-probe|wallet:a', 20514, 7, 1772409600000), ('rail-probe|addr:1', 20514, 2, 1772409600000), ('payability-verdict|wallet:a', 20513, 3, 1772323200000)`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, dsn, postgres.Options{})
	defer s.Close()
	got, err := s.Tallies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]store.DayCount{
		"rail-probe":         {{Day: "2026-03-02", Count: 9}},
		"payability-verdict": {{Day: "2026-03-01", Count: 3}},
	}
	if !reflect.DeepEqual(got.Free, want) {
		t.Errorf("Free = %v, want %v", got.Free, want)
	}
}
