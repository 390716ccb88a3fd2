package format

import (
	"github.com/exchangerebel/payability/internal/lint"
)

// LintLevel maps a lint severity: error stays error, warn is a warning, info
// a note (lint findings keep their severity).
func LintLevel(s lint.Severity) Level {
	switch s {
	case lint.Error:
		return LevelError
	case lint.Warn:
		return LevelWarning
	}
	return LevelNote
}

// FromLint maps a lint result of the endpoint url: one case per rule of the
// published rule set (rules, in order; a rule a finding names that the set
// lacks gets a case of its own after them), each finding on its rule's case
// with its own severity, its field the leg and the JSON path.
func FromLint(url string, r lint.Result, rules []Rule) Result {
	cases := make([]Case, 0, len(rules))
	at := map[string]int{}
	for _, rule := range rules {
		at[rule.ID] = len(cases)
		cases = append(cases, Case{Name: rule.ID})
	}
	for _, f := range r.Findings {
		i, ok := at[f.Rule]
		if !ok {
			i = len(cases)
			at[f.Rule] = i
			cases = append(cases, Case{Name: f.Rule})
		}
		cases[i].Findings = append(cases[i].Findings, LintFinding(f))
	}
	outcome := "conforms: no"
	if r.Conforms {
		outcome = "conforms: yes"
	}
	return Result{Op: "lint", URL: url, Outcome: outcome, Cases: cases}
}

// LintFinding maps one lint finding: its own severity, its field the leg, a
// colon and the JSON path.
func LintFinding(f lint.Finding) Finding {
	field := string(f.Leg)
	if f.Field != "" {
		field += ":" + f.Field
	}
	return Finding{Rule: f.Rule, Level: LintLevel(f.Severity), Field: field, Message: f.Message, Leg: string(f.Leg), Entry: f.Entry}
}
