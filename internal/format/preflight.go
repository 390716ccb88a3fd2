package format

import (
	"cmp"
	"errors"
)

// The preflight adapter: a Preflight is a decision and every reason with the
// class the published decision table gives it; FromPreflightReport builds
// one from the preflight op's record (ops.PreflightReport) with the table of
// x402-preflight/v1. Nothing here invents a reason code.

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
	Text     string // the reason's static sentence, when the table has one
}

// Preflight is what the adapter reads of a preflight record. Table, when
// set, is the published decision table: every reason of it becomes a case
// (held when it does not apply), so test reporters see the same cases on
// every run.
type Preflight struct {
	URL      string
	Decision string
	Reasons  []PreflightReason
	Table    []PreflightReason
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
		rules = append(rules, Rule{ID: "preflight/" + r.Code, Level: preflightLevel(r.Decision), Description: r.Text})
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
	at := map[string]int{}
	text := map[string]string{}
	for _, r := range p.Table {
		text[r.Code] = r.Text
		at[r.Code] = len(cases)
		cases = append(cases, Case{Name: r.Code})
	}
	decided := false // a reason of the decision's own class
	for _, r := range p.Reasons {
		rl := preflightLevel(r.Decision)
		if rl == "" || rl.rank() > lvl.rank() {
			return Result{}, ErrPreflight // a STOP reason under HOLD, or an unknown class
		}
		decided = decided || rl == lvl
		i, ok := at[r.Code]
		if !ok {
			i = len(cases)
			at[r.Code] = i
			cases = append(cases, Case{Name: r.Code})
		}
		msg := "reason " + r.Code + " (" + r.Decision + ")"
		if t := cmp.Or(r.Text, text[r.Code]); t != "" {
			msg += ": " + t
		}
		cases[i].Findings = append(cases[i].Findings, Finding{Rule: "preflight/" + r.Code, Level: rl, Field: "reasons", Message: msg})
	}
	if lvl != "" && !decided {
		return Result{}, ErrPreflight // STOP or HOLD with no reason of its class
	}
	return Result{Op: "preflight", URL: p.URL, Outcome: p.Decision, Cases: cases}, nil
}
