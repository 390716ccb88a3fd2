package format

import (
	"fmt"
	"sync"

	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

// Rule ids of the criteria ops are the op and a published state or grade:
// check/UNCONFIGURED, memo/MEMO-REUSED, probe/PRESENT-FAIL-DIRTY. Probe's two
// exposure kinds (FAIL-OPEN, METHOD-UNPAID-2XX) and UNGRADED are rules too,
// and check's description-length risk flag is check/description_flag.
func ruleID(op, name string) string { return op + "/" + name }

// Descriptions of the published states and grades, in our words (the
// criteria's state_rule and grade_rule are the contract).
var stateText = map[string]string{
	"check/" + string(verdict.Populated):         "Every field check of the challenge passes.",
	"check/" + string(verdict.AmountsOnly):       "Amounts are present and consistent, but recipient, token account and memo are all absent.",
	"check/" + string(verdict.Unconfigured):      "An amount or a core field is absent or inconsistent, a header-to-body equality fails, or the body does not decode.",
	"check/" + string(verdict.HeaderMissing):     "The PAYMENT-REQUIRED header is absent or does not decode.",
	"check/" + string(verdict.ResourceMismatch):  "A resource field is present and differs from the called URL.",
	"check/" + string(verdict.NotA402):           "The fetch failed or timed out, the status is not 402, or the body exceeded the cap.",
	"check/description_flag":                     "The description is over 500 characters (a risk flag; it never changes the state).",
	"memo/" + string(verdict.Bound):              "Body memos are present in both fetches, unique across the pair, and equal to the header's.",
	"memo/" + string(verdict.MemoReused):         "Both fetches carry the same body memo.",
	"memo/" + string(verdict.LegMismatch):        "In a fetch, the header and body memos differ, or only one leg carries a memo.",
	"memo/" + string(verdict.MemoAbsent):         "The body leg carries no memo in a fetch.",
	"memo/" + string(verdict.NotA402):            "A fetch failed or timed out, its status is not 402, or its body exceeded the cap.",
	"probe/FAIL-OPEN":                            "A graded probe carrying an invalid payment was answered 2xx: the gate produced work unpaid.",
	"probe/METHOD-UNPAID-2XX":                    "A method was answered 2xx without any payment.",
	"probe/" + string(verdict.PresentFailClosed): "The probe's invalid payment was rejected with a 402 carrying a reason.",
	"probe/" + string(verdict.PresentFailDirty):  "The probe's invalid payment was not rejected cleanly (2xx, another status, or an unparseable 402 body).",
	"probe/" + string(verdict.Absent):            "The answer is indistinguishable from the unpaid challenge: the payment was, as observed, never evaluated.",
	"probe/" + string(verdict.Ungraded):          "The probe could not be graded (it failed, timed out or exceeded the cap, or the baseline GET did).",
}

// CriteriaRules returns the rule set of a criteria op (check, memo, probe):
// its published states or grades, and the exposures, in the criteria's order.
func CriteriaRules(op string) []Rule {
	var rules []Rule
	add := func(name string, l Level) {
		id := ruleID(op, name)
		rules = append(rules, Rule{ID: id, Level: l, Description: stateText[id]})
	}
	switch op {
	case ops.OpCheck:
		for _, s := range criteria.Payability().States {
			add(s, passOr(s == string(verdict.Populated)))
		}
		add("description_flag", LevelNote)
	case ops.OpMemo:
		for _, s := range criteria.Payability().MemoOp.States {
			add(s, passOr(s == string(verdict.Bound)))
		}
	case ops.OpProbe:
		add("FAIL-OPEN", LevelError)
		add("METHOD-UNPAID-2XX", LevelWarning)
		for _, g := range criteria.RailProbe().Grades {
			add(g, railLevel(verdict.Grade(g)))
		}
		add(string(verdict.Ungraded), railLevel(verdict.Ungraded))
	}
	return rules
}

func passOr(pass bool) Level {
	if pass {
		return ""
	}
	return LevelError
}

// railLevel is a rail's (direct, facilitator) level for its grade: a
// PRESENT-FAIL-DIRTY rail is a warning, ABSENT a note. UNGRADED is a
// warning: the issue does not name it, and a pass would overstate a rail
// that was never graded (docs/ci.md).
func railLevel(g verdict.Grade) Level {
	switch g {
	case verdict.PresentFailDirty, verdict.Ungraded:
		return LevelWarning
	case verdict.Absent:
		return LevelNote
	}
	return ""
}

// FromReport maps a check, memo, probe or lint report.
func FromReport(rep ops.Report) Result {
	switch r := rep.(type) {
	case ops.CheckReport:
		return FromCheck(r)
	case ops.MemoReport:
		return FromMemo(r)
	case ops.ProbeReport:
		return FromProbe(r)
	case ops.LintReport:
		return FromLintReport(r)
	case ops.OriginReport:
		return FromOriginScan(r)
	}
	env := rep.Common()
	return Result{Op: env.Op, URL: env.URL, Outcome: rep.Outcome(), Line: env.VerdictLine}
}

// factor is one clause of a state rule: the factor it reads, whether it
// failed, and its static message.
type factor struct {
	name   string
	failed bool
	msg    string
}

func isFalse(b *bool) bool { return b != nil && !*b }
func notTrue(b *bool) bool { return b == nil || !*b }

func falseMsg(name string) string { return name + " is false" }

func equalityMsg(name string, b *bool) string {
	if b == nil {
		return name + " is null: neither leg carries the field"
	}
	return falseMsg(name)
}

// checkClauses are the factors each check state's rule names.
func checkClauses(f verdict.CheckFactors, state verdict.State) []factor {
	switch state {
	case verdict.NotA402:
		msg := "reason is null"
		if f.Reason != nil {
			msg = "reason " + *f.Reason
		}
		if f.Status != nil {
			msg += fmt.Sprintf(" (status %d)", *f.Status)
		}
		return []factor{{"reason", true, msg}}
	case verdict.ResourceMismatch:
		return []factor{{"resource_equals_called_url", isFalse(f.ResourceEqualsCalledURL), falseMsg("resource_equals_called_url")}}
	case verdict.HeaderMissing:
		return []factor{
			{"header_present", isFalse(f.HeaderPresent), falseMsg("header_present")},
			{"header_decodable", isFalse(f.HeaderDecodable), falseMsg("header_decodable")},
		}
	case verdict.AmountsOnly:
		return []factor{
			{"recipient_present", isFalse(f.RecipientPresent), falseMsg("recipient_present")},
			{"token_account_present", isFalse(f.TokenAccountPresent), falseMsg("token_account_present")},
			{"memo_present", isFalse(f.MemoPresent), falseMsg("memo_present")},
		}
	case verdict.Unconfigured:
		return []factor{
			{"amounts_present", isFalse(f.AmountsPresent), falseMsg("amounts_present")},
			{"amounts_consistent", isFalse(f.AmountsConsistent), falseMsg("amounts_consistent")},
			{"recipient_present", isFalse(f.RecipientPresent), falseMsg("recipient_present")},
			{"token_account_present", isFalse(f.TokenAccountPresent), falseMsg("token_account_present")},
			{"memo_present", isFalse(f.MemoPresent), falseMsg("memo_present")},
			{"resource_present", isFalse(f.ResourcePresent), falseMsg("resource_present")},
			{"header_body_memo_equal", notTrue(f.HeaderBodyMemoEqual), equalityMsg("header_body_memo_equal", f.HeaderBodyMemoEqual)},
			{"header_body_amount_equal", notTrue(f.HeaderBodyAmountEqual), equalityMsg("header_body_amount_equal", f.HeaderBodyAmountEqual)},
			{"header_body_pay_to_equal", notTrue(f.HeaderBodyPayToEqual), equalityMsg("header_body_pay_to_equal", f.HeaderBodyPayToEqual)},
			{"body_parseable", isFalse(f.BodyParseable), falseMsg("body_parseable")},
		}
	}
	return nil
}

// stateCases is the shared shape of check and memo: a "state" case that
// fails (an error) unless the state is the passing one, then one case per
// factor any state's rule names (the same cases on every run, so test
// reporters can follow them), failing under the current state's rule when
// that rule names it and it failed.
func stateCases(op, state, pass string, reason *string, all []string, clauses []factor) []Case {
	id := ruleID(op, state)
	st := Case{Name: "state"}
	if state != pass {
		msg := "state " + state
		if reason != nil {
			msg += " (reason " + *reason + ")"
		}
		st.Findings = []Finding{{Rule: id, Level: LevelError, Field: "state", Message: msg + ": " + stateText[id]}}
	}
	cases := []Case{st}
	at := map[string]int{}
	for _, name := range all {
		at[name] = len(cases)
		cases = append(cases, Case{Name: name})
	}
	for _, c := range clauses {
		if !c.failed || state == pass {
			continue
		}
		i, ok := at[c.name]
		if !ok {
			i = len(cases)
			at[c.name] = i
			cases = append(cases, Case{Name: c.name})
		}
		cases[i].Findings = append(cases[i].Findings, Finding{Rule: id, Level: LevelError, Field: c.name, Message: c.msg})
	}
	return cases
}

// factorNames is every factor name the clauses of states name, in order.
func factorNames[F any](states []string, clauses func(F, verdict.State) []factor) []string {
	var zero F
	var names []string
	seen := map[string]bool{}
	for _, s := range states {
		for _, c := range clauses(zero, verdict.State(s)) {
			if !seen[c.name] {
				seen[c.name] = true
				names = append(names, c.name)
			}
		}
	}
	return names
}

// The factor names are read from the criteria on first use, not at start-up.
var (
	checkFactorNames = sync.OnceValue(func() []string { return factorNames(criteria.Payability().States, checkClauses) })
	memoFactorNames  = sync.OnceValue(func() []string { return factorNames(criteria.Payability().MemoOp.States, memoClauses) })
)

// FromCheck maps a check report: any state but POPULATED is an error, on the
// state and on every factor its rule names that failed; the description
// flag is a note.
func FromCheck(r ops.CheckReport) Result {
	cases := stateCases(ops.OpCheck, string(r.State), string(verdict.Populated), nil, checkFactorNames(), checkClauses(r.Factors, r.State))
	flag := Case{Name: "description_overlong"}
	if r.Factors.DescriptionOverlong != nil && *r.Factors.DescriptionOverlong {
		flag.Findings = []Finding{{Rule: ruleID(ops.OpCheck, "description_flag"), Level: LevelNote,
			Field: "description_overlong", Message: "description_overlong is true: " + stateText["check/description_flag"]}}
	}
	cases = append(cases, flag)
	return Result{Op: r.Op, URL: r.URL, Outcome: string(r.State), Line: r.VerdictLine, Cases: cases}
}

// memoClauses are the factors each memo state's rule names.
func memoClauses(f verdict.MemoFactors, state verdict.State) []factor {
	var out []factor
	fetches := []struct {
		name string
		f    verdict.FetchFactors
	}{{"fetch1", f.Fetch1}, {"fetch2", f.Fetch2}}
	switch state {
	case verdict.NotA402:
		for _, x := range fetches {
			out = append(out,
				factor{x.name + ".fetch_ok", !x.f.FetchOK, x.name + ".fetch_ok is false"},
				factor{x.name + ".is_402", isFalse(x.f.Is402), x.name + ".is_402 is false" + statusOf(x.f.Status)},
				factor{x.name + ".body_over_cap", x.f.BodyOverCap != nil && *x.f.BodyOverCap, x.name + ".body_over_cap is true"})
		}
	case verdict.MemoAbsent:
		for _, x := range fetches {
			out = append(out, factor{x.name + ".body_memo_present", isFalse(x.f.BodyMemoPresent), x.name + ".body_memo_present is false"})
		}
	case verdict.LegMismatch:
		out = append(out,
			factor{"memo_equality_fetch1", isFalse(f.MemoEqualityFetch1), falseMsg("memo_equality_fetch1")},
			factor{"memo_equality_fetch2", isFalse(f.MemoEqualityFetch2), falseMsg("memo_equality_fetch2")})
	case verdict.MemoReused:
		out = append(out, factor{"body_memos_unique", isFalse(f.BodyMemosUnique), falseMsg("body_memos_unique")})
	}
	return out
}

func statusOf(s *int) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(" (status %d)", *s)
}

// FromMemo maps a memo report: any state but BOUND is an error.
func FromMemo(r ops.MemoReport) Result {
	cases := stateCases(ops.OpMemo, string(r.State), string(verdict.Bound), r.Reason, memoFactorNames(), memoClauses(r.Factors, r.State))
	return Result{Op: r.Op, URL: r.URL, Outcome: string(r.State), Line: r.VerdictLine, Cases: cases}
}

// FromProbe maps a probe report: a FAIL-OPEN exposure is an error, a
// METHOD-UNPAID-2XX exposure and a PRESENT-FAIL-DIRTY (or UNGRADED) rail are
// warnings, an ABSENT rail a note. The missing_memo and bogus probes are not
// rails: their grades other than FAIL-OPEN are notes.
func FromProbe(r ops.ProbeReport) Result {
	var cases []Case
	exposed := map[string]bool{}
	for _, e := range r.Exposures {
		exposed[e] = true
	}
	graded := []struct {
		id   string
		g    verdict.RailGrade
		rail bool
	}{
		{"direct", r.Grades.Direct, true}, {"facilitator", r.Grades.Facilitator, true},
		{"missing_memo", r.Grades.MissingMemo, false}, {"bogus", r.Grades.Bogus, false},
	}
	for _, p := range graded {
		c := Case{Name: "grades." + p.id}
		field := "grades." + p.id
		if exposed["FAIL-OPEN:"+p.id] {
			c.Findings = append(c.Findings, Finding{Rule: ruleID(ops.OpProbe, "FAIL-OPEN"), Level: LevelError,
				Field: field, Message: "exposure FAIL-OPEN:" + p.id + statusOf(p.g.Status) + ": " + stateText["probe/FAIL-OPEN"]})
		}
		l := railLevel(p.g.Grade)
		if !p.rail && l != "" {
			l = LevelNote
		}
		if l != "" {
			kind := "rail"
			if !p.rail {
				kind = "probe"
			}
			msg := fmt.Sprintf("%s %s graded %s (reason %s)%s", kind, p.id, p.g.Grade, p.g.Reason, statusOf(p.g.Status))
			c.Findings = append(c.Findings, Finding{Rule: ruleID(ops.OpProbe, string(p.g.Grade)), Level: l, Field: field, Message: msg})
		}
		cases = append(cases, c)
	}
	for _, m := range []string{"GET", "HEAD", "POST"} {
		c := Case{Name: "methods." + m}
		if exposed["METHOD-UNPAID-2XX:"+m] {
			c.Findings = []Finding{{Rule: ruleID(ops.OpProbe, "METHOD-UNPAID-2XX"), Level: LevelWarning,
				Field: "methods." + m + ".unpaid_2xx", Message: "exposure METHOD-UNPAID-2XX:" + m + ": " + stateText["probe/METHOD-UNPAID-2XX"]}}
		}
		cases = append(cases, c)
	}
	outcome := fmt.Sprintf("%s (direct: %s · facilitator: %s)", r.ProbeResult.Outcome, r.Grades.Direct.Grade, r.Grades.Facilitator.Grade)
	return Result{Op: r.Op, URL: r.URL, Outcome: outcome, Line: r.VerdictLine, Cases: cases}
}

// Refused is a scan entry the URL policy (or an input rule) refused: an
// error on rule refused/<rule>, since no verdict was produced.
func Refused(op, url, rule string) Result {
	return Result{Op: op, URL: url, Outcome: "refused: " + rule, Cases: []Case{{Name: "url", Findings: []Finding{{
		Rule: "refused/" + rule, Level: LevelError, Field: "url", Message: "refused by rule " + rule + "; no request was sent"}}}}}
}

// Problem is a scan entry that produced no verdict through no fault of its
// URL (cancelled, internal): an error on rule error/<code>, since a pass
// would overstate it.
func Problem(op, url, code string) Result {
	return Result{Op: op, URL: url, Outcome: "error: " + code, Cases: []Case{{Name: "op", Findings: []Finding{{
		Rule: "error/" + code, Level: LevelError, Field: "op", Message: "no verdict: " + code}}}}}
}
