package store

import (
	"context"
	"time"
)

// Ecosystem is the aggregate reads of the monitor's ecosystem report: counts
// the database computes (GROUP BY over the summary and the observations'
// primary key), never a scan of the history in Go. Both adapters implement
// it beside History.
type Ecosystem interface {
	// LatestGroups counts the endpoints whose newest observation of op
	// (the summary's latest slot) was taken at or after since, grouped by
	// that observation's closed-form fields.
	LatestGroups(ctx context.Context, op string, since time.Time) ([]LatestGroup, error)

	// StateDays counts the observations per UTC day, op and state, from the
	// day since falls in (counted whole), oldest day first; days with none
	// are left out. It reads a summary kept as observations land.
	StateDays(ctx context.Context, since time.Time) ([]StateDay, error)
}

// LatestGroup is how many endpoints' newest observation of Op had these
// closed-form fields.
type LatestGroup struct {
	Op, State, Network, Scheme, Source string
	X402Version                        int
	Reasons                            []string
	Endpoints                          int64
}

// StateDay is one UTC day's count of one op's observations in one state.
type StateDay struct {
	Day       time.Time // 00:00 UTC
	Op, State string
	Checks    int64
}
