package suppress

import (
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/format"
)

// Matcher marks the findings of results with the suppression that holds
// for them at one time: the first ignore entry that matches and has not
// expired, else the baseline. It counts what it marked, per entry too, so
// an output can say which entries expired or matched nothing. Safe for
// concurrent use.
type Matcher struct {
	cfg      Config
	baseline *Baseline
	now      time.Time

	mu      sync.Mutex
	matched []int // per ignore entry: findings it suppressed (expired: would have)
	sum     Summary
}

// NewMatcher compiles cfg (nil: no ignore entries) and the baseline (nil:
// none) at now, the check time the clock gave.
func NewMatcher(cfg *Config, baseline *Baseline, now time.Time) *Matcher {
	m := &Matcher{baseline: baseline, now: now}
	if cfg != nil {
		m.cfg = *cfg
	}
	m.matched = make([]int, len(m.cfg.Ignore))
	return m
}

// Summary is what a matcher did, for the JSON outputs and the text line.
type Summary struct {
	Suppressed int `json:"suppressed"`
	ByIgnore   int `json:"by_ignore"`
	ByBaseline int `json:"by_baseline"`
	// Baseline is the number of findings the baseline holds (0 when none).
	Baseline int `json:"baseline_findings"`
	// Ignores is every ignore entry in the file's order.
	Ignores []IgnoreUse `json:"ignores"`
}

// IgnoreUse is one ignore entry: where it is, what it names, whether it
// has expired, and how many findings it suppressed (expired: how many it
// would have).
type IgnoreUse struct {
	Index   int    `json:"index"`
	Rule    string `json:"rule"`
	Until   string `json:"until,omitempty"`
	Expired bool   `json:"expired"`
	Matched int    `json:"matched"`
}

// Apply marks every finding of r that a suppression holds for.
func (m *Matcher) Apply(r *format.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ci := range r.Cases {
		for fi := range r.Cases[ci].Findings {
			f := &r.Cases[ci].Findings[fi]
			f.Suppressed = m.match(r.URL, *f)
			switch {
			case f.Suppressed == nil:
			case f.Suppressed.Kind == format.SuppressedByIgnore:
				m.sum.Suppressed++
				m.sum.ByIgnore++
			default:
				m.sum.Suppressed++
				m.sum.ByBaseline++
			}
		}
	}
}

func (m *Matcher) match(endpoint string, f format.Finding) *format.Suppression {
	var held *format.Suppression
	for i, ig := range m.cfg.Ignore {
		if !ig.matches(endpoint, f) {
			continue
		}
		m.matched[i]++
		if held == nil && !ig.Expired(m.now) {
			held = &format.Suppression{Kind: format.SuppressedByIgnore, Reason: ig.Reason, Until: ig.Until}
		}
	}
	if held == nil && m.baseline != nil && m.baseline.fps[format.Fingerprint(endpoint, f)] {
		held = &format.Suppression{Kind: format.SuppressedByBaseline, Reason: "in the baseline"}
	}
	return held
}

// matches reports whether the entry names the finding: its rule, and its
// endpoint and field when given (a lint field matches with or without its
// leg: "header:accepts[0].payTo" and "accepts[0].payTo" alike).
func (ig Ignore) matches(endpoint string, f format.Finding) bool {
	if ig.Rule != f.Rule || !pattern(ig.URL, endpoint) {
		return false
	}
	if ig.Field == "" || pattern(ig.Field, f.Field) {
		return true
	}
	path, ok := strings.CutPrefix(f.Field, f.Leg+":")
	return f.Leg != "" && ok && pattern(ig.Field, path)
}

// pattern: "" matches anything; a trailing * any value with that prefix;
// anything else the value itself.
func pattern(p, v string) bool {
	if p == "" {
		return true
	}
	if pre, ok := strings.CutSuffix(p, "*"); ok {
		return strings.HasPrefix(v, pre)
	}
	return p == v
}

// Summary returns what the matcher did so far.
func (m *Matcher) Summary() Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sum
	if m.baseline != nil {
		s.Baseline = m.baseline.Len()
	}
	s.Ignores = make([]IgnoreUse, len(m.cfg.Ignore))
	for i, ig := range m.cfg.Ignore {
		s.Ignores[i] = IgnoreUse{Index: i, Rule: ig.Rule, Until: ig.Until, Expired: ig.Expired(m.now), Matched: m.matched[i]}
	}
	return s
}
