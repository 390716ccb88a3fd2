package store

import (
	"context"
	"errors"
	"math"
	"time"
)

// EndpointCatalog is the monitor's set of endpoints as the store keeps it
// (migration 0010): the configuration file seeds it, the authenticated API
// and the catalog imports manage it. Each endpoint records which sources list
// it (SourceConfig, SourceAPI, or a catalog's URL) and, kept current as
// observations land, the state of its status op: the lists are read a page at
// a time, filtered in the database, whatever the number of endpoints.
// Both adapters implement it beside History.
type EndpointCatalog interface {
	// PutEndpoints writes eps in one transaction, each listed by p.Source
	// (seen at p.Seen): a new id is added, a known one has its definition
	// replaced and is no longer retired. With p.Create a known id (retired
	// or not) refuses the whole call with ErrEndpointExists. When the
	// active endpoints would then be more than p.Max, nothing is written
	// and the error is ErrTooManyEndpoints.
	PutEndpoints(ctx context.Context, eps []EndpointRecord, p PutEndpoints) error

	// UpdateEndpoint replaces the definition of the endpoint e.ID (its
	// sources and retirement unchanged); ErrNoEndpoint when there is none.
	UpdateEndpoint(ctx context.Context, e EndpointRecord) error

	// DeleteEndpoint removes an endpoint and its sources (its history is
	// kept until the retention prunes it); false when there was none.
	DeleteEndpoint(ctx context.Context, id string) (bool, error)

	// Endpoint returns one endpoint, retired or not, with its sources.
	Endpoint(ctx context.Context, id string) (EndpointRecord, bool, error)

	// ListEndpoints returns one page of the endpoints q selects, ordered by
	// id, with their sources, and how many q selects in all.
	ListEndpoints(ctx context.Context, q EndpointQuery) ([]EndpointRecord, int, error)

	// ReleaseSource removes source from every endpoint whose id is not in
	// keep (a reseed of the configuration file).
	ReleaseSource(ctx context.Context, source string, keep []string) error

	// RetireEndpoints marks retired (at at) every active endpoint none of
	// whose sources listed it at or after cutoff; it returns how many.
	// SourceConfig and SourceAPI never go stale.
	RetireEndpoints(ctx context.Context, cutoff, at time.Time) (int64, error)

	// EndpointsVersion is a number that changes with every change of the
	// set (schedulers poll it to pick up changes made by other instances).
	EndpointsVersion(ctx context.Context) (int64, error)
}

// The sources that never go stale: the configuration file and the API.
const (
	SourceConfig = "config"
	SourceAPI    = "api"
)

// MaxEndpoints is how many active endpoints one store keeps (the API and the
// imports refuse more).
const MaxEndpoints = 100000

// MaxSourceLen bounds a source's name (a catalog's URL).
const MaxSourceLen = 2048

// Errors of the endpoint catalog.
var (
	ErrEndpointExists   = errors.New("store: endpoint exists")
	ErrNoEndpoint       = errors.New("store: no such endpoint")
	ErrTooManyEndpoints = errors.New("store: too many endpoints")
	ErrInvalidEndpoint  = errors.New("store: invalid endpoint")
)

// EndpointRecord is one monitored endpoint as stored: the definition the
// configuration format has (validated by the monitor before it is put), the
// op its status is read from, and, on reads, its sources and retirement.
type EndpointRecord struct {
	ID, URL, Method, Body string
	Ops                   []string
	Every                 time.Duration
	Network, MaxAmount    string
	// StatusOp is the op the status is read from ("" none): its
	// observations keep the record's status fields current.
	StatusOp string

	// Read only.
	Sources []string  // sorted
	Retired time.Time // zero: active
	// The newest observation of StatusOp: its state and time ("" and zero
	// when none), and the network the newest preflight selected.
	StatusState     string
	StatusAt        time.Time
	ObservedNetwork string
}

// PutEndpoints says how PutEndpoints writes.
type PutEndpoints struct {
	Source string
	Seen   time.Time
	Max    int
	Create bool
	// Merge keeps the definition of a known id (another source's): only
	// the source is added and the endpoint is no longer retired.
	Merge bool
}

// EndpointQuery selects endpoints. Empty fields select everything; the
// retired endpoints are selected only by Retired.
type EndpointQuery struct {
	Network string // the configured network or the one last observed
	Source  string
	// States, when set, selects the endpoints whose status op's newest
	// observation has one of these states and is fresh at Now (taken at
	// or after Now minus two intervals); with NotStates, those that do not.
	States    []string
	NotStates bool
	Now       time.Time
	Retired   bool
	Offset    int
	Limit     int // 0: no limit
}

// neverStale is the last-seen time of the sources that never go stale.
const neverStale = math.MaxInt64

// SourceLastSeenMS is the last-seen time a source's row records when it is
// seen at t.
func SourceLastSeenMS(source string, t time.Time) int64 {
	if source == SourceConfig || source == SourceAPI {
		return neverStale
	}
	return t.UnixMilli()
}

// Validate checks the form of a record's definition (the monitor has
// validated its meaning).
func (e EndpointRecord) Validate() error {
	if !ValidID(e.ID) || e.URL == "" || len(e.URL) > MaxSourceLen || (e.Method != "GET" && e.Method != "POST") ||
		len(e.Ops) == 0 || e.Every < time.Second || (e.StatusOp != "" && !ValidMonitorOp(e.StatusOp)) ||
		(e.Network != "" && !validCAIP2(e.Network)) {
		return ErrInvalidEndpoint
	}
	for _, op := range e.Ops {
		if !ValidMonitorOp(op) {
			return ErrInvalidEndpoint
		}
	}
	return nil
}

// ValidSource reports whether s can name a source.
func ValidSource(s string) bool {
	if s == "" || len(s) > MaxSourceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
