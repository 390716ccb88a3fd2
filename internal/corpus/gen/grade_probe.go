package main

// ProbeExpected is the probe op's result object (docs/report-format.md).
type ProbeExpected struct {
	Outcome   string       `json:"outcome"`
	Grades    Grades       `json:"grades"`
	Probes    []ProbeEntry `json:"probes"`
	Methods   Methods      `json:"methods"`
	Exposures []string     `json:"exposures"`
}

// Grades: one per graded probe (grade_rule: "applied identically to the
// direct, facilitator, missing-memo, and bogus probes").
type Grades struct {
	Direct      Grade `json:"direct"`
	Facilitator Grade `json:"facilitator"`
	MissingMemo Grade `json:"missing_memo"`
	Bogus       Grade `json:"bogus"`
}

// Grade of one probe. R25: reason is one per rule; fail_open only for rule (2).
type Grade struct {
	Grade    string `json:"grade"`
	Reason   string `json:"reason"`
	Status   *int   `json:"status"`
	FailOpen bool   `json:"fail_open"`
}

// ProbeEntry is one of the seven probes as sent.
type ProbeEntry struct {
	ID      string `json:"id"`
	Method  string `json:"method"`
	Status  *int   `json:"status"`
	Outcome string `json:"outcome"`
}

// Methods: method_rule's matrix, "per method the status answered, gated
// (status is 402), and unpaid_2xx (status 200-299 with no payment presented)".
type Methods struct {
	GET  MethodEntry `json:"GET"`
	HEAD MethodEntry `json:"HEAD"`
	POST MethodEntry `json:"POST"`
}

// MethodEntry: R26 — all null for a request that failed, timed out or was
// not sent; an over-cap response still has a status and is graded on it.
type MethodEntry struct {
	Status    *int  `json:"status"`
	Gated     *bool `json:"gated"`
	Unpaid2xx *bool `json:"unpaid_2xx"`
}

// probeInventory: the criteria's probe_inventory, in order.
var probeInventory = []struct{ id, method string }{
	{"baseline_get", "GET"},
	{"head", "HEAD"},
	{"post_unpaid", "POST"},
	{"direct", "POST"},
	{"facilitator", "POST"},
	{"missing_memo", "POST"},
	{"bogus", "POST"},
}

// gradeProbe grades the seven captures of one probe call, in inventory order.
func gradeProbe(cs []Capture) ProbeExpected {
	var out ProbeExpected
	for i, inv := range probeInventory {
		e := ProbeEntry{ID: inv.id, Method: inv.method, Status: cs[i].status(), Outcome: cs[i].Outcome}
		if cs[i].Outcome == "ok" && cs[i].overCap() {
			e.Outcome = "over_cap" // R28: a body over the cap is over the cap everywhere
		}
		out.Probes = append(out.Probes, e)
	}
	out.Methods = Methods{GET: methodEntry(cs[0]), HEAD: methodEntry(cs[1]), POST: methodEntry(cs[2])}

	// grade_rule (1): "if the baseline GET fails this way [failed, timed out,
	// or its body exceeded the cap] the whole call's outcome is NOT-PROBED and
	// every grade is UNGRADED". R9: the other six are not sent.
	if !captureRead(cs[0]) {
		ug := Grade{Grade: "UNGRADED", Reason: "baseline_failed"}
		out.Outcome = "NOT-PROBED"
		out.Grades = Grades{ug, ug, ug, ug}
	} else {
		out.Outcome = "PROBED"
		out.Grades = Grades{gradeOne(cs[3]), gradeOne(cs[4]), gradeOne(cs[5]), gradeOne(cs[6])}
	}

	// method_rule: "A method answering 200-unpaid is a named exposure finding
	// (METHOD-UNPAID-2XX:<METHOD>); each garbage, missing-memo, or bogus probe
	// answered 2xx is a named finding (FAIL-OPEN:<probe-id>)". R26: methods in
	// GET, HEAD, POST order, then probes in inventory order.
	out.Exposures = []string{}
	for _, m := range []struct {
		name string
		e    MethodEntry
	}{{"GET", out.Methods.GET}, {"HEAD", out.Methods.HEAD}, {"POST", out.Methods.POST}} {
		if isTrue(m.e.Unpaid2xx) {
			out.Exposures = append(out.Exposures, "METHOD-UNPAID-2XX:"+m.name)
		}
	}
	for _, g := range []struct {
		id string
		g  Grade
	}{{"direct", out.Grades.Direct}, {"facilitator", out.Grades.Facilitator}, {"missing_memo", out.Grades.MissingMemo}, {"bogus", out.Grades.Bogus}} {
		if g.g.FailOpen {
			out.Exposures = append(out.Exposures, "FAIL-OPEN:"+g.id)
		}
	}
	return out
}

func methodEntry(c Capture) MethodEntry {
	s := c.status()
	if s == nil {
		return MethodEntry{}
	}
	return MethodEntry{Status: s, Gated: ptr(*s == 402), Unpaid2xx: ptr(*s >= 200 && *s <= 299)}
}

// gradeOne applies grade_rule, first match wins.
func gradeOne(c Capture) Grade {
	s := c.status()
	// (1) "the probe fetch failed, timed out, or its body exceeded the cap ->
	// UNGRADED (reason probe_failed)". Grade status: the response status or null.
	if !captureRead(c) {
		return Grade{Grade: "UNGRADED", Reason: "probe_failed", Status: s}
	}
	// (2) "Status 200-299 -> PRESENT-FAIL-DIRTY, reason fail_open_2xx,
	// fail_open true".
	if *s >= 200 && *s <= 299 {
		return Grade{Grade: "PRESENT-FAIL-DIRTY", Reason: "fail_open_2xx", Status: s, FailOpen: true}
	}
	if *s == 402 {
		if v, ok := parseJSON(c.body()); ok {
			// (3) "Status 402 with a JSON-parseable body carrying a rejection
			// reason (a non-empty error, reason, or detail string) ->
			// PRESENT-FAIL-CLOSED". R10: the body is a JSON object.
			if obj, isObj := v.(map[string]any); isObj {
				for _, k := range []string{"error", "reason", "detail"} {
					if _, ok := present(obj[k]); ok {
						return Grade{Grade: "PRESENT-FAIL-CLOSED", Reason: "rejected_with_reason", Status: s}
					}
				}
			}
			// (4) "Status 402 with a JSON-parseable body carrying NO rejection
			// reason (a plain gate challenge) -> ABSENT, reason
			// payment_never_evaluated".
			return Grade{Grade: "ABSENT", Reason: "payment_never_evaluated", Status: s}
		}
	}
	// (5) "Anything else (500 or any other status, an HTML or otherwise
	// unparseable 402 body, any non-JSON body) -> PRESENT-FAIL-DIRTY".
	return Grade{Grade: "PRESENT-FAIL-DIRTY", Reason: "dirty_rejection", Status: s}
}
