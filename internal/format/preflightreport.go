package format

import (
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
)

// PreflightTable is the published decision table of x402-preflight/v1: every
// reason code with its class (STOP or HOLD), in the document's order.
func PreflightTable() []PreflightReason {
	d := preflight.Document().Decision
	table := make([]PreflightReason, 0, len(d.Stop)+len(d.Hold))
	for _, r := range d.Stop {
		table = append(table, PreflightReason{Code: r.Reason, Decision: DecisionStop, Text: preflight.Reason(r.Reason).Sentence()})
	}
	for _, r := range d.Hold {
		table = append(table, PreflightReason{Code: r.Reason, Decision: DecisionHold, Text: preflight.Reason(r.Reason).Sentence()})
	}
	return table
}

// FromPreflightReport maps a preflight record through the published decision
// table. A reason the table does not name, or a record whose decision does
// not follow from its reasons, is ErrPreflight (never guessed).
func FromPreflightReport(rep ops.PreflightReport) (Result, error) {
	class := map[string]string{}
	for _, r := range PreflightTable() {
		class[r.Code] = r.Decision
	}
	p := Preflight{URL: rep.URL, Decision: string(rep.Decision), Table: PreflightTable()}
	for _, r := range rep.Reasons {
		c, ok := class[string(r)]
		if !ok {
			return Result{}, ErrPreflight
		}
		p.Reasons = append(p.Reasons, PreflightReason{Code: string(r), Decision: c})
	}
	res, err := FromPreflight(p)
	if err != nil {
		return Result{}, err
	}
	res.Line = rep.Summary
	return res, nil
}

// RulesOf returns the published rule set of an op: the criteria ops' states
// and grades, x402-lint/v1's rules, preflight's decision table.
func RulesOf(op string) []Rule {
	switch op {
	case ops.OpPreflight:
		return PreflightRules(PreflightTable())
	case ops.OpLint:
		return LintRules()
	}
	return CriteriaRules(op)
}
