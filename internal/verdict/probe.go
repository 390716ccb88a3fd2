package verdict

import (
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// Grade is a rail-probe grade.
type Grade string

// The three published rail grades, plus UNGRADED for a probe that could not
// be graded (never converted into a grade).
const (
	PresentFailClosed Grade = "PRESENT-FAIL-CLOSED"
	PresentFailDirty  Grade = "PRESENT-FAIL-DIRTY"
	Absent            Grade = "ABSENT"
	Ungraded          Grade = "UNGRADED"
)

// Probe outcomes of the whole call.
const (
	Probed    = "PROBED"
	NotProbed = "NOT-PROBED"
)

// Probe grade reasons: one per rule of the grade_rule, plus baseline_failed
// (R25).
const (
	ReasonProbeFailed           = "probe_failed"
	ReasonFailOpen2xx           = "fail_open_2xx"
	ReasonRejectedWithReason    = "rejected_with_reason"
	ReasonPaymentNeverEvaluated = "payment_never_evaluated"
	ReasonDirtyRejection        = "dirty_rejection"
	ReasonBaselineFailed        = "baseline_failed"
)

// ProbeIDs is the published probe inventory, in order.
var ProbeIDs = [7]string{"baseline_get", "head", "post_unpaid", "direct", "facilitator", "missing_memo", "bogus"}

// ProbeMethods are the methods of the inventory, in the same order.
var ProbeMethods = [7]string{"GET", "HEAD", "POST", "POST", "POST", "POST", "POST"}

// gradedProbes are the inventory indexes graded by the grade_rule.
var gradedProbes = [4]int{3, 4, 5, 6}

// RailGrade is the grade of one graded probe.
type RailGrade struct {
	Grade    Grade  `json:"grade"`
	Reason   string `json:"reason"`
	Status   *int   `json:"status"`
	FailOpen bool   `json:"fail_open"`
}

// Grades holds the four graded probes; direct and facilitator are the rails.
type Grades struct {
	Direct      RailGrade `json:"direct"`
	Facilitator RailGrade `json:"facilitator"`
	MissingMemo RailGrade `json:"missing_memo"`
	Bogus       RailGrade `json:"bogus"`
}

// ProbeEntry reports one of the seven probes.
type ProbeEntry struct {
	ID      string          `json:"id"`
	Method  string          `json:"method"`
	Status  *int            `json:"status"`
	Outcome capture.Outcome `json:"outcome"`
}

// MethodEntry is one row of the GET/HEAD/POST matrix (R26).
type MethodEntry struct {
	Status    *int  `json:"status"`
	Gated     *bool `json:"gated"`
	Unpaid2xx *bool `json:"unpaid_2xx"`
}

// Methods is the method matrix, from the baseline_get, head and post_unpaid probes.
type Methods struct {
	GET  MethodEntry `json:"GET"`
	HEAD MethodEntry `json:"HEAD"`
	POST MethodEntry `json:"POST"`
}

// ProbeResult is the A3 report body.
type ProbeResult struct {
	Outcome   string       `json:"outcome"`
	Grades    Grades       `json:"grades"`
	Probes    []ProbeEntry `json:"probes"`
	Methods   Methods      `json:"methods"`
	Exposures []string     `json:"exposures"`
}

func is2xx(status int) bool { return status >= 200 && status <= 299 }

// probeFacts is what the grade_rule looks at in one capture, read once.
type probeFacts struct {
	c capture.Capture
	// parseable: the body is one JSON value (R17); reason: it is an object
	// with a non-empty error, reason or detail string (R10).
	parseable, reason bool
}

type gradeRule struct {
	grade  Grade
	reason string
	match  func(probeFacts) bool
}

// gradeRules is the criteria's grade_rule, in order: first match wins.
var gradeRules = []gradeRule{
	{Ungraded, ReasonProbeFailed, func(f probeFacts) bool { return !f.c.Usable() }},
	{PresentFailDirty, ReasonFailOpen2xx, func(f probeFacts) bool { return is2xx(f.c.Status) }},
	{PresentFailClosed, ReasonRejectedWithReason, func(f probeFacts) bool { return f.c.Status == 402 && f.reason }},
	{Absent, ReasonPaymentNeverEvaluated, func(f probeFacts) bool { return f.c.Status == 402 && f.parseable }},
	{PresentFailDirty, ReasonDirtyRejection, func(probeFacts) bool { return true }},
}

// GradeProbe grades one graded probe's capture by the grade_rule.
func GradeProbe(c capture.Capture) RailGrade {
	f := probeFacts{c: c}
	if c.Usable() && c.Status == 402 {
		// The body is read once, and only where a rule looks at it; the
		// body is parsed as the challenge body is (R17).
		f.parseable, f.reason = x402.RejectionReason(c.Body)
	}
	for _, rule := range gradeRules {
		if rule.match(f) {
			g := RailGrade{Grade: rule.grade, Reason: rule.reason, FailOpen: rule.reason == ReasonFailOpen2xx}
			if c.Responded() {
				g.Status = ptr(c.Status)
			}
			return g
		}
	}
	panic("unreachable: the last grade rule always matches")
}

func methodEntry(c capture.Capture) MethodEntry {
	if !c.Responded() {
		return MethodEntry{}
	}
	return MethodEntry{Status: ptr(c.Status), Gated: ptr(c.Status == 402), Unpaid2xx: ptr(is2xx(c.Status))}
}

// Probe grades the seven captures of the published inventory, in inventory
// order (A3). Missing captures count as not sent.
func Probe(captures []capture.Capture) ProbeResult {
	var cs [7]capture.Capture
	for i := range cs {
		cs[i] = capture.Capture{Outcome: capture.NotSent}
		if i < len(captures) {
			cs[i] = captures[i]
		}
	}
	r := ProbeResult{Outcome: Probed, Probes: make([]ProbeEntry, 0, 7), Exposures: []string{}}
	baselineFailed := cs[0].Outcome != capture.OK || !cs[0].Usable()
	if baselineFailed {
		r.Outcome = NotProbed
		for i := 1; i < 7; i++ {
			cs[i] = capture.Capture{Outcome: capture.NotSent}
		}
	}
	for i, c := range cs {
		e := ProbeEntry{ID: ProbeIDs[i], Method: ProbeMethods[i], Outcome: c.Outcome}
		if c.Responded() {
			e.Status = ptr(c.Status)
		}
		if c.Outcome == capture.OK && c.OverCapBody() {
			e.Outcome = capture.OverCap
		}
		r.Probes = append(r.Probes, e)
	}
	r.Methods = Methods{GET: methodEntry(cs[0]), HEAD: methodEntry(cs[1]), POST: methodEntry(cs[2])}

	grades := [4]*RailGrade{&r.Grades.Direct, &r.Grades.Facilitator, &r.Grades.MissingMemo, &r.Grades.Bogus}
	for k, i := range gradedProbes {
		if baselineFailed {
			*grades[k] = RailGrade{Grade: Ungraded, Reason: ReasonBaselineFailed}
			continue
		}
		*grades[k] = GradeProbe(cs[i])
	}

	for _, m := range []struct {
		name string
		e    MethodEntry
	}{{"GET", r.Methods.GET}, {"HEAD", r.Methods.HEAD}, {"POST", r.Methods.POST}} {
		if isTrue(m.e.Unpaid2xx) {
			r.Exposures = append(r.Exposures, "METHOD-UNPAID-2XX:"+m.name)
		}
	}
	for k, i := range gradedProbes {
		if grades[k].FailOpen {
			r.Exposures = append(r.Exposures, "FAIL-OPEN:"+ProbeIDs[i])
		}
	}
	return r
}
