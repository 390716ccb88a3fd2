package suppress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/exchangerebel/payability/internal/format"
)

// Limits of a baseline, each enforced by ParseBaseline.
const (
	MaxBaselineBytes    = 16 << 20
	MaxBaselineFindings = 100000
)

// BaselineVersion is the version a baseline file declares.
const BaselineVersion = 1

// BaselineEntry is one recorded finding: what identifies it (the rule, the
// endpoint, the leg, the accepts entry and the field) and its fingerprint
// (format.Fingerprint over them, the SARIF results' payabilityFinding/v2).
type BaselineEntry struct {
	Rule        string `json:"rule"`
	URL         string `json:"url"`
	Leg         string `json:"leg,omitempty"`
	Entry       *int   `json:"entry"`
	Field       string `json:"field,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

func (e BaselineEntry) finding() format.Finding {
	return format.Finding{Rule: e.Rule, Leg: e.Leg, Entry: e.Entry, Field: e.Field}
}

// Baseline is a validated baseline: the fingerprints it holds.
type Baseline struct {
	fps map[string]bool
}

// Len is the number of findings the baseline holds.
func (b *Baseline) Len() int { return len(b.fps) }

// baselineShape is built on first use (nothing is allocated at start-up).
var baselineShape = sync.OnceValue(func() *shape {
	return object(map[string]*shape{
		"version": str,
		"findings": array(object(map[string]*shape{
			"rule": str, "url": str, "leg": str, "entry": index, "field": str, "fingerprint": str,
		})),
	})
})

type baselineDoc struct {
	Version  string          `json:"version"`
	Findings []BaselineEntry `json:"findings"`
}

// isHex64 reports whether s is 64 lowercase hex digits.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// ParseBaseline parses a baseline file strictly (as ParseConfig does): each
// entry's fingerprint must be the one its rule, url, leg, entry and field
// give, so an entry edited by hand cannot say one thing and match another.
func ParseBaseline(data []byte) (*Baseline, error) {
	if len(data) > MaxBaselineBytes {
		return nil, &Error{Reason: fmt.Sprintf("file is over %d bytes", MaxBaselineBytes)}
	}
	pos, err := walk(data, baselineShape())
	if err != nil {
		return nil, err
	}
	var doc baselineDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Reason: "not a valid baseline document"}
	}
	v := validator{pos: pos, data: data}
	if doc.Version != fmt.Sprint(BaselineVersion) {
		return nil, v.fail("version", fmt.Sprintf("want \"%d\"", BaselineVersion))
	}
	if len(doc.Findings) > MaxBaselineFindings {
		return nil, v.fail("findings", fmt.Sprintf("at most %d findings", MaxBaselineFindings))
	}
	b := &Baseline{fps: map[string]bool{}}
	for i, e := range doc.Findings {
		at := fmt.Sprintf("findings[%d]", i)
		switch {
		case !token(e.Rule, MaxRule):
			return nil, v.fail(at+".rule", fmt.Sprintf("want a rule id: 1 to %d printable characters, no blanks", MaxRule))
		case !isHex64(e.Fingerprint):
			return nil, v.fail(at+".fingerprint", "want 64 lowercase hex digits")
		case format.Fingerprint(e.URL, e.finding()) != e.Fingerprint:
			return nil, v.fail(at+".fingerprint", "is not the fingerprint of the entry's rule, url, leg, entry and field")
		}
		b.fps[e.Fingerprint] = true
	}
	return b, nil
}

// NewBaseline records every finding of results that no ignore entry
// suppresses (a finding an entry suppresses stays that entry's, so it
// comes back when the entry expires) and returns the file's bytes: the
// entries sorted by endpoint, rule, leg, entry and field, each once.
func NewBaseline(results []format.Result) []byte {
	doc := baselineDoc{Version: fmt.Sprint(BaselineVersion), Findings: []BaselineEntry{}}
	seen := map[string]bool{}
	for _, r := range results {
		for _, f := range r.Findings() {
			if f.Suppressed != nil && f.Suppressed.Kind == format.SuppressedByIgnore {
				continue
			}
			fp := format.Fingerprint(r.URL, f)
			if seen[fp] {
				continue
			}
			seen[fp] = true
			rule := f.Rule
			if rule == "" {
				rule = format.UnnamedRule
			}
			doc.Findings = append(doc.Findings, BaselineEntry{Rule: rule, URL: r.URL, Leg: f.Leg, Entry: f.Entry, Field: f.Field, Fingerprint: fp})
		}
	}
	slices.SortFunc(doc.Findings, func(a, b BaselineEntry) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.Leg, b.Leg); c != 0 {
			return c
		}
		if c := entryOrder(a.Entry) - entryOrder(b.Entry); c != 0 {
			return c
		}
		return strings.Compare(a.Field, b.Field)
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(doc) // strings and ints only: it cannot fail
	return buf.Bytes()
}

func entryOrder(e *int) int {
	if e == nil {
		return -1
	}
	return *e
}
