package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newSchema gives the test an empty schema of its own (pgtest.Schema).
func newSchema(t *testing.T) string {
	dsn, _ := pgtest.Schema(t)
	return dsn
}

func open(t *testing.T, dsn string, opts postgres.Options) *postgres.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, newSchema(t), postgres.Options{})
	})
}

func TestInstances(t *testing.T) {
	storetest.RunInstances(t, func(t *testing.T) (store.Store, store.Store) {
		dsn := newSchema(t)
		return open(t, dsn, postgres.Options{}), open(t, dsn, postgres.Options{})
	})
}

// TestInstancesStartingTogetherMigrateOnce: the advisory lock serializes the
// migrations of instances opening one empty database at once.
func TestInstancesStartingTogetherMigrateOnce(t *testing.T) {
	dsn := newSchema(t)
	const n = 6
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(context.Background(), dsn, postgres.Options{})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		stores[i].Close()
	}
	if err := postgres.Migrate(context.Background(), dsn); err != nil {
		t.Errorf("Migrate on a migrated database: %v", err)
	}
}

// TestDBClock: with UseDBClock the free tier ignores the time it is given, so
// instances with wrong clocks still share one interval.
func TestDBClock(t *testing.T) {
	dsn := newSchema(t)
	a := open(t, dsn, postgres.Options{UseDBClock: true})
	defer a.Close()
	b := open(t, dsn, postgres.Options{UseDBClock: true})
	defer b.Close()
	ctx := context.Background()

	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	d, err := a.TakeFree(ctx, "wallet-a", past, 100, 5*time.Second)
	if err != nil || !d.Allowed || d.UsedToday != 1 {
		t.Fatalf("first call = %+v, %v; want allowed, UsedToday 1", d, err)
	}
	// An instance whose clock runs a day ahead is still within the interval.
	d, err = b.TakeFree(ctx, "wallet-a", time.Now().Add(24*time.Hour), 100, 5*time.Second)
	if err != nil || d.Allowed || d.Reason != store.FreeMinInterval || d.RetryAfter <= 0 || d.RetryAfter > 5*time.Second {
		t.Fatalf("second call = %+v, %v; want refused min_interval within 5s", d, err)
	}
	// No clock given at all is fine too.
	if d, err := b.TakeFree(ctx, "wallet-b", time.Time{}, 100, 5*time.Second); err != nil || !d.Allowed {
		t.Fatalf("call without a clock = %+v, %v; want allowed", d, err)
	}
}

func TestOpenRefusesABadDSNWithoutEchoingIt(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://user:s3cret-pw@127.0.0.1:5432/test?sslmode=bogus", postgres.Options{})
	if err == nil {
		t.Fatal("Open accepted a bad DSN")
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("the error echoes the password: %v", err)
	}
}

// TestRowsStayBounded: the load on PostgreSQL; the free-tier rows
// are pruned to the last two days (storetest.Growth checks the counts).
func TestRowsStayBounded(t *testing.T) {
	s := open(t, newSchema(t), postgres.Options{})
	defer s.Close()
	storetest.Growth(t, s, func(*testing.T, int) {})
}
