package corpus

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
)

//go:embed lint-corpus.v1.json
var lintRaw []byte

// LintFile is the x402-lint corpus (docs/corpus-format.md, "lint corpus").
type LintFile struct {
	ID            string     `json:"id"`
	SHA256        string     `json:"sha256"`
	RulesID       string     `json:"rules_id"`
	RulesRevision string     `json:"rules_revision"`
	Cases         []LintCase `json:"cases"`
}

// LintCase is one response, the request that got it, the check time, the
// chain observations (when the case covers chain readiness) and the
// expected result.
type LintCase struct {
	ID         string         `json:"id"`
	Provenance string         `json:"provenance"`
	Note       string         `json:"note"`
	URL        string         `json:"url"`
	Method     string         `json:"method"`
	Now        string         `json:"now"`
	Capture    Capture        `json:"capture"`
	Chain      []LintChainObs `json:"chain"`
	// Origin, when present, makes the case an origin lint: the expected
	// result is the document findings of lint.LintOrigin (capture, url and
	// method name nothing then).
	Origin   *LintOriginCase `json:"origin,omitempty"`
	Expected json.RawMessage `json:"expected"`
}

// LintOriginCase is an origin lint's input: the origin, its discovery
// documents as fetched and the listed resources' live responses.
type LintOriginCase struct {
	Origin    string           `json:"origin"`
	Documents []LintOriginDoc  `json:"documents"`
	Live      []LintOriginLive `json:"live"`
}

// LintOriginDoc is one discovery document as fetched (lint.DocumentCapture).
type LintOriginDoc struct {
	Leg     lint.Leg `json:"leg"`
	URL     string   `json:"url"`
	Named   bool     `json:"named"`
	Capture Capture  `json:"capture"`
}

// LintOriginLive is one listed resource's response: its URL and method as
// listed ("" for a listing that names none), the method sent, the response.
type LintOriginLive struct {
	URL     string  `json:"url"`
	Method  string  `json:"method"`
	Sent    string  `json:"sent"`
	Capture Capture `json:"capture"`
}

// LintChainObs is the corpus form of lint.ChainObservation.
type LintChainObs struct {
	Leg               lint.Leg    `json:"leg"`
	Entry             int         `json:"entry"`
	Family            lint.Family `json:"family"`
	Unavailable       bool        `json:"unavailable"`
	OtherNetwork      bool        `json:"other_network"`
	Skipped           bool        `json:"skipped,omitempty"`
	AssetIsMint       bool        `json:"asset_is_mint"`
	ATAExists         bool        `json:"ata_exists"`
	ATAIsTokenAccount bool        `json:"ata_is_token_account"`
	Name              *string     `json:"name"`
	Version           *string     `json:"version"`
}

// LintExpected is the graded part of a lint result a case pins: findings as
// (rule, severity, leg, entry, field), in any order.
type LintExpected struct {
	Status   int                 `json:"status"`
	Dialect  lint.Dialect        `json:"dialect"`
	Conforms bool                `json:"conforms"`
	Entries  []lint.EntrySummary `json:"entries"`
	Findings []LintFinding       `json:"findings"`
}

// LintFinding is a finding without its message.
type LintFinding struct {
	Rule     string        `json:"rule"`
	Severity lint.Severity `json:"severity"`
	Leg      lint.Leg      `json:"leg"`
	Entry    *int          `json:"entry"`
	Field    string        `json:"field"`
}

// LintRawFile returns a copy of the embedded lint corpus.
func LintRawFile() []byte { return bytes.Clone(lintRaw) }

// LoadLint parses the embedded lint corpus strictly.
func LoadLint() (LintFile, error) {
	var f LintFile
	dec := json.NewDecoder(bytes.NewReader(lintRaw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("corpus: the lint corpus does not parse: %w", err)
	}
	return f, nil
}

// lintFile is the lint corpus's name, its key in generatedPins.
const lintFile = "lint-corpus.v1.json"

// LintRef is the lint corpus id and pin built into this binary (pins_gen.go,
// written by corpus/gen, checked by its -check in CI); RunLint recomputes the
// pin from the embedded file and fails on a mismatch.
func LintRef() Ref { return generatedPins[lintFile] }

// LintRules returns the published x402-lint/v1 document with corpus.sha256
// set to the lint corpus pin.
func LintRules() ([]byte, error) { return lint.RulesWithPin(LintRef().SHA256) }

// GradeLint runs one lint case and returns its result in the expected shape.
func GradeLint(c LintCase) (LintExpected, error) {
	if c.Origin != nil {
		return gradeLintOrigin(c)
	}
	cp, err := c.Capture.ToCapture()
	if err != nil {
		return LintExpected{}, err
	}
	now, err := time.Parse(time.RFC3339Nano, c.Now)
	if err != nil {
		return LintExpected{}, fmt.Errorf("corpus: now does not parse")
	}
	in := lint.Input{URL: c.URL, Method: c.Method, Capture: cp, Now: now}
	if c.Chain != nil {
		facts := lint.ChainFacts{}
		for _, o := range c.Chain {
			ob := lint.ChainObservation{Leg: o.Leg, Entry: o.Entry, Family: o.Family, Unavailable: o.Unavailable,
				OtherNetwork: o.OtherNetwork, Skipped: o.Skipped, AssetIsMint: o.AssetIsMint, ATAExists: o.ATAExists, ATAIsTokenAccount: o.ATAIsTokenAccount}
			if o.Name != nil {
				ob.Name, ob.NameRead = *o.Name, true
			}
			if o.Version != nil {
				ob.Version, ob.VersionRead = *o.Version, true
			}
			facts.Observations = append(facts.Observations, ob)
		}
		in.Chain = &facts
	}
	r := lint.Lint(in)
	out := LintExpected{Status: r.Status, Dialect: r.Dialect, Conforms: r.Conforms, Entries: r.Entries, Findings: []LintFinding{}}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, LintFinding{Rule: f.Rule, Severity: f.Severity, Leg: f.Leg, Entry: f.Entry, Field: f.Field})
	}
	sortLintFindings(out.Findings)
	return out, nil
}

// gradeLintOrigin runs one origin case: its document findings, and whether
// none of them is an error.
func gradeLintOrigin(c LintCase) (LintExpected, error) {
	now, err := time.Parse(time.RFC3339Nano, c.Now)
	if err != nil {
		return LintExpected{}, fmt.Errorf("corpus: now does not parse")
	}
	in := lint.OriginInput{Origin: c.Origin.Origin, Now: now}
	for _, d := range c.Origin.Documents {
		cp, err := d.Capture.ToCapture()
		if err != nil {
			return LintExpected{}, err
		}
		in.Documents = append(in.Documents, lint.DocumentCapture{Leg: d.Leg, URL: d.URL, Named: d.Named, Capture: cp})
	}
	for _, l := range c.Origin.Live {
		cp, err := l.Capture.ToCapture()
		if err != nil {
			return LintExpected{}, err
		}
		in.Live = append(in.Live, lint.LiveCapture{Target: lint.Target{URL: l.URL, Method: l.Method}, Method: l.Sent, Capture: cp})
	}
	r := lint.LintOrigin(in)
	out := LintExpected{Conforms: true, Entries: []lint.EntrySummary{}, Findings: []LintFinding{}}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, LintFinding{Rule: f.Rule, Severity: f.Severity, Leg: f.Leg, Entry: f.Entry, Field: f.Field})
		if f.Severity == lint.Error {
			out.Conforms = false
		}
	}
	sortLintFindings(out.Findings)
	return out, nil
}

// sortLintFindings puts findings in a canonical order (leg, entry, field,
// rule) so the comparison does not depend on the order rules ran in.
func sortLintFindings(fs []LintFinding) {
	e := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		switch {
		case a.Leg != b.Leg:
			return a.Leg < b.Leg
		case e(a.Entry) != e(b.Entry):
			return e(a.Entry) < e(b.Entry)
		case a.Field != b.Field:
			return a.Field < b.Field
		}
		return a.Rule < b.Rule
	})
}

// RunLint verifies the embedded lint corpus: pin first, then every case.
func RunLint() (Summary, error) {
	f, err := LoadLint()
	if err != nil {
		return Summary{}, err
	}
	pin, err := Pin(lintRaw)
	if err != nil {
		return Summary{}, err
	}
	d := lint.Rules()
	built := LintRef()
	s := Summary{Service: "x402-lint", ID: f.ID, PinFile: f.SHA256, PinComp: pin, PinBuilt: built.SHA256}
	s.PinOK = f.SHA256 == pin && built.SHA256 == pin && built.ID == f.ID &&
		f.ID == d.Corpus.ID && f.RulesID == d.ID && f.RulesRevision == d.Revision
	for _, c := range f.Cases {
		s.Outcomes = append(s.Outcomes, RunLintCase(c))
	}
	return s, nil
}

// RunLintCase grades one lint case and compares it with its expected result
// as canonical JSON (findings in canonical order on both sides).
func RunLintCase(c LintCase) Outcome {
	o := Outcome{ID: c.ID, Want: c.Expected}
	got, err := GradeLint(c)
	if err != nil {
		o.Problem = err.Error()
		return o
	}
	var want LintExpected
	dec := json.NewDecoder(bytes.NewReader(c.Expected))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		o.Problem = "expected output does not parse"
		return o
	}
	sortLintFindings(want.Findings)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	o.Got = gb
	cg, err1 := canonical(gb)
	cw, err2 := canonical(wb)
	if err1 != nil || err2 != nil {
		o.Problem = "expected output is not canonicalizable"
		return o
	}
	if !bytes.Equal(cg, cw) {
		o.Problem = "result differs from expected"
		return o
	}
	o.Passed = true
	return o
}
