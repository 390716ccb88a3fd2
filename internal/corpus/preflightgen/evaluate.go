package main

import (
	"encoding/hex"
	"net/http"
)

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
	Dialect int     `json:"dialect,omitempty"`
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
	FetchError    string       `json:"fetch_error,omitempty"`
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
	Dialects     []int      `json:"dialects"`
}

// probeEnv is the check time and random stream P1 draws on.
type probeEnv struct {
	Now       int64  `json:"now"`
	RandomHex string `json:"random_hex"`
}

// paymentProbe is a payment probe request the case expects: the header's
// name and exact value.
type paymentProbe struct {
	ID      string `json:"id"`
	Dialect int    `json:"dialect"`
	Method  string `json:"method"`
	Header  string `json:"header"`
	Value   string `json:"value"`
}

// sellerModel answers a payment probe as a seller would: it is given the
// probe's dialect, its header value and the entry offered on that leg.
type sellerModel func(dialect int, value string, offered *candidate, now int64) capture

// caseInput is one case's observations, as the corpus holds them.
type caseInput struct {
	Options    options         `json:"options"`
	Lint       []methodCapture `json:"lint"`
	LintResult *lintResult     `json:"lint_result"`
	Second     *capture        `json:"second"`
	Answers    []answer        `json:"answers"`
	CORTX      *cortxIn        `json:"cortx"`
	ProbeEnv   *probeEnv       `json:"probe_env,omitempty"`
	// seller, when set, answers the payment probes from their bytes (the
	// partial-verifier cases); its answers replace the given ones.
	seller sellerModel
}

type methodCapture struct {
	Method  string  `json:"method"`
	Capture capture `json:"capture"`
}

type answer struct {
	ID      string  `json:"id"`
	Dialect int     `json:"dialect,omitempty"`
	Method  string  `json:"method"`
	Capture capture `json:"capture"`
}

func evaluate(in caseInput) expected {
	out, _ := evaluateWithProbes(&in)
	return out
}

// evaluateWithProbes decides a case and returns the payment probes it
// sends; with a seller model it first fills in.Answers from their bytes.
func evaluateWithProbes(in *caseInput) (expected, []paymentProbe) {
	var sent []paymentProbe
	out := expected{Reasons: []string{}, Fetches: []fetchOut{}, Probes: []probeOut{}, MethodMatrix: []probeOut{}, CORTX: in.CORTX, Dialects: []int{}}
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
	if !gated.answered() && len(in.Lint) > 0 {
		stop = append(stop, "unreachable")
		last := in.Lint[len(in.Lint)-1].Capture
		out.FetchError = last.Error
		if out.FetchError == "" {
			out.FetchError = last.Outcome
		}
		cortx()
		return finish(out, stop, hold), nil
	}
	if !(gated.answered() && gated.status == 402) {
		stop = append(stop, "not_402")
		cortx()
		return finish(out, stop, hold), nil
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

	// The dialects: the primary, and the secondary when the challenge
	// advertises both (a v2 header with entries and a v1 body with entries).
	type leg struct {
		dialect int
		entry   *candidate
	}
	legsOut := []leg{{dialect, sel}}
	if header != nil && header.version == 2 && len(header.accepts) > 0 && body != nil && body.version == 1 && len(body.accepts) > 0 {
		second := leg{dialect: 3 - dialect}
		if sel != nil {
			var firstClean *candidate
			for _, c := range candidatesOf(header, body) {
				c := c
				if c.version != second.dialect || !l.isClean(c.leg, c.index) {
					continue
				}
				if one, _ := selectEntry([]candidate{c}, l, in.Options); one != nil {
					second.entry = one
					break
				}
				if firstClean == nil {
					firstClean = &c
				}
			}
			if second.entry == nil {
				second.entry = firstClean
			}
		}
		legsOut = append(legsOut, second)
	}

	// The payment probes' bytes, drawn from the case's stream in order.
	var r *rng
	var now int64
	if in.ProbeEnv != nil {
		raw, _ := hex.DecodeString(in.ProbeEnv.RandomHex)
		r, now = &rng{b: raw}, in.ProbeEnv.Now
	}
	for _, lg := range legsOut {
		name := "X-PAYMENT"
		if lg.dialect == 2 {
			name = "PAYMENT-SIGNATURE"
		}
		if r != nil {
			if v := p1Value(lg.entry, now, r); v != "" {
				sent = append(sent, paymentProbe{"p1_structural", lg.dialect, out.Method, name, v})
			}
		}
		sent = append(sent, paymentProbe{"p2_bogus", lg.dialect, out.Method, name, "bogus-not-a-payment-header"})
	}
	if in.seller != nil {
		var keep []answer
		for _, a := range in.Answers {
			if a.ID == "head" || a.ID == "other" {
				keep = append(keep, a)
			}
		}
		for _, p := range sent {
			var offered *candidate
			for _, lg := range legsOut {
				if lg.dialect == p.Dialect {
					offered = lg.entry
				}
			}
			keep = append(keep, answer{ID: p.ID, Dialect: p.Dialect, Method: p.Method, Capture: in.seller(p.Dialect, p.Value, offered, now)})
		}
		in.Answers = keep
	}

	// The probes, in the published order.
	other := http.MethodPost
	if out.Method == http.MethodPost {
		other = http.MethodGet
	}
	type key struct {
		id      string
		dialect int
	}
	grades := map[key]string{}
	grade := func(id string, d int, method, header string, sendable bool) probeOut {
		rec := probeOut{ID: id, Method: method, Header: header, Dialect: d}
		for _, a := range in.Answers {
			ad := a.Dialect
			if id == "head" || id == "other" {
				ad = 0
			} else if ad == 0 {
				ad = dialect
			}
			if a.ID != id || ad != d || a.Capture.Outcome == "not_sent" || !sendable {
				continue
			}
			g := gradeOf(gated, a.Capture.observed())
			grades[key{id, d}] = g
			rec.Sent, rec.Outcome, rec.Status, rec.Error, rec.Grade = true, a.Capture.Outcome, statusOf(a.Capture), a.Capture.Error, &g
		}
		return rec
	}
	secondary := 0
	for i, lg := range legsOut {
		out.Dialects = append(out.Dialects, lg.dialect)
		if i > 0 {
			secondary = lg.dialect
		}
		name := "X-PAYMENT"
		if lg.dialect == 2 {
			name = "PAYMENT-SIGNATURE"
		}
		out.Probes = append(out.Probes, grade("p1_structural", lg.dialect, out.Method, name, probeable(lg.entry)),
			grade("p2_bogus", lg.dialect, out.Method, name, true))
	}
	out.MethodMatrix = append(out.MethodMatrix, grade("head", 0, http.MethodHead, "", true), grade("other", 0, other, "", true))
	failOpen := false
	for k, g := range grades {
		if (k.id == "p1_structural" || k.id == "p2_bogus") && g == "FAIL-OPEN" {
			failOpen = true
		}
	}
	unverified := func(d int) bool { g := grades[key{"p1_structural", d}]; return g != "CLOSED" && g != "FAIL-OPEN" }

	if sel == nil && !matched {
		stop = append(stop, "no_payable_entry")
	}
	if sel == nil && matched {
		stop = append(stop, "over_budget")
	}
	if failOpen {
		stop = append(stop, "fail_open")
	}
	if l.resourceErr() {
		stop = append(stop, "resource_mismatch")
	}
	if unverified(dialect) {
		hold = append(hold, "payment_not_verified")
	}
	if secondary == 2 && unverified(2) {
		hold = append(hold, "payment_not_verified_v2")
	}
	if secondary == 1 && unverified(1) {
		hold = append(hold, "payment_not_verified_v1")
	}
	for _, f := range []string{out.Challenge.Memo, out.Challenge.Nonce} {
		if f == "repeated" || f == "unreadable" {
			hold = append(hold, "challenge_static")
			break
		}
	}
	if grades[key{"head", 0}] == "FAIL-OPEN" || grades[key{"other", 0}] == "FAIL-OPEN" {
		hold = append(hold, "method_open")
	}
	if sel != nil && l.hasWarning(sel.leg, sel.index) {
		hold = append(hold, "lint_warnings")
	}
	if sel != nil && !probeable(sel) {
		hold = append(hold, "scheme_not_probed")
	}
	cortx()
	return finish(out, stop, hold), sent
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
	return fetchOut{Role: role, Method: method, Outcome: c.Outcome, Status: statusOf(c), Error: c.Error}
}

func statusOf(c capture) int {
	if c.Status == nil {
		return 0
	}
	return *c.Status
}
