// Package pgtest gives each test a PostgreSQL schema of its own on the test
// database (PAYABILITY_TEST_PG, default the CI machine's local database with
// trust auth), dropped when the test ends. A missing PostgreSQL fails the
// test: the PostgreSQL backend is never skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDSN is the test database of the CI machine: local, trust auth.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN is the test database: PAYABILITY_TEST_PG, or DefaultDSN.
func DSN() string {
	if dsn := os.Getenv("PAYABILITY_TEST_PG"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// Schema creates an empty schema for one test (or benchmark), dropped when it
// ends, and returns a DSN selecting it and the schema's name.
func Schema(tb testing.TB) (dsn, schema string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, DSN())
	if err != nil {
		tb.Fatalf("PostgreSQL is required (PAYABILITY_TEST_PG, default %s) and is not reachable: %v", DefaultDSN, err)
	}
	defer admin.Close(context.Background())
	b := make([]byte, 8)
	rand.Read(b)
	schema = "payability_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, DSN())
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return WithSearchPath(tb, DSN(), schema), schema
}

// WithSearchPath returns dsn selecting schema, in URL or key=value form.
func WithSearchPath(tb testing.TB, dsn, schema string) string {
	tb.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal("PAYABILITY_TEST_PG is not a valid URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
