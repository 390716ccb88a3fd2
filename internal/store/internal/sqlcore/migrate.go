package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema step, a file NNNN_name.sql of an adapter.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads the *.sql files of dir in fsys, ordered by the version
// number their name starts with.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	ms := make([]Migration, 0, len(names))
	seen := map[int]bool{}
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 || seen[v] {
			return nil, fmt.Errorf("store: migration file %q: want a unique NNNN_name.sql", base)
		}
		seen[v] = true
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

const (
	createMigrationsSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)`
	maxVersionSQL       = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
	recordMigrationSQL  = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
)

// ErrSchemaTooNew: the database was migrated by a newer build than this one.
var ErrSchemaTooNew = errors.New("store: database schema is newer than this build")

// Migrate applies the migrations db has not seen, each in its own
// transaction. Concurrent calls on one database are safe when transactions
// take the write lock at BEGIN (SQLite's BEGIN IMMEDIATE) or the caller
// serializes them (PostgreSQL's advisory lock).
func Migrate(ctx context.Context, db DB, ms []Migration) error {
	if _, err := db.Exec(ctx, createMigrationsSQL); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	var have int64
	if err := db.QueryRow(ctx, maxVersionSQL).Scan(&have); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if len(ms) > 0 && have > int64(ms[len(ms)-1].Version) {
		return ErrSchemaTooNew
	}
	for _, m := range ms {
		if int64(m.Version) <= have {
			continue
		}
		err := db.InTx(ctx, func(q Querier) error {
			// Read again inside the transaction: another process may have
			// applied it since (SQLite serializes on BEGIN IMMEDIATE).
			var now int64
			if err := q.QueryRow(ctx, maxVersionSQL).Scan(&now); err != nil {
				return err
			}
			if now >= int64(m.Version) {
				return nil
			}
			if _, err := q.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := q.Exec(ctx, recordMigrationSQL, int64(m.Version), m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// ErrSchemaBehind: the database lacks migrations this build has.
var ErrSchemaBehind = errors.New("store: database schema is older than this build")

// Ready answers whether db is reachable and migrated to exactly the last of
// ms: a readiness probe's question (one indexed read).
func Ready(ctx context.Context, db DB, ms []Migration) error {
	var have int64
	if err := db.QueryRow(ctx, maxVersionSQL).Scan(&have); err != nil {
		return fmt.Errorf("store: not reachable: %w", err)
	}
	want := int64(0)
	if len(ms) > 0 {
		want = int64(ms[len(ms)-1].Version)
	}
	switch {
	case have < want:
		return ErrSchemaBehind
	case have > want:
		return ErrSchemaTooNew
	}
	return nil
}
