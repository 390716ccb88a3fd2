package monitor

import (
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// Status is an endpoint's status: a closed set of words.
type Status string

const (
	Operational Status = "operational"
	Degraded    Status = "degraded"
	Critical    Status = "critical"
	Unknown     Status = "unknown"
)

// Lint's observation states, one word each (see LintState).
const (
	LintConforms = "conforms" // no error, no warning
	LintWarnings = "warnings" // no error, some warning
	LintErrors   = "errors"
)

// Preflight's decisions.
const (
	PreflightGo   = "GO"
	PreflightHold = "HOLD"
	PreflightStop = "STOP"
)

// StatusSource names the op an endpoint's status is read from: preflight
// when configured, else lint, else none (the status is then unknown: the
// issue defines it from those two ops only, and we never rate an endpoint
// from ops that were not made to rate it).
func StatusSource(e Endpoint) string {
	switch {
	case e.Has("preflight"):
		return "preflight"
	case e.Has("lint"):
		return "lint"
	}
	return ""
}

// Fresh reports whether o (taken at o.At) is recent enough to count at now:
// an observation older than two intervals is not. The interval is capped at
// MaxEvery (as ParseConfig caps it), so that two of them never overflow.
func Fresh(e Endpoint, o store.Observation, now time.Time) bool {
	return !o.At.Before(now.Add(-2 * min(e.Every, MaxEvery)))
}

// StatusOf is an endpoint's status at now from the latest observation of its
// status source (ok false when there is none).
func StatusOf(e Endpoint, latest store.Observation, ok bool, now time.Time) Status {
	src := StatusSource(e)
	if src == "" || !ok || latest.Op != src || !Fresh(e, latest, now) {
		return Unknown
	}
	return stateStatus(src, latest.State)
}

func stateStatus(op, state string) Status {
	switch op {
	case "preflight":
		switch state {
		case PreflightGo:
			return Operational
		case PreflightHold:
			return Degraded
		case PreflightStop:
			return Critical
		}
	case "lint":
		switch state {
		case LintConforms:
			return Operational
		case LintWarnings:
			return Degraded
		case LintErrors:
			return Critical
		}
	}
	return Unknown
}

// Outcome is an op's observation summarised in one word.
type Outcome string

const (
	Passing Outcome = "passing"
	Failing Outcome = "failing"
)

// OutcomeOf is the outcome of one observation.
func OutcomeOf(o store.Observation) Outcome {
	if o.Passing {
		return Passing
	}
	return Failing
}
