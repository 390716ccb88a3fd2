package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

var _ store.History = (*sqlite.Store)(nil)

func openClosed(t *testing.T, path string) *sqlite.Store {
	s := open(t, path)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestHistoryConformance(t *testing.T) {
	storetest.RunHistory(t, func(t *testing.T) store.History {
		return openClosed(t, filepath.Join(t.TempDir(), "payability.db"))
	})
}

// TestHistoryInstances: two stores on one file stand for two processes.
func TestHistoryInstances(t *testing.T) {
	storetest.RunHistoryInstances(t, func(t *testing.T) (store.History, store.History) {
		path := filepath.Join(t.TempDir(), "payability.db")
		return openClosed(t, path), openClosed(t, path)
	})
}

// TestSummaryBackfill: migration 0007 backfills the summary from the
// history already kept.
func TestSummaryBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	storetest.RunSummaryBackfill(t, func(t *testing.T) (store.History, func()) {
		s := open(t, path)
		return s, func() { s.Close() }
	}, func(t *testing.T) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range append(storetest.PaymentNetworkRollbackSQL["sqlite"], storetest.SummaryRollbackSQL...) {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	})
}
