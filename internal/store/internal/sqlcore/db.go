// Package sqlcore is the one SQL implementation of store.Store, shared by the
// SQLite and PostgreSQL adapters. The adapters differ only in their DDL, in
// how they connect, and in one SQL fragment (the database clock); every query
// here runs unchanged on both. Parameters are written $1, $2, … which both
// databases accept.
package sqlcore

import (
	"context"
	"errors"
)

// ErrNoRows is what a Row's Scan returns when the query returned no row; the
// adapters translate their driver's own value to it.
var ErrNoRows = errors.New("sqlcore: no rows")

// Querier runs SQL on a connection pool, one connection or a transaction.
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
}

// Row is the result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// DB is a database the store runs on.
type DB interface {
	Querier
	// InTx runs fn in one transaction: committed when fn returns nil, rolled
	// back otherwise.
	InTx(ctx context.Context, fn func(Querier) error) error
}

// Dialect is the little that differs between the databases at run time.
type Dialect struct {
	// ClockMS is an SQL expression for the database's clock, in whole
	// milliseconds since the Unix epoch (BIGINT).
	ClockMS string
}
