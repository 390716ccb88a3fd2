package cli

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
)

// pgSchema gives the test an empty schema of its own; the CLI tests need
// the URL form of the DSN.
func pgSchema(t *testing.T) (dsn, schema string) {
	dsn, schema = pgtest.Schema(t)
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		t.Fatal("PAYABILITY_TEST_PG must be a postgres:// URL for the CLI tests")
	}
	return dsn, schema
}

func tablesOf(t *testing.T, schema string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestStoreMigratePostgres(t *testing.T) {
	dsn, schema := pgSchema(t)
	if got := tablesOf(t, schema); len(got) != 0 {
		t.Fatalf("fresh schema has tables %v", got)
	}
	stdout, stderr, code := runCLI(t, nil, false, nil, "store", "migrate", "--store", dsn)
	if code != ExitOK || !strings.Contains(stdout, "postgres schema is current") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	got := tablesOf(t, schema)
	for _, want := range []string{"free_use", "payments", "ledger_check", "ledger_memo", "ledger_probe", "schema_migrations",
		"observations", "river_job", "river_leader", "river_migration"} {
		if !slices.Contains(got, want) {
			t.Errorf("after migrate the schema lacks %s (has %v)", want, got)
		}
	}
	if strings.Contains(stdout+stderr, schema) {
		t.Errorf("the output echoes the connection string: %q %q", stdout, stderr)
	}

	t.Run("again, from PAYABILITY_STORE, is a no-op", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, nil, false, map[string]string{"PAYABILITY_STORE": dsn}, "store", "migrate")
		if code != ExitOK || !strings.Contains(stdout, "postgres") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if after := tablesOf(t, schema); !slices.Equal(after, got) {
			t.Errorf("tables %v, want %v", after, got)
		}
	})

	t.Run("serve's store opens the migrated schema", func(t *testing.T) {
		st, err := postgres.Open(context.Background(), dsn, postgres.Options{UseDBClock: true})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	})
}

func TestStoreMigrateSQLite(t *testing.T) {
	t.Run("default: the data directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		stdout, stderr, code := runCLI(t, nil, false, nil, "store", "migrate", "--data-dir", dir)
		want := filepath.Join(dir, "payability.db")
		if code != ExitOK || !strings.Contains(stdout, "sqlite "+want) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		st, err := os.Stat(want)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", want, err, st)
		}
		if d, err := os.Stat(dir); err != nil || d.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, mode %v; want 0700", dir, err, d)
		}
	})
	t.Run("sqlite:PATH", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		for range 2 {
			if stdout, stderr, code := runCLI(t, nil, false, map[string]string{"PAYABILITY_STORE": "sqlite:" + path}, "store", "migrate"); code != ExitOK {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		}
		if _, err := os.Stat(path); err != nil {
			t.Error(err)
		}
		// River's tables are in the same file as ours.
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, table := range []string{"observations", "river_job", "river_migration"} {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n != 1 {
				t.Errorf("table %s: %d (%v), want 1", table, n, err)
			}
		}
	})
}

func TestStoreMigrateRefusals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"store"}, exitUsage, "usage: payability store migrate"},
		{"unknown subcommand", []string{"store", "drop"}, exitUsage, "unknown subcommand"},
		{"unknown backend", []string{"store", "migrate", "--store", "mysql://db/x"}, exitUsage, "--store must be"},
		{"empty sqlite path", []string{"store", "migrate", "--store", "sqlite:"}, exitUsage, "--store must be"},
		{"positional argument", []string{"store", "migrate", "extra"}, exitUsage, ""},
		// Nothing listens on port 1 of loopback: the connection is refused
		// at once, and the message must not carry the password.
		{"unreachable database", []string{"store", "migrate", "--store", "postgres://app:s3cret-pw@127.0.0.1:1/test?sslmode=disable&connect_timeout=5"}, ExitInternal, "store migrate:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, nil, false, nil, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if strings.Contains(stdout+stderr, "s3cret-pw") {
				t.Errorf("the output echoes the password: %q", stderr)
			}
		})
	}
	if stdout, _, code := runCLI(t, nil, false, nil, "store", "help"); code != ExitOK || !strings.Contains(stdout, "store migrate") {
		t.Errorf("store help: exit %d, %q", code, stdout)
	}
}
