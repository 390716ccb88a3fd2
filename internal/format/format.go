// Package format renders the result of any op (check, memo, probe, lint,
// preflight; one URL or a scan) for machines: GitHub workflow commands,
// SARIF 2.1.0, JUnit XML, a Markdown table and a one-word overall. Every op
// is first mapped into one render-side model, a Result per endpoint with its
// cases (a rule or factor that was evaluated) and findings (a case that did
// not hold), so the renderers know no op.
//
// Custody: adapters copy only what the op's JSON report carries: rule ids,
// states, grades, reason codes, statuses, field paths and protocol
// identifiers. Every message is static text built from those; the endpoint
// URL is the caller's input, never a fetched value.
package format

import (
	"errors"
	"slices"
)

// Level is how much a finding matters, in SARIF's words.
type Level string

// The three levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelNote    Level = "note"
)

// rank orders levels: error above warning above note.
func (l Level) rank() int {
	switch l {
	case LevelError:
		return 3
	case LevelWarning:
		return 2
	case LevelNote:
		return 1
	}
	return 0
}

// Overall is an endpoint's (or an invocation's) verdict for CI.
type Overall string

// The three overalls.
const (
	Pass Overall = "pass"
	Warn Overall = "warn"
	Fail Overall = "fail"
)

// Rule is one rule of a published rule set, as SARIF's tool.driver.rules
// lists it. Level is the rule's default level ("" for a rule that names a
// passing state, SARIF's "none").
type Rule struct {
	ID          string
	Level       Level
	Description string
}

// Finding is one rule or factor that did not hold for an endpoint. Field is
// a factor name or a JSON path (lint: the leg, a colon and the path); Leg
// and Entry are a lint finding's leg and accepts entry (empty and nil
// otherwise).
type Finding struct {
	Rule    string
	Level   Level
	Field   string
	Message string
	Leg     string
	Entry   *int
	// Suppressed is the suppression the repository's configuration puts on
	// the finding (an ignore entry with its reason, or the baseline); nil
	// when none. A suppressed finding is still rendered, marked so, but no
	// count, overall or --fail-on threshold reads it.
	Suppressed *Suppression
}

// Case is one rule or factor evaluated on an endpoint (a JUnit testcase):
// it held when it has no finding.
type Case struct {
	Name     string
	Findings []Finding
}

// Result is one endpoint's result: the op, the URL it was asked about, a
// short outcome (a state, the rail grades, a decision), the verdict line
// when the op has one, and every case.
type Result struct {
	Op      string
	URL     string
	Outcome string
	Line    string
	Cases   []Case
}

// Findings returns every finding of the result, in case order.
func (r Result) Findings() []Finding {
	var out []Finding
	for _, c := range r.Cases {
		out = append(out, c.Findings...)
	}
	return out
}

// Counts returns the number of unsuppressed findings at each level.
func (r Result) Counts() (errs, warnings, notes int) {
	for _, f := range r.Findings() {
		if f.Suppressed != nil {
			continue
		}
		switch f.Level {
		case LevelError:
			errs++
		case LevelWarning:
			warnings++
		case LevelNote:
			notes++
		}
	}
	return
}

// Overall is fail when any unsuppressed finding is an error, warn when any is a
// warning, else pass.
func (r Result) Overall() Overall {
	errs, warnings, _ := r.Counts()
	switch {
	case errs > 0:
		return Fail
	case warnings > 0:
		return Warn
	}
	return Pass
}

// Run is one invocation: one op over one or more endpoints, with the
// op's published rule set.
type Run struct {
	Op          string
	ToolVersion string
	Rules       []Rule
	Results     []Result
	// Artifact is the repository file SARIF locates every result in (the
	// file listing the URLs); the zero value is PlaceholderArtifact.
	Artifact Artifact
	// Baselined: a baseline was compared, so every SARIF result says
	// whether it is new or in the baseline (baselineState).
	Baselined bool
}

// Overall is the worst overall of the run's results (pass when it has none).
func (r Run) Overall() Overall {
	worst := Pass
	for _, res := range r.Results {
		switch res.Overall() {
		case Fail:
			return Fail
		case Warn:
			worst = Warn
		}
	}
	return worst
}

// rule returns the rule with id, and its index in Rules.
func (r Run) rule(id string) (Rule, int, bool) {
	i := slices.IndexFunc(r.Rules, func(x Rule) bool { return x.ID == id })
	if i < 0 {
		return Rule{}, -1, false
	}
	return r.Rules[i], i, true
}

// FailOn is the --fail-on threshold: the overall at which a command exits
// with its "did not hold" status.
type FailOn string

// The three thresholds.
const (
	FailOnError FailOn = "error"
	FailOnWarn  FailOn = "warn"
	FailOnNever FailOn = "never"
)

// ErrFailOn is ParseFailOn's error.
var ErrFailOn = errors.New("--fail-on must be one of error, warn, never")

// ParseFailOn reads a --fail-on value.
func ParseFailOn(s string) (FailOn, error) {
	switch FailOn(s) {
	case FailOnError, FailOnWarn, FailOnNever:
		return FailOn(s), nil
	}
	return "", ErrFailOn
}

// Trips reports whether overall reaches the threshold.
func (t FailOn) Trips(o Overall) bool {
	switch t {
	case FailOnError:
		return o == Fail
	case FailOnWarn:
		return o == Fail || o == Warn
	}
	return false
}

// failing reports whether a finding is a failure under the threshold (JUnit):
// errors always, warnings with --fail-on warn.
func (t FailOn) failing(l Level) bool {
	return l == LevelError || (t == FailOnWarn && l == LevelWarning)
}
