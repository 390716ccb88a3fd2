// Package postgres is the shared store: store.Store on PostgreSQL
// (github.com/jackc/pgx/v5 with a connection pool), so several service
// instances share one ledger, one seen-set and one free tier.
//
// The queries are the SQLite store's (internal/store/internal/sqlcore); only
// the DDL and the clock expression differ. Every guarantee is the database's:
// UNIQUE constraints, one conditional upsert, compare-and-set updates in READ
// COMMITTED, which re-checks an UPDATE's WHERE on the row it waited for.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/internal/sqlcore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLockKey is the pg_advisory_lock key that serializes migrations of
// instances starting together (an arbitrary constant, ours alone).
const migrateLockKey int64 = 0x7061796162696c74 // "payabilt"

// dialect: the PostgreSQL clock, in whole Unix milliseconds.
var dialect = sqlcore.Dialect{
	ClockMS: "CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)",
}

// Options tune Open.
type Options struct {
	// UseDBClock makes the free tier read the database's clock instead of
	// the time it is given, so the clocks of the instances do not matter.
	// Production sets it; tests that inject a clock leave it off.
	UseDBClock bool
}

// Store is store.Store on PostgreSQL.
type Store struct {
	*sqlcore.Store
	pool *pgxpool.Pool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string; search_path in it selects the schema) and applies the embedded
// migrations under an advisory lock.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may echo the DSN, password included: keep it out.
		return nil, errors.New("store: postgres: invalid connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{Store: sqlcore.New(poolDB{pool}, dialect, opts.UseDBClock), pool: pool}, nil
}

// Migrate applies the embedded migrations to the database at dsn and
// returns (for `payability store migrate`).
func Migrate(ctx context.Context, dsn string) error {
	s, err := Open(ctx, dsn, Options{})
	if err != nil {
		return err
	}
	s.Close()
	return nil
}

// Ready reports whether the database answers and its schema is this
// build's (store.Readier).
func (s *Store) Ready(ctx context.Context) error {
	ms, err := sqlcore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	return sqlcore.Ready(ctx, poolDB{s.pool}, ms)
}

func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := sqlcore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	// An advisory lock belongs to a session: hold one connection throughout.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return fmt.Errorf("store: postgres: migration lock: %w", err)
	}
	err = sqlcore.Migrate(ctx, poolDB{conn}, ms)
	// Unlock even when ctx is done, or the pooled session keeps the lock.
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey); uerr != nil {
		conn.Conn().Close(context.WithoutCancel(ctx)) // a closed session frees its locks
		err = errors.Join(err, fmt.Errorf("store: postgres: migration unlock: %w", uerr))
	}
	return err
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// LedgerColumns returns the column names of op's ledger table in the current
// schema, as the live database has them, in table order.
func (s *Store) LedgerColumns(ctx context.Context, op store.Op) ([]string, error) {
	if !op.Valid() {
		return nil, errors.New("store: unknown op")
	}
	rows, err := s.pool.Query(ctx, `
SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1
ORDER BY ordinal_position`, sqlcore.LedgerTable(op))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// querier is what a pool, a pooled connection and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// poolDB adapts pgx to sqlcore.DB.
type poolDB struct{ q querier }

func (d poolDB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := d.q.Exec(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (d poolDB) QueryRow(ctx context.Context, sql string, args ...any) sqlcore.Row {
	return row{d.q.QueryRow(ctx, sql, args...)}
}

func (d poolDB) Query(ctx context.Context, sql string, args ...any) (sqlcore.Rows, error) {
	return d.q.Query(ctx, sql, args...)
}

func (d poolDB) InTx(ctx context.Context, fn func(sqlcore.Querier) error) error {
	return pgx.BeginFunc(ctx, d.q, func(tx pgx.Tx) error {
		return fn(poolDB{tx})
	})
}

// row is pgx's Row: its Scan reads the first row and then closes the
// result, which reads the rest of it to the command's completion, so a
// RETURNING statement is always finished (the SQLite adapter has to do that
// itself: see queryRowOn there).
type row struct{ r pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlcore.ErrNoRows
	}
	return err
}
