package format

import (
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
)

// originFamily is the family of x402-lint's document rules (origin mode).
const originFamily = "origin"

// lintRulesOf returns the x402-lint rules of the origin family (docs true)
// or of every other family (docs false), as FromLint takes them.
func lintRulesOf(docs bool) []Rule {
	var out []Rule
	for _, r := range lint.Rules().Rules {
		if (r.Family == originFamily) == docs {
			out = append(out, Rule{ID: r.ID, Level: LintLevel(r.Severity), Description: r.Checks})
		}
	}
	return out
}

// FromOriginReport maps an origin lint report: first the origin itself (its
// URL the origin, its cases the document rules, its findings the document
// findings: field the document leg, a colon and the JSON path), then one
// result per listed resource, as FromLintReport maps a `lint URL` report.
func FromOriginReport(r ops.OriginReport) []Result {
	docConforms := true
	for _, f := range r.Findings {
		if f.Severity == lint.Error {
			docConforms = false
		}
	}
	out := []Result{FromLint(r.Origin, lint.Result{Findings: r.Findings, Conforms: docConforms}, lintRulesOf(true))}
	resRules := lintRulesOf(false)
	for _, res := range r.Resources {
		lr := res.LintReport
		out = append(out, FromLint(lr.URL, lint.Result{Status: lr.Status, Dialect: lr.Dialect, Entries: lr.Entries, Findings: lr.Findings, Conforms: lr.Conforms}, resRules))
	}
	return out
}
