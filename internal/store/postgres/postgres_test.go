package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// defaultDSN is the test database of the CI machine: local, trust auth.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testDSN is the database the tests use: PAYABILITY_TEST_PG, or defaultDSN.
// A missing database fails the tests: the PostgreSQL backend is never
// skipped.
func testDSN() string {
	if dsn := os.Getenv("PAYABILITY_TEST_PG"); dsn != "" {
		return dsn
	}
	return defaultDSN
}

// newSchema creates an empty schema of its own for one test, dropped when the
// test ends, and returns a DSN that selects it.
func newSchema(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, testDSN())
	if err != nil {
		t.Fatalf("PostgreSQL is required (PAYABILITY_TEST_PG, default %s) and is not reachable: %v", defaultDSN, err)
	}
	defer admin.Close(context.Background())
	b := make([]byte, 8)
	rand.Read(b)
	schema := "payability_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, testDSN())
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, testDSN(), schema)
}

func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("PAYABILITY_TEST_PG is not a valid URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
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
