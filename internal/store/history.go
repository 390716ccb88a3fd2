package store

import (
	"context"
	"errors"
	"strings"
	"time"
)

// History is the monitor's record of what payability itself observed: one
// row per endpoint, op and scheduled slot. It holds closed-form values only
// (a state word, reason codes, a duration, the preflight's terms hash),
// never fetched content. Both adapters implement it beside Store.
type History interface {
	// AddObservation records o. The row is keyed by (Endpoint, Op, Slot):
	// a second observation of one slot (another instance, or a job retried
	// after the first write) changes nothing and reports false.
	AddObservation(ctx context.Context, o Observation) (bool, error)

	// Observations returns the observations of endpoint's op taken at or
	// after since, oldest first, at most limit of them (the newest ones
	// when there are more). An empty op means every op.
	Observations(ctx context.Context, endpoint, op string, since time.Time, limit int) ([]Observation, error)

	// LatestObservation returns the newest observation of endpoint's op;
	// ok is false when there is none.
	LatestObservation(ctx context.Context, endpoint, op string) (o Observation, ok bool, err error)

	// DailyCounts counts endpoint's observations (every op) per UTC day,
	// from the day since falls in (counted whole), oldest day first; days
	// with none are left out. It reads the summary kept as observations
	// land.
	DailyCounts(ctx context.Context, endpoint string, since time.Time) ([]ObservationDay, error)

	// LastChanges returns, per op of endpoint, the observation that last
	// changed the op's outcome (its slot's predecessor had the other
	// outcome); an op with no change, or whose change was pruned, is
	// absent. It reads the summary kept as observations land: its cost
	// does not grow with the history.
	LastChanges(ctx context.Context, endpoint string) ([]Observation, error)

	// LatestObservations returns, for each of endpoints, the observation
	// of the newest slot of each of its ops (read through the summary:
	// its cost grows with the endpoints asked, not with the history),
	// ordered by endpoint and op.
	LatestObservations(ctx context.Context, endpoints []string) ([]Observation, error)

	// PruneObservations deletes the observations taken before before and
	// returns how many it deleted.
	PruneObservations(ctx context.Context, before time.Time) (int64, error)
}

// ObservationDay is one UTC day's observations of an endpoint.
type ObservationDay struct {
	Day     time.Time // 00:00 UTC
	Checks  int64
	Passing int64
}

// Observation is one scheduled check of one endpoint by one op.
type Observation struct {
	Endpoint string    // the config id (see ValidID)
	Op       string    // preflight, lint, check, memo or probe
	Slot     int64     // the scheduled period: Unix seconds of its start
	At       time.Time // when the op ended (millisecond precision is kept)
	Passing  bool
	// State is the op's closed-set word: GO/HOLD/STOP, a check or memo
	// state, a probe outcome, or lint's conforms/warnings/errors.
	State string
	// Reasons are closed-form codes (rule ids, reason codes), each
	// matching ValidCode; at most MaxReasons of them.
	Reasons    []string
	DurationMS int64
	// TermsSHA256 is the preflight's hash of the live terms (64 lowercase
	// hex digits), empty for the other ops.
	TermsSHA256 string
	// Network is the CAIP-2 network of the entry the preflight selected
	// (the entry TermsSHA256 hashes), empty for the other ops and when no
	// entry was selected.
	Network string
	// Scheme is the payment scheme of the entry the op graded, from a
	// closed set (exact, upto, other); empty when none. X402Version is its
	// x402 version (1 or 2; 0 when none). Source names where the endpoint
	// was listed from when it was observed (config, api, or a catalog's
	// label: monitor.SourceOf); empty on rows written before the report
	// existed. Migration 0011.
	Scheme      string
	X402Version int
	Source      string
}

// Limits of an observation's closed-form fields.
const (
	MaxReasons = 32
	// MaxSchemeLen bounds Scheme; MaxX402Version bounds X402Version.
	MaxSchemeLen   = 16
	MaxX402Version = 255
	maxCodeLen     = 64
	maxIDLength    = 64
)

// ErrInvalidObservation: an observation whose fields are not of their
// closed form.
var ErrInvalidObservation = errors.New("store: invalid observation")

// MonitorOps are the ops a monitor observes.
var MonitorOps = []string{"preflight", "lint", "check", "memo", "probe"}

// ValidMonitorOp reports whether op is one of MonitorOps.
func ValidMonitorOp(op string) bool {
	for _, o := range MonitorOps {
		if o == op {
			return true
		}
	}
	return false
}

// ValidID reports whether s is a monitor endpoint id: 1 to 64 of
// [a-z0-9], '-', '_' and '.', starting with a letter or digit.
func ValidID(s string) bool {
	if s == "" || len(s) > maxIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidCode reports whether s has the form of a closed-form code (a state
// word, a rule id or a reason code): 1 to 64 of [A-Za-z0-9] and "-_.:".
func ValidCode(s string) bool {
	if s == "" || len(s) > maxCodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':':
		default:
			return false
		}
	}
	return true
}

// Validate checks the form of an observation.
func (o Observation) Validate() error {
	if !ValidID(o.Endpoint) || !ValidMonitorOp(o.Op) || o.Slot < 0 || o.At.IsZero() ||
		!ValidCode(o.State) || len(o.Reasons) > MaxReasons || o.DurationMS < 0 {
		return ErrInvalidObservation
	}
	for _, r := range o.Reasons {
		if !ValidCode(r) {
			return ErrInvalidObservation
		}
	}
	if o.TermsSHA256 != "" && !IsDigest(o.TermsSHA256) || o.Network != "" && !validCAIP2(o.Network) {
		return ErrInvalidObservation
	}
	if o.Scheme != "" && (len(o.Scheme) > MaxSchemeLen || !ValidCode(o.Scheme)) ||
		o.X402Version < 0 || o.X402Version > MaxX402Version || o.Source != "" && !ValidID(o.Source) {
		return ErrInvalidObservation
	}
	return nil
}

// validCAIP2 reports whether s is a CAIP-2 chain id: a namespace of 3 to 8
// lower-case letters, digits or hyphens, a colon, and a reference of 1 to 32
// letters, digits, hyphens or underscores.
func validCAIP2(s string) bool {
	ns, ref, ok := strings.Cut(s, ":")
	if !ok || len(ns) < 3 || len(ns) > 8 || len(ref) < 1 || len(ref) > 32 {
		return false
	}
	for _, c := range []byte(ns) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	for _, c := range []byte(ref) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
