package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

var _ store.Ecosystem = (*sqlite.Store)(nil)

func TestEcosystemConformance(t *testing.T) {
	storetest.RunEcosystem(t, func(t *testing.T) storetest.Both {
		return openClosed(t, filepath.Join(t.TempDir(), "payability.db"))
	})
}

// TestReportBackfill: migration 0011 backfills the daily state counts from
// the history already kept.
func TestReportBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	storetest.RunReportBackfill(t, func(t *testing.T) (storetest.Both, func()) {
		s := open(t, path)
		return s, func() { s.Close() }
	}, func(t *testing.T) { execAll(t, path, storetest.ReportRollbackSQL) })
}
