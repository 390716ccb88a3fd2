// Package sqlite is the embedded store: store.Store on one SQLite file
// (modernc.org/sqlite, pure Go), in WAL mode.
//
// All writes of a process go through one connection, so they never contend
// inside the process; between processes sharing the file, transactions begin
// IMMEDIATE (taking the write lock first) and wait up to the busy timeout.
// Ledger reads use a separate read-only pool, which WAL lets run beside the
// writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/internal/sqlcore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// JournalSizeLimit is the size the -wal file is cut back to whenever the log
// starts over (journal_size_limit). The automatic checkpoint runs every
// 1,000 pages (4 MiB at 4 KiB pages), so with checkpoints unblocked the file
// stays near this size.
const JournalSizeLimit = 4 << 20

// checkpointWait bounds how long Prune's checkpoint waits for readers.
const checkpointWait = time.Second

// busyTimeoutMS bounds how long a statement waits for another process's
// write lock.
const busyTimeoutMS = 10000

// dialect: the SQLite clock, in whole Unix milliseconds.
var dialect = sqlcore.Dialect{
	ClockMS: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
}

// Store is store.Store on a SQLite file.
type Store struct {
	*sqlcore.Store
	writer, reader *sql.DB
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it, mode 0600, when absent) the SQLite database at
// path and applies the embedded migrations. Its directory must exist.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, errors.New("store: sqlite: want a plain file path")
	}
	unlock, err := lockOpen(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Create the file first so it gets our mode; SQLite gives its -wal and
	// -shm files the mode of the database file.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: sqlite: %w", err)
	}

	writer, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)

	reader, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("store: sqlite: %w", err)
	}
	reader.SetMaxOpenConns(4)

	db := &sqlDB{writer: writer, reader: reader}
	s := &Store{Store: sqlcore.New(db, dialect, false), writer: writer, reader: reader}
	if err := s.migrate(ctx, db); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Ready reports whether the database answers and its schema is this
// build's (store.Readier).
func (s *Store) Ready(ctx context.Context) error {
	ms, err := sqlcore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	return sqlcore.Ready(ctx, &sqlDB{writer: s.writer, reader: s.reader}, ms)
}

func (s *Store) migrate(ctx context.Context, db sqlcore.DB) error {
	ms, err := sqlcore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return err
	}
	return sqlcore.Migrate(ctx, db, ms)
}

// dsn is the modernc.org/sqlite data source name of path.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// When a checkpoint lets the log start over, SQLite cuts the -wal
		// file back to this size: a burst does not leave a large file.
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", JournalSizeLimit))
		// FULL: a delivered payment and its ledger entry survive a power cut.
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Set("_txlock", "immediate")
	// A plain file name, not a file: URI: the driver strips the query.
	return path + "?" + q.Encode()
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// Prune deletes what is past its use (store.Store's Prune), then
// checkpoints the log and truncates the -wal file to zero bytes: the
// periodic bound on the log even when a long read held back the automatic
// checkpoints. A checkpoint a reader keeps from finishing is not an error;
// the next one catches up.
func (s *Store) Prune(ctx context.Context, now time.Time) (store.Pruned, error) {
	p, err := s.Store.Prune(ctx, now)
	if err != nil {
		return p, err
	}
	// TRUNCATE waits for readers to move to the newest snapshot; the
	// writer is held meanwhile, so the wait is short: a checkpoint that
	// cannot finish within it is left to the automatic ones and the next
	// prune.
	cctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	var busy, logPages, done int64
	err = queryRowOn(cctx, s.writer, "PRAGMA wal_checkpoint(TRUNCATE)", nil).Scan(&busy, &logPages, &done)
	if err != nil && ctx.Err() == nil && cctx.Err() == nil {
		return p, fmt.Errorf("store: sqlite: checkpoint: %w", err)
	}
	return p, nil
}

// LedgerColumns returns the column names of op's ledger table, as the live
// schema has them, in table order.
func (s *Store) LedgerColumns(ctx context.Context, op store.Op) ([]string, error) {
	if !op.Valid() {
		return nil, errors.New("store: unknown op")
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT name FROM pragma_table_info($1) ORDER BY cid`, sqlcore.LedgerTable(op))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols = append(cols, name)
	}
	return cols, rows.Err()
}

// sqlDB adapts the two pools to sqlcore.DB: everything on the writer, except
// multi-row reads (the ledger), which go to the reader.
type sqlDB struct {
	writer, reader *sql.DB
}

func (d *sqlDB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return execOn(ctx, d.writer, q, args)
}

func (d *sqlDB) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return queryRowOn(ctx, d.writer, q, args)
}

func (d *sqlDB) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return queryOn(ctx, d.reader, q, args)
}

func (d *sqlDB) InTx(ctx context.Context, fn func(sqlcore.Querier) error) error {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(txQuerier{tx}); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	return tx.Commit()
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// txQuerier runs every statement, reads included, in the transaction.
type txQuerier struct{ tx *sql.Tx }

func (t txQuerier) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return execOn(ctx, t.tx, q, args)
}

func (t txQuerier) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return queryRowOn(ctx, t.tx, q, args)
}

func (t txQuerier) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return queryOn(ctx, t.tx, q, args)
}

type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func execOn(ctx context.Context, e execQuerier, q string, args []any) (int64, error) {
	res, err := e.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func queryOn(ctx context.Context, e execQuerier, q string, args []any) (sqlcore.Rows, error) {
	rs, err := e.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return rows{rs}, nil
}

// queryRowOn runs a one-row query and steps its statement to completion
// before the row is scanned out.
//
// database/sql's QueryRow reads the first row and then closes the rows,
// which makes modernc.org/sqlite reset (finalize) the statement while it
// still stands on that row. For an INSERT … RETURNING or UPDATE …
// RETURNING in autocommit mode the write still commits at the reset, but
// SQLite runs its WAL hook, and with it the automatic checkpoint, only when
// sqlite3_step returns SQLITE_DONE: a connection whose writes all end that
// way never checkpoints, and the -wal file grows by every page it writes
// (about 13 kB per free pre-check) until a clean shutdown. Reading every
// row until Next reports false steps the statement to SQLITE_DONE, so each
// write ends like an Exec does. Every QueryRow of the store goes through
// here, whether or not it has a RETURNING clause.
func queryRowOn(ctx context.Context, e execQuerier, q string, args []any) row {
	rs, err := e.QueryContext(ctx, q, args...)
	return row{rs: rs, err: err}
}

// row is the pending result of a one-row query; Scan reads it, steps the
// statement to completion and closes it. Every QueryRow result of sqlcore is
// scanned at once.
type row struct {
	rs  *sql.Rows
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rs.Close()
	if !r.rs.Next() {
		if err := r.rs.Err(); err != nil {
			return err
		}
		return sqlcore.ErrNoRows
	}
	if err := r.rs.Scan(dest...); err != nil {
		return err
	}
	for r.rs.Next() {
		// Step to SQLITE_DONE: the store's one-row queries have no second
		// row, so this is the step that ends the statement.
	}
	if err := r.rs.Err(); err != nil {
		return err
	}
	return r.rs.Close()
}

type rows struct{ *sql.Rows }

func (r rows) Close() { _ = r.Rows.Close() }
