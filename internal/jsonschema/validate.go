package jsonschema

import (
	"errors"
	"maps"
	"math/big"
	"slices"
	"unicode/utf8"
)

// Validate reports whether v (decoded with json.Decoder.UseNumber) is
// valid against the schema. The error is ErrLimit or ErrUnsupported, and
// then the boolean means nothing.
func (s *Schema) Validate(v any) (bool, error) {
	vd := validator{budget: budget{left: s.limits.Steps}, limits: s.limits, top: s.root, rootNode: s.root}
	ok, _, err := vd.validate(s.root, v, nil, 0)
	if err == errUnknown {
		return false, ErrUnsupported
	}
	if err != nil {
		return false, err
	}
	return ok, nil
}

type validator struct {
	budget budget
	limits Limits
	// top is where this validation began (the root, or a propertyNames
	// schema, which the reference library validates each name against
	// afresh): the outermost dynamic scope.
	top *node
	// rootNode is the document's root schema (its one resource).
	rootNode *node
}

// frame is one schema applied in place to the current value; the chain of
// them is what detects a reference cycle (a schema applied to the same
// value twice over is invalid, as in the reference library).
type frame struct {
	n      *node
	parent *frame
}

// errUnknown: the outcome depends on a format this package does not
// check (drafts 4 to 7 assert every format the reference library knows).
// Validation is then three-valued: a conjunction with a definite false is
// false and a disjunction with a definite true is true whatever the unknown
// says; only an outcome that hangs on it is not judged.
var errUnknown = errors.New("jsonschema: outcome depends on an unchecked format")

// conj folds the conjuncts of one schema.
type conj struct{ unknown bool }

// fold adds one conjunct; stop says the conjunction is decided (a definite
// false, or an error other than errUnknown, returned as err).
func (c *conj) fold(ok bool, err error) (stop bool, rerr error) {
	if err == errUnknown {
		c.unknown = true
		return false, nil
	}
	if err != nil {
		return true, err
	}
	return !ok, nil
}

func (c *conj) result() (bool, error) {
	if c.unknown {
		return false, errUnknown
	}
	return true, nil
}

// evaluated: the members and items a successful evaluation evaluated
// (annotations for unevaluatedProperties/unevaluatedItems).
type evaluated struct {
	allProps bool
	props    map[string]struct{}
	allItems bool
	prefix   int
	items    map[int]struct{}
}

func (e *evaluated) prop(k string) {
	if e.props == nil {
		e.props = map[string]struct{}{}
	}
	e.props[k] = struct{}{}
}

func (e *evaluated) item(i int) {
	if e.items == nil {
		e.items = map[int]struct{}{}
	}
	e.items[i] = struct{}{}
}

func (e *evaluated) merge(o *evaluated) {
	if o == nil {
		return
	}
	e.allProps = e.allProps || o.allProps
	for k := range o.props {
		e.prop(k)
	}
	e.allItems = e.allItems || o.allItems
	if o.prefix > e.prefix {
		e.prefix = o.prefix
	}
	for i := range o.items {
		e.item(i)
	}
}

func (e *evaluated) hasProp(k string) bool {
	_, ok := e.props[k]
	return e.allProps || ok
}

func (e *evaluated) hasItem(i int) bool {
	_, ok := e.items[i]
	return e.allItems || i < e.prefix || ok
}

// child validates a member or item: a new value, so a new in-place chain.
func (vd *validator) child(n *node, v any, depth int) (bool, error) {
	ok, _, err := vd.validate(n, v, nil, depth+1)
	return ok, err
}

// inPlace validates a subschema against the same value.
func (vd *validator) inPlace(n *node, v any, chain *frame, depth int, ev *evaluated) (bool, error) {
	ok, sub, err := vd.validate(n, v, chain, depth)
	if ok && err == nil {
		ev.merge(sub)
	}
	return ok, err
}

func (vd *validator) validate(n *node, v any, anc *frame, depth int) (bool, *evaluated, error) {
	if err := vd.budget.step(); err != nil {
		return false, nil, err
	}
	if depth > vd.limits.Depth {
		return false, nil, ErrLimit
	}
	if n.boolean {
		return n.boolValue, nil, nil
	}
	for f := anc; f != nil; f = f.parent {
		if f.n == n {
			return false, nil, nil // a reference cycle on this value
		}
	}
	chain := &frame{n, anc}
	t := jsonType(v)
	if t == "" {
		return false, nil, ErrUnsupported
	}
	if len(n.types) > 0 {
		match := false
		for _, want := range n.types {
			if want == t {
				match = true
			} else if want == "integer" && t == "number" {
				isInt, err := isInteger(v)
				if err != nil {
					return false, nil, err
				}
				match = isInt
			}
			if match {
				break
			}
		}
		if !match {
			return false, nil, nil
		}
	}
	if n.hasConst {
		if eq, err := vd.budget.equal(v, n.constV); !eq || err != nil {
			return false, nil, err
		}
	}
	if n.hasEnum {
		found := false
		for _, x := range n.enum {
			eq, err := vd.budget.equal(v, x)
			if err != nil {
				return false, nil, err
			}
			if eq {
				found = true
				break
			}
		}
		if !found {
			return false, nil, nil
		}
	}
	var c conj
	if n.format != "" {
		if s, ok := v.(string); ok {
			valid, known := formatValid(n.format, s)
			if !known {
				c.unknown = true
			} else if !valid {
				return false, nil, nil
			}
		}
	}
	ev := &evaluated{}
	if n.ref != nil {
		if stop, err := c.fold(vd.inPlace(n.ref, v, chain, depth, ev)); stop {
			return false, nil, err
		}
		if n.draft < draft2019 {
			ok, err := c.result()
			return ok, nil, err
		}
	}
	var ok bool
	var err error
	switch t {
	case "object":
		ok, err = vd.object(n, v.(map[string]any), chain, depth, ev)
	case "array":
		ok, err = vd.array(n, v.([]any), depth, ev)
	case "string":
		ok = vd.str(n, v.(string))
	case "number":
		ok, err = vd.number(n, v)
	default:
		ok = true
	}
	if stop, err := c.fold(ok, err); stop {
		return false, nil, err
	}
	if n.draft >= draft2019 {
		if r := n.recursiveRef; r != nil {
			if r.recursiveAnchor && vd.rootRecursiveAnchor() {
				r = vd.top
			}
			if stop, err := c.fold(vd.inPlace(r, v, chain, depth, ev)); stop {
				return false, nil, err
			}
		}
		if n.dynamicRef != nil {
			if stop, err := c.fold(vd.inPlace(n.dynamicRef, v, chain, depth, ev)); stop {
				return false, nil, err
			}
		}
	}
	if stop, err := c.fold(vd.applicators(n, v, chain, depth, ev)); stop {
		return false, nil, err
	}
	if n.draft >= draft2019 {
		if stop, err := c.fold(vd.unevaluated(n, v, depth, ev)); stop {
			return false, nil, err
		}
	}
	if c.unknown {
		return false, nil, errUnknown
	}
	return true, ev, nil
}

// rootRecursiveAnchor: "$recursiveAnchor": true on the document's root (the
// one resource), which makes "$recursiveRef" resolve to the outermost
// schema of the dynamic scope.
func (vd *validator) rootRecursiveAnchor() bool {
	return vd.rootNode.recursiveAnchor
}

func (vd *validator) applicators(n *node, v any, chain *frame, depth int, ev *evaluated) (bool, error) {
	var c conj
	if n.not != nil {
		ok, _, err := vd.validate(n.not, v, chain, depth)
		if stop, err := c.fold(!ok, err); stop {
			return false, err
		}
	}
	for _, s := range n.allOf {
		if stop, err := c.fold(vd.inPlace(s, v, chain, depth, ev)); stop {
			return false, err
		}
	}
	if len(n.anyOf) > 0 {
		matched, unknown := false, false
		for _, s := range n.anyOf {
			ok, err := vd.inPlace(s, v, chain, depth, ev)
			switch {
			case err == errUnknown:
				unknown = true
			case err != nil:
				return false, err
			case ok:
				matched = true
			}
		}
		if !matched {
			if !unknown {
				return false, nil
			}
			c.unknown = true
		}
	}
	if len(n.oneOf) > 0 {
		matched, unknown := 0, 0
		for _, s := range n.oneOf {
			ok, err := vd.inPlace(s, v, chain, depth, ev)
			switch {
			case err == errUnknown:
				unknown++
			case err != nil:
				return false, err
			case ok:
				matched++
				if matched > 1 {
					return false, nil
				}
			}
		}
		if unknown > 0 {
			c.unknown = true
		} else if matched != 1 {
			return false, nil
		}
	}
	if n.ifS != nil {
		ok, err := vd.inPlace(n.ifS, v, chain, depth, ev)
		switch {
		case err == errUnknown:
			c.unknown = true // which branch applies is not known
		case err != nil:
			return false, err
		default:
			branch := n.elseS
			if ok {
				branch = n.thenS
			}
			if branch != nil {
				if stop, err := c.fold(vd.inPlace(branch, v, chain, depth, ev)); stop {
					return false, err
				}
			}
		}
	}
	return c.result()
}

func (vd *validator) object(n *node, obj map[string]any, chain *frame, depth int, ev *evaluated) (bool, error) {
	var c conj
	if n.minProperties != nil && int64(len(obj)) < *n.minProperties {
		return false, nil
	}
	if n.maxProperties != nil && int64(len(obj)) > *n.maxProperties {
		return false, nil
	}
	for _, k := range n.required {
		if _, ok := obj[k]; !ok {
			return false, nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.dependencies)) {
		if _, ok := obj[name]; !ok {
			continue
		}
		dep := n.dependencies[name]
		if dep.schema == nil {
			for _, k := range dep.names {
				if _, ok := obj[k]; !ok {
					return false, nil
				}
			}
			continue
		}
		if stop, err := c.fold(vd.inPlace(dep.schema, obj, chain, depth, ev)); stop {
			return false, err
		}
	}
	ev.allProps = ev.allProps || n.allPropsEvaluated
	for _, k := range sortedKeys(obj) {
		x := obj[k]
		matched := false
		if s, ok := n.properties[k]; ok {
			matched = true
			if stop, err := c.fold(vd.child(s, x, depth)); stop {
				return false, err
			}
		}
		for _, pp := range n.patternProperties {
			if pp.re.MatchString(k) {
				matched = true
				if stop, err := c.fold(vd.child(pp.n, x, depth)); stop {
					return false, err
				}
			}
		}
		if !matched && n.additionalProps != nil {
			matched = true
			if stop, err := c.fold(vd.child(n.additionalProps, x, depth)); stop {
				return false, err
			}
		}
		if matched {
			ev.prop(k)
		}
	}
	if n.draft == draft4 {
		return c.result()
	}
	if n.propertyNames != nil {
		for _, k := range sortedKeys(obj) {
			// Each name is validated afresh, as its own document.
			sub := validator{budget: vd.budget, limits: vd.limits, top: n.propertyNames, rootNode: vd.rootNode}
			ok, _, err := sub.validate(n.propertyNames, k, nil, depth+1)
			vd.budget = sub.budget
			if stop, err := c.fold(ok, err); stop {
				return false, err
			}
		}
	}
	if n.draft == draft6 {
		return c.result()
	}
	for _, name := range slices.Sorted(maps.Keys(n.dependentSchemas)) {
		if _, ok := obj[name]; !ok {
			continue
		}
		if stop, err := c.fold(vd.inPlace(n.dependentSchemas[name], obj, chain, depth, ev)); stop {
			return false, err
		}
	}
	for name, req := range n.dependentRequired {
		if _, ok := obj[name]; !ok {
			continue
		}
		for _, k := range req {
			if _, ok := obj[k]; !ok {
				return false, nil
			}
		}
	}
	return c.result()
}

func (vd *validator) array(n *node, arr []any, depth int, ev *evaluated) (bool, error) {
	var c conj
	if n.minItems != nil && int64(len(arr)) < *n.minItems {
		return false, nil
	}
	if n.maxItems != nil && int64(len(arr)) > *n.maxItems {
		return false, nil
	}
	if n.uniqueItems {
		dup, err := vd.budget.hasDuplicates(arr)
		if err != nil || dup {
			return false, err
		}
	}
	ev.allItems = ev.allItems || n.allItemsEvaluated
	if n.numItemsEvaluated > ev.prefix {
		ev.prefix = n.numItemsEvaluated
	}
	var prefix []*node
	if n.draft < draft2020 {
		prefix = n.itemsArray
	} else {
		prefix = n.prefixItems
	}
	done := min(len(prefix), len(arr))
	for i := 0; i < done; i++ {
		if stop, err := c.fold(vd.child(prefix[i], arr[i], depth)); stop {
			return false, err
		}
	}
	rest := n.items
	if n.draft < draft2020 {
		if n.itemsArray != nil {
			rest = n.additionalItems
		} else {
			done = 0
		}
	}
	if rest != nil {
		for i := done; i < len(arr); i++ {
			if stop, err := c.fold(vd.child(rest, arr[i], depth)); stop {
				return false, err
			}
		}
	}
	if n.contains != nil {
		matched, unknown := int64(0), int64(0)
		for i, x := range arr {
			ok, err := vd.child(n.contains, x, depth)
			switch {
			case err == errUnknown:
				unknown++
			case err != nil:
				return false, err
			case ok:
				matched++
				if n.draft >= draft2020 {
					ev.item(i)
				}
			}
		}
		least := int64(1)
		if n.minContains != nil {
			least = *n.minContains
		}
		if matched+unknown < least || n.maxContains != nil && matched > *n.maxContains {
			return false, nil
		}
		if matched < least || n.maxContains != nil && matched+unknown > *n.maxContains {
			c.unknown = true
		}
	}
	return c.result()
}

func (vd *validator) str(n *node, s string) bool {
	if n.minLength != nil || n.maxLength != nil {
		l := int64(utf8.RuneCountInString(s))
		if n.minLength != nil && l < *n.minLength {
			return false
		}
		if n.maxLength != nil && l > *n.maxLength {
			return false
		}
	}
	return n.pattern == nil || n.pattern.MatchString(s)
}

func (vd *validator) number(n *node, v any) (bool, error) {
	if n.minimum == nil && n.maximum == nil && n.exclusiveMinimum == nil && n.exclusiveMaximum == nil && n.multipleOf == nil {
		return true, nil
	}
	x, _, err := number(v)
	if err != nil {
		return false, err
	}
	if n.minimum != nil && x.Cmp(n.minimum) < 0 ||
		n.maximum != nil && x.Cmp(n.maximum) > 0 ||
		n.exclusiveMinimum != nil && x.Cmp(n.exclusiveMinimum) <= 0 ||
		n.exclusiveMaximum != nil && x.Cmp(n.exclusiveMaximum) >= 0 {
		return false, nil
	}
	if n.multipleOf != nil && n.multipleOf.Sign() != 0 {
		if !new(big.Rat).Quo(x, n.multipleOf).IsInt() {
			return false, nil
		}
	}
	return true, nil
}

func (vd *validator) unevaluated(n *node, v any, depth int, ev *evaluated) (bool, error) {
	var c conj
	if obj, ok := v.(map[string]any); ok && n.unevaluatedProps != nil {
		for _, k := range sortedKeys(obj) {
			if ev.hasProp(k) {
				continue
			}
			if stop, err := c.fold(vd.child(n.unevaluatedProps, obj[k], depth)); stop {
				return false, err
			}
		}
		ev.allProps = true
	}
	if arr, ok := v.([]any); ok && n.unevaluatedItem != nil {
		for i, x := range arr {
			if ev.hasItem(i) {
				continue
			}
			if stop, err := c.fold(vd.child(n.unevaluatedItem, x, depth)); stop {
				return false, err
			}
		}
		ev.allItems = true
	}
	return c.result()
}

// formatValid checks the formats this package knows; known is false for
// one the reference library asserts that it does not check.
func formatValid(name, s string) (valid, known bool) {
	switch name {
	case "regex":
		return isRegex(s), true
	case "uri", "iri":
		return isURI(s), true
	case "uri-reference", "iri-reference":
		return isURIReference(s), true
	}
	return false, false
}
