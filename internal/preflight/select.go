package preflight

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/exchangerebel/payability/internal/lint"
)

// Options are the agent's constraints on the entry it would pay.
type Options struct {
	Network   string `json:"network,omitempty"`    // CAIP-2; "" matches any
	Scheme    string `json:"scheme,omitempty"`     // "" matches any
	Asset     string `json:"asset,omitempty"`      // "" matches any
	MaxAmount string `json:"max_amount,omitempty"` // decimal atomic units; "" means no budget
}

// ValidCAIP2 reports whether s is a CAIP-2 chain id (lint's grammar).
func ValidCAIP2(s string) bool { return lint.IsCAIP2(s) }

var digitsPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) }) // compiled on first use, not at start-up

// ValidAmount reports whether s is a decimal integer of atomic units.
func ValidAmount(s string) bool { return digitsPattern().MatchString(s) && len(s) <= 78 }

// Entry is one candidate accepts entry as the decision reads it. entry and
// resource hold fetched values and never leave this package's results.
type Entry struct {
	Leg         lint.Leg
	Index       int
	X402Version int
	Scheme      string
	Network     string // as stated
	CAIP2       string // mapped; "" when it cannot be mapped
	entry       map[string]any
	resource    any // the v2 header's resource member; nil when absent or v1
	hasResource bool
}

// Selection is the outcome of the selection rules.
type Selection struct {
	Selected *Entry
	// AnyMatch is true when a clean entry matched network, scheme and asset
	// (whatever its amount): with no Selected, the entries are over budget.
	AnyMatch bool
	// Dialect is 2 when the primary payment probes speak v2
	// (PAYMENT-SIGNATURE), 1 when they speak v1 (X-PAYMENT).
	Dialect int
	// Dual is true when the challenge advertises both dialects: a decodable
	// v2 header with entries and a v1 body with entries. The payment probes
	// then go out in both, the primary dialect first.
	Dual bool
	// Secondary is the entry P1 is built from in the other dialect (Dual
	// only): the first clean entry of that leg that matches the options and
	// is within budget, else the first clean entry of that leg; nil when an
	// entry is not selected or that leg has no clean entry.
	Secondary *Entry
}

// DialectLeg is one dialect the payment probes speak and the entry P1 is
// built from there (nil when P1 cannot be sent in that dialect).
type DialectLeg struct {
	Dialect int
	Entry   *Entry
}

// Legs are the dialects the payment probes speak, the primary first.
func (s Selection) Legs() []DialectLeg {
	legs := []DialectLeg{{Dialect: s.Dialect, Entry: s.Selected}}
	if s.Dual {
		legs = append(legs, DialectLeg{Dialect: 3 - s.Dialect, Entry: s.Secondary})
	}
	return legs
}

// candidates are the entries a standard client can read: the v2 header's,
// then the v1 body's.
func candidates(ch lint.Challenge) []Entry {
	var out []Entry
	add := func(d *lint.Document, leg lint.Leg, version int) {
		if d == nil || d.Version != version {
			return
		}
		res, hasRes := any(nil), false
		if leg == lint.LegHeader {
			res, hasRes = d.Root["resource"]
		}
		for i := range d.Accepts {
			m, ok := d.Entry(i)
			if !ok {
				continue
			}
			e := Entry{Leg: leg, Index: i, X402Version: version, Scheme: str(m, "scheme"), Network: str(m, "network"),
				entry: m, resource: res, hasResource: hasRes}
			e.CAIP2, _ = networkCAIP2(version, e.Network)
			out = append(out, e)
		}
	}
	if ch.HeaderDecodable {
		add(ch.Header, lint.LegHeader, 2)
	}
	add(ch.Body, lint.LegBody, 1)
	return out
}

// clean reports whether lint summarised the entry with no error and found no
// error on its leg as a whole. An entry lint did not summarise is not clean.
func clean(res lint.Result, leg lint.Leg, index int) bool {
	summarised := false
	for _, s := range res.Entries {
		if s.Leg == leg && s.Index == index {
			if s.Errors > 0 {
				return false
			}
			summarised = true
		}
	}
	if !summarised {
		return false
	}
	for _, f := range res.Findings {
		if f.Severity == lint.Error && f.Leg == leg && f.Entry == nil {
			return false
		}
	}
	return true
}

// warned reports whether lint warned about the entry or about its leg as a
// whole (the reading that never overstates: a leg's warning is the entry's).
func warned(res lint.Result, leg lint.Leg, index int) bool {
	for _, s := range res.Entries {
		if s.Leg == leg && s.Index == index && s.Warnings > 0 {
			return true
		}
	}
	for _, f := range res.Findings {
		if f.Severity == lint.Warn && f.Leg == leg && (f.Entry == nil || *f.Entry == index) {
			return true
		}
	}
	return false
}

var evmAddress = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`) }) // compiled on first use, not at start-up

func sameAsset(offered, wanted string) bool {
	if evmAddress().MatchString(offered) && evmAddress().MatchString(wanted) {
		return strings.EqualFold(offered, wanted)
	}
	return offered == wanted
}

func (o Options) matches(e Entry) bool {
	return (o.Network == "" || e.CAIP2 == o.Network) &&
		(o.Scheme == "" || e.Scheme == o.Scheme) &&
		(o.Asset == "" || sameAsset(str(e.entry, "asset"), o.Asset))
}

// withinBudget: the amount is a decimal integer not above MaxAmount. An
// amount that is not a decimal integer is never within a budget.
func (o Options) withinBudget(e Entry) bool {
	if o.MaxAmount == "" {
		return true
	}
	amt, ok := new(big.Int).SetString(e.amount(), 10)
	limit, ok2 := new(big.Int).SetString(o.MaxAmount, 10)
	if !ok || !ok2 || !ValidAmount(e.amount()) {
		return false
	}
	return amt.Cmp(limit) <= 0
}

// amount is the leg's amount string: v2 amount, v1 maxAmountRequired.
func (e Entry) amount() string {
	if e.X402Version == 1 {
		return str(e.entry, "maxAmountRequired")
	}
	return str(e.entry, "amount")
}

// Select applies the selection rules to the unpaid challenge.
func Select(ch lint.Challenge, res lint.Result, o Options) Selection {
	var s Selection
	for _, e := range candidates(ch) {
		if !clean(res, e.Leg, e.Index) || !o.matches(e) {
			continue
		}
		s.AnyMatch = true
		if o.withinBudget(e) {
			e := e
			s.Selected = &e
			break
		}
	}
	switch {
	case s.Selected != nil:
		s.Dialect = s.Selected.X402Version
	case ch.HeaderDecodable && ch.Header != nil && ch.Header.Version == 2:
		s.Dialect = 2
	default:
		s.Dialect = 1
	}
	s.Dual = ch.HeaderDecodable && ch.Header != nil && ch.Header.Version == 2 && len(ch.Header.Accepts) > 0 &&
		ch.Body != nil && ch.Body.Version == 1 && len(ch.Body.Accepts) > 0
	if s.Dual && s.Selected != nil {
		s.Secondary = secondaryEntry(ch, res, o, 3-s.Dialect)
	}
	return s
}

// secondaryEntry is the entry P1 is built from in the other dialect: the
// first clean entry of that leg that matches and is within budget, else the
// first clean entry of that leg (the probe tests the gate, not the price).
func secondaryEntry(ch lint.Challenge, res lint.Result, o Options, dialect int) *Entry {
	var first *Entry
	for _, e := range candidates(ch) {
		if e.X402Version != dialect || !clean(res, e.Leg, e.Index) {
			continue
		}
		if o.matches(e) && o.withinBudget(e) {
			e := e
			return &e
		}
		if first == nil {
			e := e
			first = &e
		}
	}
	return first
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// jsonNumber returns m[key] when it is a JSON number.
func jsonNumber(m map[string]any, key string) (json.Number, bool) {
	n, ok := m[key].(json.Number)
	return n, ok
}
