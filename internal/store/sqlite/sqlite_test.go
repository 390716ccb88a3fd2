package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "payability.db"))
	})
}

// TestInstances: two stores on one file stand for two processes.
func TestInstances(t *testing.T) {
	storetest.RunInstances(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "payability.db")
		return open(t, path), open(t, path)
	})
}

func TestOpenCreatesAPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	s := open(t, path)
	defer s.Close()
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode = %v, want 0600", filepath.Base(p), got)
		}
	}
}

// TestReopenKeepsTheLedger: migrations are idempotent and data survives.
func TestReopenKeepsTheLedger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payability.db")
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s := open(t, path)
	if _, err := s.TakeFree(ctx, "wallet-a", now, 100, 5*time.Second); err != nil {
		t.Fatalf("TakeFree: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t, path)
	defer s.Close()
	d, err := s.TakeFree(ctx, "wallet-a", now.Add(time.Second), 100, 5*time.Second)
	if err != nil || d.Allowed || d.UsedToday != 1 {
		t.Errorf("after reopen: %+v, %v; want refused with UsedToday 1", d, err)
	}
}

// TestProcessesStartingTogether: several opens of one new file at once all
// succeed, the migrations applied once (BEGIN IMMEDIATE serializes them).
func TestProcessesStartingTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	const n = 6
	var wg sync.WaitGroup
	stores := make([]*sqlite.Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlite.Open(context.Background(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		stores[i].Close()
	}
}

func TestOpenWantsAPlainPath(t *testing.T) {
	for _, p := range []string{"", "file:x.db", "x.db?mode=memory"} {
		if s, err := sqlite.Open(context.Background(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q) accepted", p)
		}
	}
}

// TestWALStaysBounded: the load (3,000 free pre-checks and 3,000
// paid deliveries) keeps the -wal file under 8 MB throughout; before the
// one-row queries were stepped to completion it grew by about 13 kB per
// pre-check, past 40 MB.
func TestWALStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	s := open(t, path)
	defer s.Close()
	const limit = 8 << 20
	var peak int64
	storetest.Growth(t, s, func(t *testing.T, i int) {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatalf("stat -wal: %v", err)
		}
		peak = max(peak, fi.Size())
		if fi.Size() >= limit {
			t.Fatalf("after %d of each: -wal is %d bytes, want under %d", i, fi.Size(), limit)
		}
	})
	t.Logf("peak -wal size %d bytes", peak)
}

// TestPruneTruncatesTheLog: the prune job's checkpoint leaves a zero-byte
// -wal file behind it.
func TestPruneTruncatesTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payability.db")
	s := open(t, path)
	defer s.Close()
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i := range 50 {
		if _, err := s.TakeFree(ctx, "svc|wallet-"+strconv.Itoa(i), now, 100, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("-wal before the prune: %v, size %d; want some log", err, fi.Size())
	}
	if _, err := s.Prune(ctx, now); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() != 0 {
		t.Errorf("-wal after the prune: %v, size %d; want 0", err, fi.Size())
	}
}
