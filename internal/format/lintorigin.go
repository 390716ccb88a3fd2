package format

import (
	"strings"

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
		r := FromLint(lr.URL, lint.Result{Status: lr.Status, Dialect: lr.Dialect, Entries: lr.Entries, Findings: lr.Findings, Conforms: lr.Conforms}, resRules)
		out = append(out, withProfile(r, lr.Profile, lr.ProfileFindings))
	}
	return out
}

// ProfileRules are the rules of the named directory profile (none for "").
func ProfileRules(name string) []Rule {
	p, _ := lint.ProfileByName(name)
	out := make([]Rule, 0, len(p.Rules))
	for _, r := range p.Rules {
		out = append(out, Rule{ID: r.ID, Level: LintLevel(r.Severity), Description: r.Checks})
	}
	return out
}

// withProfile adds a profile's rules as cases of res, its findings on them
// (field: the leg, a colon and the path, as lint's). The outcome (x402-lint's
// conforms) is unchanged; the overall counts the profile's findings, since
// the profile was asked for.
func withProfile(res Result, name string, fs []lint.Finding) Result {
	if name == "" {
		return res
	}
	at := map[string]int{}
	for _, r := range ProfileRules(name) {
		at[r.ID] = len(res.Cases)
		res.Cases = append(res.Cases, Case{Name: r.ID})
	}
	for _, f := range fs {
		i, ok := at[f.Rule]
		if !ok {
			continue
		}
		res.Cases[i].Findings = append(res.Cases[i].Findings, Finding{Rule: f.Rule, Level: LintLevel(f.Severity), Field: string(f.Leg) + ":" + f.Field, Message: f.Message, Leg: string(f.Leg), Entry: f.Entry})
	}
	return res
}

// isProfileRule reports whether id is a rule of a directory profile.
func isProfileRule(id string) bool {
	for _, p := range lint.Profiles().Profiles {
		for _, r := range p.Rules {
			if r.ID == id {
				return true
			}
		}
	}
	return false
}

// FromOriginScan maps an origin report to one result, as a scan entry (one
// origin) renders: the document rules' cases with the document findings,
// then each resource's findings on its rule's case, the field prefixed by
// the resource's path on the origin. The outcome is the origin's conforms.
func FromOriginScan(r ops.OriginReport) Result {
	rs := FromOriginReport(r)
	out := rs[0]
	out.Outcome = "conforms: no"
	if r.Conforms {
		out.Outcome = "conforms: yes"
	}
	at := map[string]int{}
	for i, c := range out.Cases {
		at[c.Name] = i
	}
	for k, res := range rs[1:] {
		prefix := strings.TrimPrefix(r.Resources[k].URL, r.Origin)
		for _, c := range res.Cases {
			for _, f := range c.Findings {
				i, ok := at[c.Name]
				if !ok {
					i = len(out.Cases)
					at[c.Name] = i
					out.Cases = append(out.Cases, Case{Name: c.Name})
				}
				f.Field = prefix + " " + f.Field
				out.Cases[i].Findings = append(out.Cases[i].Findings, f)
			}
		}
	}
	return out
}
