package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
		execAll(t, path, append(slices.Clone(storetest.PaymentNetworkRollbackSQL["sqlite"]), storetest.SummaryRollbackSQL...))
	})
}

// execAll runs qs on the database at path, every store closed.
func execAll(t *testing.T, path string, qs []string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

var _ store.EndpointCatalog = (*sqlite.Store)(nil)

func TestEndpointsConformance(t *testing.T) {
	storetest.RunEndpoints(t, func(t *testing.T) storetest.Catalog {
		return openClosed(t, filepath.Join(t.TempDir(), "payability.db"))
	})
}

// TestEndpointLimitAt100000: the store's limit itself, at its edge: with
// 99,999 active endpoints (written in bulk, beside one retired) one more is
// admitted, and the next is refused and writes nothing.
func TestEndpointLimitAt100000(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 endpoints")
	}
	path := filepath.Join(t.TempDir(), "payability.db")
	openClosed(t, path).Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < $1)
INSERT INTO endpoints (id, url, method, body, ops, every_s, network, max_amount, status_op, retired_ms)
SELECT 'f' || n, 'https://x.example/', 'GET', '', 'check', 3600, '', '', '', CASE WHEN n = 1 THEN 1 ELSE 0 END FROM c`, store.MaxEndpoints); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := openClosed(t, path)
	ctx := context.Background()
	rec := func(id string) []store.EndpointRecord {
		return []store.EndpointRecord{{ID: id, URL: "https://x.example/", Method: "GET", Ops: []string{"check"}, Every: time.Hour}}
	}
	p := store.PutEndpoints{Source: store.SourceAPI, Seen: time.Now(), Max: store.MaxEndpoints}
	if err := s.PutEndpoints(ctx, rec("last"), p); err != nil {
		t.Fatalf("the 100,000th: %v", err)
	}
	if err := s.PutEndpoints(ctx, rec("over"), p); !errors.Is(err, store.ErrTooManyEndpoints) {
		t.Fatalf("the 100,001st: %v, want ErrTooManyEndpoints", err)
	}
	if _, total, err := s.ListEndpoints(ctx, store.EndpointQuery{Limit: 1}); err != nil || total != store.MaxEndpoints {
		t.Errorf("active = %d, %v; want %d", total, err, store.MaxEndpoints)
	}
	if _, ok, _ := s.Endpoint(ctx, "over"); ok {
		t.Error("the refused endpoint was written")
	}
	// The whole active set in one read (the scheduler's): its sources are
	// read in batches, never one IN list past the driver's parameter limit.
	all, _, err := s.ListEndpoints(ctx, store.EndpointQuery{})
	if err != nil || len(all) != store.MaxEndpoints {
		t.Fatalf("the whole set: %d endpoints, %v; want %d", len(all), err, store.MaxEndpoints)
	}
	if last := all[len(all)-1]; last.ID != "last" || !slices.Equal(last.Sources, []string{store.SourceAPI}) {
		t.Errorf("the last of the whole set: %s with sources %v", last.ID, last.Sources)
	}
}
