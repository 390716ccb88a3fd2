package lint

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

var knownSchemes = map[string]bool{"exact": true, "upto": true}

// entryView is one accepts entry being graded.
type entryView struct {
	g      *grader
	v      view
	i      int
	m      map[string]any
	p      string         // "accepts[i]."
	family Family         // of the CAIP-2 network, when known
	scheme string         // when known
	extra  map[string]any // nil when absent or not an object
}

func (e *entryView) add(id, field string) { e.g.add(id, e.v.leg, idx(e.i), e.p+field) }

// entry grades accepts[i] of a leg: the fields every entry carries, then the
// fields of its scheme on its network family.
func (g *grader) entry(v view, i int) {
	m, ok := v.doc.Entry(i)
	if !ok {
		g.add(ruleEntryNotObject, v.leg, idx(i), "accepts["+itoa(i)+"]")
		return
	}
	e := &entryView{g: g, v: v, i: i, m: m, p: entryPrefix(i)}
	if !e.schemeField() {
		// A scheme lint does not know may define its fields otherwise, and
		// standard clients skip the entry: nothing more is graded.
		return
	}
	e.networkField()
	e.amountField()
	e.addressField("asset", false)
	e.addressField("payTo", true)
	e.timeoutField()
	if v.version == 1 {
		if r, ok := m["resource"].(string); ok && r != "" {
			g.resource(v.leg, idx(i), e.p+"resource", r)
		} else {
			e.add(ruleResourceMissing, "resource")
		}
		if d, ok := m["description"].(string); ok && utf8.RuneCountInString(d) > 500 {
			e.add(ruleDescriptionLong, "description")
		}
	}
	if x, present := m["extra"]; present {
		if xm, ok := x.(map[string]any); ok {
			e.extra = xm
		} else {
			e.add(ruleExtraNotObject, "extra")
		}
	}
	if e.scheme == "" || e.family == FamilyUnknown {
		return
	}
	for _, r := range schemeRules {
		if r.scheme == e.scheme && r.family == e.family {
			r.check(e)
		}
	}
}

// schemeRules is the registry of scheme-on-family checks.
var schemeRules = []struct {
	scheme string
	family Family
	check  func(*entryView)
}{
	{"exact", FamilySolana, (*entryView).exactSVM},
	{"exact", FamilyEVM, (*entryView).exactEVM},
	{"upto", FamilySolana, (*entryView).uptoSVM},
	{"upto", FamilyEVM, (*entryView).uptoEVM},
}

// schemeField grades the scheme; it returns false for a scheme lint does
// not know (a missing one is an error, and the rest is still graded).
func (e *entryView) schemeField() bool {
	s, ok := e.m["scheme"].(string)
	switch {
	case !ok || s == "":
		e.add(ruleSchemeMissing, "scheme")
	case !knownSchemes[s]:
		e.add(ruleSchemeUnknown, "scheme")
		return false
	default:
		e.scheme = s
	}
	return true
}

// unknownScheme reports whether the entry names a scheme lint does not know
// (a missing or non-string scheme is scheme_missing, and the entry is still
// graded).
func unknownScheme(m map[string]any) bool {
	s, ok := m["scheme"].(string)
	return ok && s != "" && !knownSchemes[s]
}

func (e *entryView) networkField() {
	n, ok := e.m["network"].(string)
	if !ok || n == "" {
		e.add(ruleNetworkMissing, "network")
		return
	}
	id := ""
	if e.v.version == 2 {
		if !IsCAIP2(n) {
			e.add(ruleNetworkNotCAIP2, "network")
			return
		}
		id = n
	} else {
		if IsCAIP2(n) {
			e.add(ruleNetworkCAIP2OnV1, "network")
			return
		}
		mapped, known := NetworkCAIP2(n)
		if !known {
			e.add(ruleNetworkUnknownV1, "network")
			return
		}
		id = mapped
	}
	e.family = FamilyOf(id)
	if e.family == FamilyUnknown {
		e.add(ruleNetworkFamilyUnknown, "network")
	}
}

func (e *entryView) amountField() {
	field := "amount"
	if e.v.version == 1 {
		field = "maxAmountRequired"
	}
	s, ok := e.m[field].(string)
	switch {
	case !ok:
		e.add(ruleAmountMissing, field)
	case !digits(s):
		e.add(ruleAmountNotDigits, field)
	case trimZeros(s) == "0":
		e.add(ruleAmountZero, field)
	case s[0] == '0':
		e.add(ruleAmountLeadingZeros, field)
	}
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// addressField grades a required address of the entry (or, with an
// "extra." field, of its extra object).
func (e *entryView) addressField(field string, payee bool) {
	s, ok := e.m[field].(string)
	if !ok || s == "" {
		e.add(ruleAddressMissing, field)
		return
	}
	e.address(field, s)
	if payee && e.family != FamilyUnknown && addressProblem(e.family, s) == "" && placeholder(e.family, s) {
		e.add(rulePayToPlaceholder, field)
	}
}

// address grades a present address; it returns true when it is valid.
func (e *entryView) address(field, s string) bool {
	if p := addressProblem(e.family, s); p != "" {
		e.add(p, field)
		return false
	}
	return true
}

// extraAddress grades a required address in extra, missing reported as
// missingRule.
func (e *entryView) extraAddress(key, missingRule string) {
	s, ok := e.extra[key].(string)
	if !ok || s == "" {
		e.add(missingRule, "extra."+key)
		return
	}
	e.address("extra."+key, s)
}

func (e *entryView) timeoutField() {
	v, present := e.m["maxTimeoutSeconds"]
	if !present {
		e.add(ruleMaxTimeoutMissing, "maxTimeoutSeconds")
		return
	}
	n, ok := positiveInt(v)
	switch {
	case !ok:
		e.add(ruleMaxTimeoutInvalid, "maxTimeoutSeconds")
	case n.Cmp(big.NewInt(3600)) > 0:
		e.add(ruleMaxTimeoutLong, "maxTimeoutSeconds")
	}
}

// positiveInt reads a JSON number whose value is an integer greater than
// zero (60 and 60.0 alike: JSON does not tell them apart by value).
func positiveInt(v any) (*big.Int, bool) {
	n, ok := v.(json.Number)
	if !ok || len(n) > 64 {
		return nil, false
	}
	// An exponent is bounded before big.Rat expands it: 1e999999999 is a
	// JSON number, and must not become a billion-digit integer.
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(string(n[i+1:]), "+"))
		if err != nil || exp > 30 || exp < -30 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || r.Sign() <= 0 {
		return nil, false
	}
	return r.Num(), true
}

func itoa(i int) string { return strconv.Itoa(i) }
