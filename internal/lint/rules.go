package lint

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

//go:embed x402-lint.v1.json
var rulesRaw []byte

// RulesID is the published rule set's id.
const RulesID = "x402-lint/v1"

// Rule is one published rule: a stable id, its severity, what it checks and
// where the specifications say so. A rule's id never changes meaning; a
// changed rule is a new revision of the document.
type Rule struct {
	ID       string   `json:"id"`
	Family   string   `json:"family"`
	Severity Severity `json:"severity"`
	Checks   string   `json:"checks"`
	Source   []Source `json:"source"`
}

// Source is a citation: a file of the x402 repository (or an external
// standard) and the section in it.
type Source struct {
	File    string `json:"file"`
	Section string `json:"section"`
}

// Doc is the published rules document x402-lint/v1.
type Doc struct {
	ID       string `json:"id"`
	Revision string `json:"revision"`
	Corpus   struct {
		ID     string `json:"id"`
		SHA256 string `json:"sha256"`
	} `json:"corpus"`
	Rules []Rule `json:"rules"`
}

// ruleSet is the parsed rules document and its rules by id.
type ruleSet struct {
	doc      Doc
	registry map[string]Rule
}

// ruleSetOnce parses the embedded document on first use, not at start-up: a
// command that never lints pays nothing for it.
var ruleSetOnce = sync.OnceValue(func() ruleSet {
	rs := ruleSet{registry: map[string]Rule{}}
	if err := json.Unmarshal(rulesRaw, &rs.doc); err != nil {
		panic("lint: embedded rules document does not parse: " + err.Error())
	}
	for _, r := range rs.doc.Rules {
		if _, dup := rs.registry[r.ID]; dup {
			panic("lint: duplicate rule id " + r.ID)
		}
		switch r.Severity {
		case Error, Warn, Info:
		default:
			panic("lint: rule " + r.ID + " has no known severity")
		}
		rs.registry[r.ID] = r
	}
	return rs
})

// Rules returns the published rule set (a copy).
func Rules() Doc {
	d := ruleSetOnce().doc
	d.Rules = append([]Rule(nil), d.Rules...)
	return d
}

// RuleByID returns the published rule with that id.
func RuleByID(id string) (Rule, bool) {
	r, ok := ruleSetOnce().registry[id]
	return r, ok
}

// RulesRaw returns a copy of the embedded document's bytes.
func RulesRaw() []byte { return bytes.Clone(rulesRaw) }

var pinRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`("corpus"\s*:\s*\{[^{}]*"sha256"\s*:\s*")([0-9a-f]{0,64})(")`)
}) // compiled on first use, not at start-up

// RulesWithPin returns the embedded document with corpus.sha256 set to pin
// (the lint corpus's pin) and every other byte unchanged: the bytes printed
// by `payability criteria x402-lint`.
func RulesWithPin(pin string) ([]byte, error) {
	if len(pin) != 64 || strings.Trim(pin, "0123456789abcdef") != "" {
		return nil, errors.New("lint: pin is not 64 lower-case hex digits")
	}
	locs := pinRe().FindAllSubmatchIndex(rulesRaw, -1)
	if len(locs) != 1 {
		return nil, fmt.Errorf("lint: expected one corpus.sha256, found %d", len(locs))
	}
	l := locs[0]
	out := make([]byte, 0, len(rulesRaw)+64)
	out = append(out, rulesRaw[:l[4]]...)
	out = append(out, pin...)
	out = append(out, rulesRaw[l[5]:]...)
	return out, nil
}
