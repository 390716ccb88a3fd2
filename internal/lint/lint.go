package lint

import (
	"net/url"
	"sort"

	"github.com/exchangerebel/payability/internal/capture"
)

// grader accumulates the findings of one Lint call.
type grader struct {
	in       Input
	called   *url.URL // nil when Input.URL does not parse
	findings []Finding
}

// add records one finding of a published rule; the severity is the
// document's, the message the rule's static text.
func (g *grader) add(id string, leg Leg, entry *int, field string) {
	r, ok := ruleSetOnce().registry[id]
	if !ok {
		panic("lint: unpublished rule " + id)
	}
	g.findings = append(g.findings, Finding{
		Rule: id, Severity: r.Severity, Leg: leg, Entry: entry, Field: field, Message: messages[id],
	})
}

func idx(i int) *int { return &i }

// view is one graded leg: its document, and the version it is graded as.
type view struct {
	doc     *Document
	leg     Leg
	version int // 1 or 2
}

// Lint grades one response against x402-lint/v1. It is pure: no I/O, no
// clock (Input.Now is the check time), no logging.
func Lint(in Input) Result {
	g := &grader{in: in}
	if u, err := url.Parse(in.URL); err == nil && u.Host != "" {
		g.called = u
	}
	res := Result{Status: in.Capture.Status, Entries: []EntrySummary{}}
	var legs []view
	switch {
	case statusArrived(in.Capture) && in.Capture.Status != 402:
		// The status line is what this rule reads; a body past the cap
		// does not hide it (nothing of the body is graded anyway).
		g.add(ruleStatusNot402, LegHTTP, nil, "status")
	case !in.Capture.Usable():
		g.add(ruleFetchFailed, LegHTTP, nil, "status")
	default:
		ch := Decode(in.Capture)
		legs = g.dialect(ch, &res.Dialect)
		g.hygiene()
		for _, v := range legs {
			g.document(v)
		}
		var header, v1 *view
		for i := range legs {
			switch {
			case legs[i].leg == LegHeader:
				header = &legs[i]
			case legs[i].version == 1:
				v1 = &legs[i]
			}
		}
		if header != nil && v1 != nil {
			g.compareLegs(*header, *v1)
		}
		if in.Chain != nil {
			g.chain(legs, in.Chain)
		}
	}
	res.Findings = ordered(g.findings)
	res.Entries = summaries(legs, res.Findings)
	res.Conforms = true
	for _, f := range res.Findings {
		if f.Severity == Error {
			res.Conforms = false
		}
	}
	return res
}

// statusArrived reports whether a complete status line and headers arrived:
// a usable capture, or one whose only fault is a body over the cap.
func statusArrived(c capture.Capture) bool {
	return c.Status != 0 && (c.Outcome == capture.OK || c.Outcome == capture.OverCap)
}

var legOrder = map[Leg]int{LegHTTP: 0, LegHeader: 1, LegBody: 2}

// ordered sorts findings by leg (http, header, body), then leg-level before
// entries, entries in index order; within that, in the order the rules ran.
func ordered(fs []Finding) []Finding { return orderedBy(fs, legOrder) }

// orderedBy sorts findings by the rank of their leg, then leg-level before
// entries, entries in index order; within that, in the order the rules ran.
func orderedBy(fs []Finding, rank map[Leg]int) []Finding {
	out := append([]Finding{}, fs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Leg] != rank[b.Leg] {
			return rank[a.Leg] < rank[b.Leg]
		}
		ai, bi := -1, -1
		if a.Entry != nil {
			ai = *a.Entry
		}
		if b.Entry != nil {
			bi = *b.Entry
		}
		return ai < bi
	})
	return out
}

func summaries(legs []view, fs []Finding) []EntrySummary {
	out := []EntrySummary{}
	for _, v := range legs {
		for i := range v.doc.Accepts {
			s := EntrySummary{Index: i, Leg: v.leg, X402Version: v.version}
			if m, ok := v.doc.Entry(i); ok {
				s.Scheme = reportedScheme(m)
				s.Network = reportedNetwork(m, v.version)
			}
			for _, f := range fs {
				if f.Leg == v.leg && f.Entry != nil && *f.Entry == i {
					switch f.Severity {
					case Error:
						s.Errors++
					case Warn:
						s.Warnings++
					}
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// reportedScheme is the scheme as a protocol identifier: only a known scheme
// is reported ("" otherwise), so no seller text reaches a report.
func reportedScheme(m map[string]any) string {
	s, _ := m["scheme"].(string)
	if knownSchemes[s] {
		return s
	}
	return ""
}

// reportedNetwork is the network as a protocol identifier: a CAIP-2 id or a
// known v1 name as written, else "".
func reportedNetwork(m map[string]any, version int) string {
	s, _ := m["network"].(string)
	if IsCAIP2(s) {
		return s
	}
	if _, ok := v1Networks[s]; ok && version == 1 {
		return s
	}
	return ""
}
