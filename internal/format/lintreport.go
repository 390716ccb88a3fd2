package format

import (
	"sync"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
)

// LintRules is the published rule set x402-lint/v1: every rule with its
// severity as the default level and what it checks as the description.
func LintRules() []Rule {
	doc := lint.Rules()
	rules := make([]Rule, len(doc.Rules))
	for i, r := range doc.Rules {
		rules[i] = Rule{ID: r.ID, Level: LintLevel(r.Severity), Description: r.Checks}
	}
	return rules
}

// FromLintReport maps a lint report through the published rule set.
func FromLintReport(r ops.LintReport) Result {
	res := FromLint(r.URL, lint.Result{Status: r.Status, Dialect: r.Dialect, Entries: r.Entries, Findings: r.Findings, Conforms: r.Conforms}, lintRulesOf(false))
	return withProfile(res, r.Profile, r.ProfileFindings)
}

// lintFamilies maps each x402-lint/v1 rule id to its family (the section of
// docs/lint.md that lists it).
var lintFamilies = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, r := range lint.Rules().Rules {
		m[r.ID] = r.Family
	}
	return m
})
