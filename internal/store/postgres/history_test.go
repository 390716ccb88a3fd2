package postgres_test

import (
	"testing"

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
