package postgres_test

import (
	"testing"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

var _ store.Ecosystem = (*postgres.Store)(nil)

func TestEcosystemConformance(t *testing.T) {
	storetest.RunEcosystem(t, func(t *testing.T) storetest.Both {
		return openClosed(t, newSchema(t))
	})
}

// TestReportBackfill: migration 0011 backfills the daily state counts from
// the history already kept.
func TestReportBackfill(t *testing.T) {
	dsn := newSchema(t)
	storetest.RunReportBackfill(t, func(t *testing.T) (storetest.Both, func()) {
		s := open(t, dsn, postgres.Options{})
		return s, func() { s.Close() }
	}, func(t *testing.T) { execAll(t, dsn, storetest.ReportRollbackSQL) })
}
