package format

import (
	"errors"
)

// PREFLIGHT ADAPTER — the interface the preflight op maps into. The
// preflight op (issue 14, branch preflight) had not landed when this was
// written, so no command renders preflight yet: its report type is to
// build a Preflight from its record (decision, and every reason with the
// decision class the published decision table gives it) and call
// FromPreflight. Nothing here invents a reason code.

// Preflight decisions.
const (
	DecisionGo   = "GO"
	DecisionHold = "HOLD"
	DecisionStop = "STOP"
)

// PreflightReason is one reason of a preflight record: its closed-form code
// and the decision it leads to (STOP or HOLD).
type PreflightReason struct {
	Code     string
	Decision string
}

// Preflight is what the adapter reads of a preflight record.
type Preflight struct {
	URL      string
	Decision string
	Reasons  []PreflightReason
}

// ErrPreflight is FromPreflight's error for a record that breaks the
// decision table's shape.
var ErrPreflight = errors.New("format: a preflight decision is GO, HOLD or STOP, each reason STOP or HOLD, and GO has no reason")

func preflightLevel(decision string) Level {
	switch decision {
	case DecisionStop:
		return LevelError
	case DecisionHold:
		return LevelWarning
	}
	return ""
}

// PreflightRules is the preflight rule set from the published decision
// table: preflight/STOP and preflight/HOLD, then one rule per reason code.
func PreflightRules(table []PreflightReason) []Rule {
	rules := []Rule{
		{ID: "preflight/" + DecisionStop, Level: LevelError, Description: "Do not pay: at least one STOP reason applies."},
		{ID: "preflight/" + DecisionHold, Level: LevelWarning, Description: "Ask a human before paying: at least one HOLD reason applies."},
	}
	for _, r := range table {
		rules = append(rules, Rule{ID: "preflight/" + r.Code, Level: preflightLevel(r.Decision)})
	}
	return rules
}

// FromPreflight maps a preflight record: STOP is an error, HOLD a warning;
// the decision is one case and every reason another, at its own class.
func FromPreflight(p Preflight) (Result, error) {
	lvl := preflightLevel(p.Decision)
	if lvl == "" && p.Decision != DecisionGo || p.Decision == DecisionGo && len(p.Reasons) > 0 {
		return Result{}, ErrPreflight
	}
	dec := Case{Name: "decision"}
	if lvl != "" {
		dec.Findings = []Finding{{Rule: "preflight/" + p.Decision, Level: lvl, Field: "decision", Message: "decision " + p.Decision}}
	}
	cases := []Case{dec}
	decided := false // a reason of the decision's own class
	for _, r := range p.Reasons {
		rl := preflightLevel(r.Decision)
		if rl == "" || rl.rank() > lvl.rank() {
			return Result{}, ErrPreflight // a STOP reason under HOLD, or an unknown class
		}
		decided = decided || rl == lvl
		cases = append(cases, Case{Name: r.Code, Findings: []Finding{{
			Rule: "preflight/" + r.Code, Level: rl, Field: "reasons", Message: "reason " + r.Code + " (" + r.Decision + ")"}}})
	}
	if lvl != "" && !decided {
		return Result{}, ErrPreflight // STOP or HOLD with no reason of its class
	}
	return Result{Op: "preflight", URL: p.URL, Outcome: p.Decision, Cases: cases}, nil
}
