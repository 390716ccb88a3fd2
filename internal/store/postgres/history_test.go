package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

var _ store.History = (*postgres.Store)(nil)

func openClosed(t *testing.T, dsn string) *postgres.Store {
	s := open(t, dsn, postgres.Options{})
	t.Cleanup(func() { s.Close() })
	return s
}

func TestHistoryConformance(t *testing.T) {
	storetest.RunHistory(t, func(t *testing.T) store.History {
		return openClosed(t, newSchema(t))
	})
}

// TestHistoryInstances: two instances on one database.
func TestHistoryInstances(t *testing.T) {
	storetest.RunHistoryInstances(t, func(t *testing.T) (store.History, store.History) {
		dsn := newSchema(t)
		return openClosed(t, dsn), openClosed(t, dsn)
	})
}

// TestSummaryBackfill: migration 0007 backfills the summary from the
// history already kept.
func TestSummaryBackfill(t *testing.T) {
	dsn := newSchema(t)
	storetest.RunSummaryBackfill(t, func(t *testing.T) (store.History, func()) {
		s := open(t, dsn, postgres.Options{})
		return s, func() { s.Close() }
	}, func(t *testing.T) {
		execAll(t, dsn, append(slices.Clone(storetest.PaymentNetworkRollbackSQL["postgres"]), storetest.SummaryRollbackSQL...))
	})
}

// execAll runs qs on the database at dsn, every store closed.
func execAll(t *testing.T, dsn string, qs []string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range qs {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

var _ store.EndpointCatalog = (*postgres.Store)(nil)

func TestEndpointsConformance(t *testing.T) {
	storetest.RunEndpoints(t, func(t *testing.T) storetest.Catalog {
		return openClosed(t, newSchema(t))
	})
}
