// Package suppress decides which findings a repository has chosen not to
// count: the ignore entries of its .payability.json (a rule, optionally an
// endpoint and a field, always a reason, optionally a last day) and the
// baseline file it names (the findings of one day, by fingerprint). It is
// pure: the CLI finds and reads the files and gives the clock; this package
// parses bytes and marks the findings of format results (docs/ci.md,
// "Suppressions and baselines").
//
// A suppressed finding is never dropped: it stays in every output, marked
// with its suppression, and only the counts, overalls and --fail-on
// thresholds leave it out.
package suppress

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// FileName is the configuration file looked up from the working directory
// up to the repository's root.
const FileName = ".payability.json"

// Limits of a configuration, each enforced by ParseConfig.
const (
	MaxConfigBytes = 1 << 20
	MaxIgnores     = 1000
	MaxReason      = 500  // characters
	MaxRule        = 128  // bytes
	MaxURL         = 2048 // bytes
	MaxField       = 512  // bytes
	MaxPath        = 4096 // bytes
)

// DateLayout is the form of until: a calendar day, YYYY-MM-DD.
const DateLayout = "2006-01-02"

// Config is a validated configuration.
type Config struct {
	Ignore []Ignore
	// Baseline is the baseline file's path as written, relative to the
	// configuration file's directory unless absolute; "" when none.
	Baseline string
}

// Ignore is one ignore entry: it suppresses every finding of Rule (of the
// endpoint URL and at Field when they are given) until the end of Until
// (UTC) when it is given.
type Ignore struct {
	Rule   string
	URL    string // "" any; a trailing * matches any URL with that prefix
	Field  string // "" any; a trailing * matches any field with that prefix
	Reason string
	Until  string // YYYY-MM-DD, "" for no expiry
	until  time.Time
}

// configShape is built on first use (nothing is allocated at start-up).
var configShape = sync.OnceValue(func() *shape {
	return object(map[string]*shape{
		"ignore": array(object(map[string]*shape{
			"rule": str, "url": str, "field": str, "reason": str, "until": str,
		})),
		"baseline": str,
	})
})

type rawConfig struct {
	Ignore []struct {
		Rule   *string `json:"rule"`
		URL    string  `json:"url"`
		Field  string  `json:"field"`
		Reason *string `json:"reason"`
		Until  *string `json:"until"`
	} `json:"ignore"`
	Baseline *string `json:"baseline"`
}

// ParseConfig parses a configuration strictly: unknown and repeated keys,
// wrong types, trailing data, nesting past 8 levels and files over
// MaxConfigBytes are refused, every value is validated, and an error names
// the field and its line.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, &Error{Reason: fmt.Sprintf("file is over %d bytes", MaxConfigBytes)}
	}
	pos, err := walk(data, configShape())
	if err != nil {
		return nil, err
	}
	var raw rawConfig
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Reason: "not a valid configuration document"}
	}
	v := validator{pos: pos, data: data}
	c := &Config{}
	if len(raw.Ignore) > MaxIgnores {
		return nil, v.fail("ignore", fmt.Sprintf("at most %d entries", MaxIgnores))
	}
	seen := map[[3]string]bool{}
	for i, r := range raw.Ignore {
		at := fmt.Sprintf("ignore[%d]", i)
		var ig Ignore
		switch {
		case r.Rule == nil:
			return nil, v.fail(at+".rule", "a rule id is required")
		case !token(*r.Rule, MaxRule):
			return nil, v.fail(at+".rule", fmt.Sprintf("want a rule id: 1 to %d printable characters, no blanks", MaxRule))
		case r.URL != "" && !token(r.URL, MaxURL):
			return nil, v.fail(at+".url", fmt.Sprintf("want a URL: 1 to %d printable characters, no blanks", MaxURL))
		case r.Field != "" && !token(r.Field, MaxField):
			return nil, v.fail(at+".field", fmt.Sprintf("want a field path: 1 to %d printable characters, no blanks", MaxField))
		case r.Reason == nil:
			return nil, v.fail(at+".reason", "a reason is required")
		case !reason(*r.Reason):
			return nil, v.fail(at+".reason", fmt.Sprintf("want 1 to %d printable characters, not only blanks", MaxReason))
		}
		ig = Ignore{Rule: *r.Rule, URL: r.URL, Field: r.Field, Reason: *r.Reason}
		if r.Until != nil {
			d, err := time.Parse(DateLayout, *r.Until)
			if err != nil {
				return nil, v.fail(at+".until", "want a date YYYY-MM-DD")
			}
			ig.Until, ig.until = *r.Until, d
		}
		k := [3]string{ig.Rule, ig.URL, ig.Field}
		if seen[k] {
			return nil, v.fail(at, "repeats an earlier entry's rule, url and field")
		}
		seen[k] = true
		c.Ignore = append(c.Ignore, ig)
	}
	if raw.Baseline != nil {
		b := *raw.Baseline
		if b == "" || len(b) > MaxPath || strings.ContainsFunc(b, unicode.IsControl) {
			return nil, v.fail("baseline", fmt.Sprintf("want a file path: 1 to %d bytes, no control characters", MaxPath))
		}
		c.Baseline = b
	}
	return c, nil
}

// Expired reports whether the entry no longer suppresses at now: its
// until day (UTC) has ended.
func (ig Ignore) Expired(now time.Time) bool {
	return ig.Until != "" && !now.UTC().Before(ig.until.AddDate(0, 0, 1))
}

type validator struct {
	pos  map[string]int
	data []byte
}

// fail names field at its line, or at its object's when it is missing.
func (v validator) fail(field, reason string) error {
	e := &Error{Field: field, Reason: reason}
	off, ok := v.pos[field]
	if !ok {
		if i := strings.LastIndexByte(field, '.'); i > 0 {
			off, ok = v.pos[field[:i]]
		}
	}
	if ok {
		e.Line, e.Column = lineCol(v.data, off)
	}
	return e
}

// token reports whether s is 1 to max bytes of printable characters, none
// of them a blank.
func token(s string, max int) bool {
	return s != "" && len(s) <= max && utf8.ValidString(s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) })
}

// reason reports whether s is 1 to MaxReason printable characters (blanks
// allowed), not only blanks.
func reason(s string) bool {
	return strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= MaxReason && utf8.ValidString(s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' })
}
