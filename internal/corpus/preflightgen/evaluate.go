package main

import "net/http"

// The expected output: the record's decision part, member names and order
// as docs/report-format.md gives them.

type fetchOut struct {
	Role    string `json:"role"`
	Method  string `json:"method"`
	Outcome string `json:"outcome"`
	Status  int    `json:"status"`
	Error   string `json:"error,omitempty"`
}

type probeOut struct {
	ID      string  `json:"id"`
	Method  string  `json:"method"`
	Header  string  `json:"header,omitempty"`
	Sent    bool    `json:"sent"`
	Outcome string  `json:"outcome,omitempty"`
	Status  int     `json:"status"`
	Error   string  `json:"error,omitempty"`
	Grade   *string `json:"grade"`
}

type selectedOut struct {
	Leg         string `json:"leg"`
	Index       int    `json:"index"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
}

type lintOut struct {
	Errors   int  `json:"errors"`
	Warnings int  `json:"warnings"`
	Entries  int  `json:"entries"`
	Conforms bool `json:"conforms"`
}

type cortxIn struct {
	Action string `json:"action"`
	Rule   string `json:"rule,omitempty"`
}

type expected struct {
	Decision      string       `json:"decision"`
	Reasons       []string     `json:"reasons"`
	Method        string       `json:"method"`
	Fetches       []fetchOut   `json:"fetches"`
	SelectedEntry *selectedOut `json:"selected_entry"`
	TermsSHA256   *string      `json:"terms_sha256"`
	Lint          *lintOut     `json:"lint"`
	Challenge     struct {
		Memo  string `json:"memo"`
		Nonce string `json:"nonce"`
	} `json:"challenge"`
	Probes       []probeOut `json:"probes"`
	MethodMatrix []probeOut `json:"method_matrix"`
	CORTX        *cortxIn   `json:"cortx"`
}

// caseInput is one case's observations, as the corpus holds them.
type caseInput struct {
	Options    options         `json:"options"`
	Lint       []methodCapture `json:"lint"`
	LintResult *lintResult     `json:"lint_result"`
	Second     *capture        `json:"second"`
	Answers    []answer        `json:"answers"`
	CORTX      *cortxIn        `json:"cortx"`
}

type methodCapture struct {
	Method  string  `json:"method"`
	Capture capture `json:"capture"`
}

type answer struct {
	ID      string  `json:"id"`
	Method  string  `json:"method"`
	Capture capture `json:"capture"`
}

func evaluate(in caseInput) expected {
	out := expected{Reasons: []string{}, Fetches: []fetchOut{}, Probes: []probeOut{}, MethodMatrix: []probeOut{}, CORTX: in.CORTX}
	for _, f := range in.Lint {
		out.Fetches = append(out.Fetches, fetchRecordOf("lint", f.Method, f.Capture))
	}
	out.Challenge.Memo, out.Challenge.Nonce = "absent", "absent"
	var stop, hold []string
	gated := observed{}
	if len(in.Lint) > 0 {
		last := in.Lint[len(in.Lint)-1]
		out.Method = last.Method
		gated = last.Capture.observed()
	}
	cortx := func() {
		if in.CORTX == nil {
			return
		}
		switch in.CORTX.Action {
		case "favourable":
		case "warn", "do_not_call":
			hold = append(hold, "cortx_unfavourable")
		default:
			hold = append(hold, "cortx_unverified")
		}
	}
	if !(gated.answered() && gated.status == 402) {
		stop = append(stop, "not_402")
		cortx()
		return finish(out, stop, hold)
	}
	if in.Second != nil {
		out.Fetches = append(out.Fetches, fetchRecordOf("second", out.Method, *in.Second))
	}
	var l lintData
	if in.LintResult != nil {
		l = in.LintResult.data()
	}
	lo := &lintOut{Entries: len(l.Entries), Conforms: l.Conforms}
	for _, f := range l.Findings {
		if f.Severity == "error" {
			lo.Errors++
		} else if f.Severity == "warn" {
			lo.Warnings++
		}
	}
	out.Lint = lo

	header, body := legs(gated)
	sel, matched := selectEntry(candidatesOf(header, body), l, in.Options)
	dialect := 1
	if sel != nil {
		dialect = sel.version
	} else if header != nil && header.version == 2 {
		dialect = 2
	}
	if sel != nil {
		out.SelectedEntry = &selectedOut{sel.leg, sel.index, sel.version, identOrEmpty(text(sel.entry, "scheme")), identOrEmpty(sel.caip2)}
		if h := termsHash(sel); h != "" {
			out.TermsSHA256 = &h
		}
	}

	// The second fetch: memo of the selected entry, and the sign-in-with-x nonce.
	var second observed
	secondOK := false
	if in.Second != nil {
		second = in.Second.observed()
		secondOK = second.answered()
	}
	sh, sb := legs(second)
	if sel != nil {
		extra, _ := sel.entry["extra"].(map[string]any)
		first := text(extra, "memo")
		again := ""
		d := sb
		if sel.leg == "header" {
			d = sh
		}
		if d != nil && sel.index < len(d.accepts) {
			if e, ok := d.accepts[sel.index].(map[string]any); ok {
				x, _ := e["extra"].(map[string]any)
				again = text(x, "memo")
			}
		}
		out.Challenge.Memo = freshness(first, again, secondOK && d != nil)
	}
	nonce, nonceLeg := "", ""
	for _, d := range []*decoded{header, body} {
		if d != nil && siwxNonce(d.root) != "" {
			nonce, nonceLeg = siwxNonce(d.root), d.leg
			break
		}
	}
	if nonce != "" {
		d := sb
		if nonceLeg == "header" {
			d = sh
		}
		again := ""
		if d != nil {
			again = siwxNonce(d.root)
		}
		out.Challenge.Nonce = freshness(nonce, again, secondOK && d != nil)
	}

	// The probes, in the published order.
	paymentHeader := "X-PAYMENT"
	if dialect == 2 {
		paymentHeader = "PAYMENT-SIGNATURE"
	}
	other := http.MethodPost
	if out.Method == http.MethodPost {
		other = http.MethodGet
	}
	grades := map[string]string{}
	for _, p := range []struct{ id, method, header string }{
		{"p1_structural", out.Method, paymentHeader}, {"p2_bogus", out.Method, paymentHeader},
		{"head", http.MethodHead, ""}, {"other", other, ""},
	} {
		rec := probeOut{ID: p.id, Method: p.method, Header: p.header}
		for _, a := range in.Answers {
			if a.ID != p.id || a.Capture.Outcome == "not_sent" || (p.id == "p1_structural" && !probeable(sel)) {
				continue
			}
			g := gradeOf(gated, a.Capture.observed())
			grades[p.id] = g
			rec.Sent, rec.Outcome, rec.Status, rec.Grade = true, a.Capture.Outcome, statusOf(a.Capture), &g
		}
		if p.header == "" {
			out.MethodMatrix = append(out.MethodMatrix, rec)
		} else {
			out.Probes = append(out.Probes, rec)
		}
	}

	if sel == nil && !matched {
		stop = append(stop, "no_payable_entry")
	}
	if sel == nil && matched {
		stop = append(stop, "over_budget")
	}
	if grades["p1_structural"] == "FAIL-OPEN" || grades["p2_bogus"] == "FAIL-OPEN" {
		stop = append(stop, "fail_open")
	}
	if l.resourceErr() {
		stop = append(stop, "resource_mismatch")
	}
	if g := grades["p1_structural"]; g != "CLOSED" && g != "FAIL-OPEN" {
		hold = append(hold, "payment_not_verified")
	}
	for _, f := range []string{out.Challenge.Memo, out.Challenge.Nonce} {
		if f == "repeated" || f == "unreadable" {
			hold = append(hold, "challenge_static")
			break
		}
	}
	if grades["head"] == "FAIL-OPEN" || grades["other"] == "FAIL-OPEN" {
		hold = append(hold, "method_open")
	}
	if sel != nil && l.hasWarning(sel.leg, sel.index) {
		hold = append(hold, "lint_warnings")
	}
	if sel != nil && !probeable(sel) {
		hold = append(hold, "scheme_not_probed")
	}
	cortx()
	return finish(out, stop, hold)
}

func finish(out expected, stop, hold []string) expected {
	out.Reasons = append(append(out.Reasons, stop...), hold...)
	switch {
	case len(stop) > 0:
		out.Decision = "STOP"
	case len(hold) > 0:
		out.Decision = "HOLD"
	default:
		out.Decision = "GO"
	}
	return out
}

func fetchRecordOf(role, method string, c capture) fetchOut {
	return fetchOut{Role: role, Method: method, Outcome: c.Outcome, Status: statusOf(c)}
}

func statusOf(c capture) int {
	if c.Status == nil {
		return 0
	}
	return *c.Status
}
