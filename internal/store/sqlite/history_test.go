package sqlite_test

import (
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
