package preflight

import (
	"regexp"
	"sync"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
)

// Decision is the answer to "may the agent pay?".
type Decision string

const (
	Go   Decision = "GO"
	Hold Decision = "HOLD"
	Stop Decision = "STOP"
)

// Reason is a closed-form code of the decision table.
type Reason string

// The STOP reasons, in the document's order.
const (
	ReasonUnreachable      Reason = "unreachable"
	ReasonNot402           Reason = "not_402"
	ReasonNoPayableEntry   Reason = "no_payable_entry"
	ReasonOverBudget       Reason = "over_budget"
	ReasonFailOpen         Reason = "fail_open"
	ReasonResourceMismatch Reason = "resource_mismatch"
)

// The HOLD reasons, in the document's order.
const (
	ReasonPaymentNotVerified Reason = "payment_not_verified"
	// The dialect rows: the other advertised dialect's P1 was not shown to
	// be refused.
	ReasonNotVerifiedV2     Reason = "payment_not_verified_v2"
	ReasonNotVerifiedV1     Reason = "payment_not_verified_v1"
	ReasonChallengeStatic   Reason = "challenge_static"
	ReasonMethodOpen        Reason = "method_open"
	ReasonLintWarnings      Reason = "lint_warnings"
	ReasonSchemeNotProbed   Reason = "scheme_not_probed"
	ReasonCortxUnfavourable Reason = "cortx_unfavourable"
	ReasonCortxUnverified   Reason = "cortx_unverified"
)

// Freshness says whether a memo or nonce was shown to change between the two
// unpaid fetches.
type Freshness string

const (
	FreshAbsent     Freshness = "absent"     // the first challenge carries none: nothing to show
	FreshChanged    Freshness = "fresh"      // both carry one and they differ
	FreshRepeated   Freshness = "repeated"   // the second carries the same value
	FreshUnreadable Freshness = "unreadable" // the second fetch failed or carries none
)

// facts are extracted once from the input; the decision rows read only them.
type facts struct {
	got402           bool
	unreachable      bool // the gated method's unpaid fetch got no response
	sel              Selection
	grades           map[probeKey]Grade // absent when not sent
	secondary        int                // the other dialect probed (Dual); 0 when none
	memo, nonce      Freshness
	resourceError    bool
	warned           bool
	cortx            *CORTX
	cortxFavourable  bool
	cortxUnfavourabl bool
}

// probeKey names a probe: its id and, for a payment probe, its dialect.
type probeKey struct {
	id      string
	dialect int
}

// failOpen: a payment probe of any dialect graded FAIL-OPEN.
func (f facts) failOpen() bool {
	for k, g := range f.grades {
		if (k.id == ProbeP1 || k.id == ProbeP2) && g == FailOpen {
			return true
		}
	}
	return false
}

func notVerified(g Grade) bool { return g != Closed && g != FailOpen }

type decisionRow struct {
	reason Reason
	stop   bool
	when   func(f facts) bool
}

// decisionRows are the document's decision table: STOP rows, then HOLD rows.
var decisionRows = []decisionRow{
	{ReasonUnreachable, true, func(f facts) bool { return f.unreachable }},
	{ReasonNot402, true, func(f facts) bool { return !f.got402 && !f.unreachable }},
	{ReasonNoPayableEntry, true, func(f facts) bool { return f.got402 && f.sel.Selected == nil && !f.sel.AnyMatch }},
	{ReasonOverBudget, true, func(f facts) bool { return f.got402 && f.sel.Selected == nil && f.sel.AnyMatch }},
	{ReasonFailOpen, true, func(f facts) bool { return f.failOpen() }},
	{ReasonResourceMismatch, true, func(f facts) bool { return f.got402 && f.resourceError }},

	{ReasonPaymentNotVerified, false, func(f facts) bool {
		return f.got402 && notVerified(f.grades[probeKey{ProbeP1, f.sel.Dialect}])
	}},
	{ReasonNotVerifiedV2, false, func(f facts) bool { return f.secondary == 2 && notVerified(f.grades[probeKey{ProbeP1, 2}]) }},
	{ReasonNotVerifiedV1, false, func(f facts) bool { return f.secondary == 1 && notVerified(f.grades[probeKey{ProbeP1, 1}]) }},
	{ReasonChallengeStatic, false, func(f facts) bool {
		return f.memo == FreshRepeated || f.memo == FreshUnreadable || f.nonce == FreshRepeated || f.nonce == FreshUnreadable
	}},
	{ReasonMethodOpen, false, func(f facts) bool {
		return f.grades[probeKey{ProbeHead, 0}] == FailOpen || f.grades[probeKey{ProbeOther, 0}] == FailOpen
	}},
	{ReasonLintWarnings, false, func(f facts) bool { return f.sel.Selected != nil && f.warned }},
	{ReasonSchemeNotProbed, false, func(f facts) bool { return f.sel.Selected != nil && !f.sel.Probed() }},
	{ReasonCortxUnfavourable, false, func(f facts) bool { return f.cortx != nil && f.cortxUnfavourabl }},
	{ReasonCortxUnverified, false, func(f facts) bool { return f.cortx != nil && !f.cortxFavourable && !f.cortxUnfavourabl }},
}

// StopReasons and HoldReasons list the table's codes in order.
func StopReasons() []Reason { return reasonsOf(true) }
func HoldReasons() []Reason { return reasonsOf(false) }

func reasonsOf(stop bool) []Reason {
	var out []Reason
	for _, r := range decisionRows {
		if r.stop == stop {
			out = append(out, r.reason)
		}
	}
	return out
}

// decide applies every row and returns the decision with every reason that
// applies: STOP rows first, then HOLD rows, in table order.
func decide(f facts) (Decision, []Reason) {
	reasons := []Reason{}
	stop, hold := false, false
	for _, r := range decisionRows {
		if r.when(f) {
			reasons = append(reasons, r.reason)
			stop = stop || r.stop
			hold = hold || !r.stop
		}
	}
	switch {
	case stop:
		return Stop, reasons
	case hold:
		return Hold, reasons
	}
	return Go, reasons
}

var resourceField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(resource(\..+)?|accepts\[[0-9]+\]\.resource)$`) }) // compiled on first use, not at start-up

// resourceError reports whether lint found an error on a resource field.
func resourceError(res lint.Result) bool {
	for _, f := range res.Findings {
		if f.Severity == lint.Error && resourceField().MatchString(f.Field) {
			return true
		}
	}
	return false
}

// memoFreshness compares the selected entry's extra.memo with the same
// entry of the second answer.
func memoFreshness(sel *Entry, second *capture.Capture) Freshness {
	if sel == nil {
		return FreshAbsent
	}
	first := memoOf(sel.entry)
	if first == "" {
		return FreshAbsent
	}
	if second == nil || !second.Responded() {
		return FreshUnreadable
	}
	ch := lint.Decode(*second)
	d := ch.Body
	if sel.Leg == lint.LegHeader {
		d = ch.Header
	}
	e, ok := d.Entry(sel.Index)
	if !ok {
		return FreshUnreadable
	}
	return compare(first, memoOf(e))
}

func compare(first, second string) Freshness {
	switch second {
	case "":
		return FreshUnreadable
	case first:
		return FreshRepeated
	}
	return FreshChanged
}

func memoOf(entry map[string]any) string {
	extra, _ := entry["extra"].(map[string]any)
	return str(extra, "memo")
}

// nonceOf reads extensions["sign-in-with-x"].info.nonce, header first, else
// body, and says which leg held it.
func nonceOf(ch lint.Challenge) (string, lint.Leg) {
	for _, d := range []*lint.Document{ch.Header, ch.Body} {
		if d == nil {
			continue
		}
		if n := siwxNonce(d.Root); n != "" {
			return n, d.Leg
		}
	}
	return "", ""
}

func siwxNonce(root map[string]any) string {
	ext, _ := root["extensions"].(map[string]any)
	siwx, _ := ext["sign-in-with-x"].(map[string]any)
	info, _ := siwx["info"].(map[string]any)
	return str(info, "nonce")
}

func nonceFreshness(first lint.Challenge, second *capture.Capture) Freshness {
	n, leg := nonceOf(first)
	if n == "" {
		return FreshAbsent
	}
	if second == nil || !second.Responded() {
		return FreshUnreadable
	}
	ch := lint.Decode(*second)
	d := ch.Body
	if leg == lint.LegHeader {
		d = ch.Header
	}
	if d == nil {
		return FreshUnreadable
	}
	return compare(n, siwxNonce(d.Root))
}
