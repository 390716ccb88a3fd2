package jsonschema

import (
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Schema is a compiled schema document, ready to validate values.
type Schema struct {
	root   *node
	limits Limits
}

// node is one compiled schema of the document, identified by its JSON
// pointer as written in the reference that reached it (as the reference
// library identifies them, which matters for cycle detection).
type node struct {
	ptr   string
	draft int

	boolean   bool // a boolean schema, or an object schema with no keyword
	boolValue bool

	ref, recursiveRef, dynamicRef *node
	recursiveAnchor               bool

	types    []string
	constV   any
	hasConst bool
	enum     []any
	hasEnum  bool
	format   string

	multipleOf, maximum, minimum, exclusiveMaximum, exclusiveMinimum *big.Rat

	minLength, maxLength, minItems, maxItems, minProperties, maxProperties, minContains, maxContains *int64

	pattern     *regexp.Regexp
	uniqueItems bool
	required    []string

	allOf, anyOf, oneOf []*node
	not                 *node
	ifS, thenS, elseS   *node

	properties        map[string]*node
	patternProperties []patternProperty
	additionalProps   *node
	dependencies      map[string]dependency
	propertyNames     *node
	dependentSchemas  map[string]*node
	dependentRequired map[string][]string
	unevaluatedProps  *node

	items           *node   // a single items schema (every draft)
	itemsArray      []*node // items as an array (drafts before 2020)
	additionalItems *node
	prefixItems     []*node
	contains        *node
	unevaluatedItem *node

	allPropsEvaluated bool
	allItemsEvaluated bool
	numItemsEvaluated int
}

type patternProperty struct {
	re *regexp.Regexp
	n  *node
}

type dependency struct {
	names  []string
	schema *node
}

// Compile compiles doc (decoded with json.Decoder.UseNumber) with
// DefaultLimits.
func Compile(doc any) (*Schema, error) { return CompileWithLimits(doc, DefaultLimits) }

// CompileWithLimits compiles doc. The error is ErrInvalidSchema,
// ErrUnsupported or ErrLimit.
func CompileWithLimits(doc any, limits Limits) (*Schema, error) {
	if err := measure(doc, limits); err != nil {
		return nil, err
	}
	d, err := rootDraft(doc)
	if err != nil {
		return nil, err
	}
	c := &compiler{
		doc: doc, draft: d, limits: limits,
		processed: map[string]bool{}, anchors: map[string]string{},
		nodes:  map[string]*node{},
		budget: budget{left: limits.Steps},
	}
	walkErr := c.walk(doc, "")
	if walkErr == ErrInvalidSchema || walkErr == ErrLimit {
		return nil, walkErr
	}
	m := metaCheck{d: d, b: &c.budget, limits: limits}
	switch err := m.schema(doc, 0); err {
	case nil:
	case errMeta:
		return nil, ErrInvalidSchema
	default:
		return nil, err
	}
	if walkErr != nil {
		return nil, walkErr
	}
	root, err := c.compile("")
	if err != nil {
		return nil, err
	}
	// In 2020-12 the root's dynamic anchors are part of its dynamic scope,
	// so the schema at each is compiled (and must compile) wherever it is.
	for _, ptr := range c.dynamic {
		if _, err := c.compile(ptr); err != nil {
			return nil, err
		}
	}
	return &Schema{root: root, limits: limits}, nil
}

// measure bounds the document's size and depth before anything else reads it.
func measure(doc any, limits Limits) error {
	n := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		n++
		if n > limits.SchemaNodes || depth > limits.Depth {
			return ErrLimit
		}
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				if err := walk(x, depth+1); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range t {
				if err := walk(x, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc, 0)
}

// draftOf names the draft a "$schema" value selects, as the reference
// library reads it: http or https, json-schema.org, an empty fragment
// allowed; "json-schema.org/schema" is the latest (2020-12).
func draftOf(s string) int {
	u, frag, hasFrag := strings.Cut(s, "#")
	if hasFrag && frag != "" {
		return 0
	}
	if r, ok := strings.CutPrefix(u, "http://"); ok {
		u = r
	} else {
		u = strings.TrimPrefix(u, "https://")
	}
	switch u {
	case "json-schema.org/schema", "json-schema.org/draft/2020-12/schema":
		return draft2020
	case "json-schema.org/draft/2019-09/schema":
		return draft2019
	case "json-schema.org/draft-07/schema":
		return draft7
	case "json-schema.org/draft-06/schema":
		return draft6
	case "json-schema.org/draft-04/schema":
		return draft4
	}
	return 0
}

// schemaRef classifies a "$schema" string that names no draft: the
// reference library loads it, and lint's loader refuses every URL, so it
// fails to compile (ErrInvalidSchema) — except for the json-schema.org
// documents the library carries inside itself (vocabulary meta-schemas, a
// draft's meta-schema with a fragment), whose reading this package does not
// reproduce (ErrUnsupported), and the document's own address.
func schemaRef(s string) error {
	if draftOf(s) != 0 {
		return nil
	}
	if strings.HasPrefix(s, "http://json-schema.org/") || strings.HasPrefix(s, "https://json-schema.org/") {
		return ErrUnsupported
	}
	if strings.HasPrefix(s, "urn:") {
		return ErrUnsupported // perhaps the document itself, as the library names it
	}
	return ErrInvalidSchema
}

func rootDraft(doc any) (int, error) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return draft2020, nil
	}
	s, ok := obj["$schema"].(string)
	if !ok {
		return draft2020, nil
	}
	if d := draftOf(s); d != 0 {
		return d, nil
	}
	if strings.HasPrefix(s, "http://json-schema.org/") || strings.HasPrefix(s, "https://json-schema.org/") {
		return 0, ErrUnsupported
	}
	return 0, ErrInvalidSchema // the library cannot load it (nor use the document's own address)
}

type compiler struct {
	doc       any
	draft     int
	limits    Limits
	processed map[string]bool   // pointers of the subschema positions walked
	anchors   map[string]string // anchor name → pointer
	dynamic   []string          // pointers of the $dynamicAnchor schemas, in walk order
	nodes     map[string]*node
	compiled  int
	budget    budget
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// walk visits the subschema positions of the draft from v (at ptr), as the
// reference library does before compiling: it records them, their anchors,
// and refuses what makes another resource. It returns the first
// ErrInvalidSchema or ErrLimit, else the first ErrUnsupported, else nil.
func (c *compiler) walk(v any, ptr string) error {
	var unsupported error
	var rec func(v any, ptr string) error
	rec = func(v any, ptr string) error {
		if err := c.budget.step(); err != nil {
			return err
		}
		c.processed[ptr] = true
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if s, ok := obj["$schema"].(string); ok {
			if err := schemaRef(s); err == ErrInvalidSchema {
				return err
			} else if err != nil && unsupported == nil {
				unsupported = err
			}
		}
		if err := c.collectAnchors(obj, ptr); err != nil {
			if err != ErrUnsupported {
				return err
			}
			if unsupported == nil {
				unsupported = err
			}
		}
		for _, sub := range subschemas(c.draft, obj, ptr) {
			if err := rec(sub.v, sub.ptr); err != nil {
				return err
			}
		}
		return nil
	}
	if err := rec(v, ptr); err != nil {
		return err
	}
	return unsupported
}

func (c *compiler) collectAnchors(obj map[string]any, ptr string) error {
	add := func(name string) error {
		if p, ok := c.anchors[name]; ok && p != ptr {
			return ErrInvalidSchema // the same anchor twice
		}
		c.anchors[name] = ptr
		return nil
	}
	if c.draft < draft2019 {
		if _, ok := obj["$ref"]; ok {
			return nil // "All other properties in a $ref object MUST be ignored"
		}
		key := "$id"
		if c.draft == draft4 {
			key = "id"
		}
		id, ok := obj[key].(string)
		if !ok {
			return nil
		}
		base, frag, _ := strings.Cut(id, "#")
		if base != "" {
			return ErrUnsupported // another resource
		}
		f, err := url.PathUnescape(frag)
		if err != nil {
			return ErrInvalidSchema
		}
		if f != "" && !strings.HasPrefix(f, "/") {
			return add(f)
		}
		return nil
	}
	if id, ok := obj["$id"].(string); ok {
		if base, _, _ := strings.Cut(id, "#"); base != "" {
			return ErrUnsupported
		}
	}
	if s, ok := obj["$anchor"].(string); ok {
		if err := add(s); err != nil {
			return err
		}
	}
	if c.draft >= draft2020 {
		if s, ok := obj["$dynamicAnchor"].(string); ok {
			if err := add(s); err != nil {
				return err
			}
			c.dynamic = append(c.dynamic, ptr)
		}
	}
	return nil
}

type located struct {
	ptr string
	v   any
}

// subschemas lists the values at the draft's subschema positions of obj.
func subschemas(d int, obj map[string]any, ptr string) []located {
	var out []located
	one := func(k string) {
		if v, ok := obj[k]; ok {
			out = append(out, located{ptr + "/" + escapeToken(k), v})
		}
	}
	each := func(k string) {
		if m, ok := obj[k].(map[string]any); ok {
			for _, name := range sortedKeys(m) {
				out = append(out, located{ptr + "/" + escapeToken(k) + "/" + escapeToken(name), m[name]})
			}
		}
	}
	elems := func(k string) {
		if a, ok := obj[k].([]any); ok {
			for i, v := range a {
				out = append(out, located{ptr + "/" + escapeToken(k) + "/" + strconv.Itoa(i), v})
			}
		}
	}
	each("definitions")
	one("not")
	elems("allOf")
	elems("anyOf")
	elems("oneOf")
	each("properties")
	one("additionalProperties")
	each("patternProperties")
	one("items")
	elems("items")
	one("additionalItems")
	each("dependencies")
	if d >= draft6 {
		one("propertyNames")
		one("contains")
	}
	if d >= draft7 {
		one("if")
		one("then")
		one("else")
	}
	if d >= draft2019 {
		each("$defs")
		each("dependentSchemas")
		one("unevaluatedProperties")
		one("unevaluatedItems")
		one("contentSchema")
	}
	if d >= draft2020 {
		elems("prefixItems")
	}
	return out
}

// lookup resolves a JSON pointer in the document (RFC 6901; an array
// index is read as strconv.Atoi reads it, as the reference library does).
func (c *compiler) lookup(ptr string) (any, error) {
	v := c.doc
	if ptr == "" {
		return v, nil
	}
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok, ok := unescapeToken(tok)
		if !ok {
			return nil, ErrInvalidSchema
		}
		switch t := v.(type) {
		case map[string]any:
			x, ok := t[tok]
			if !ok {
				return nil, ErrInvalidSchema
			}
			v = x
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil, ErrInvalidSchema
			}
			v = t[i]
		default:
			return nil, ErrInvalidSchema
		}
	}
	return v, nil
}

func unescapeToken(s string) (string, bool) {
	if !strings.Contains(s, "~") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch s[i+1] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", false
		}
		i++
	}
	return b.String(), true
}

// resolve compiles the target of a same-document reference.
func (c *compiler) resolve(ref string) (*node, string, error) {
	base, frag, _ := strings.Cut(ref, "#")
	if base != "" {
		return nil, "", ErrUnsupported
	}
	f, err := url.PathUnescape(frag)
	if err != nil {
		return nil, "", ErrInvalidSchema
	}
	if f == "" || strings.HasPrefix(f, "/") {
		n, err := c.compile(f)
		return n, "", err
	}
	ptr, ok := c.anchors[f]
	if !ok {
		return nil, "", ErrInvalidSchema
	}
	n, err := c.compile(ptr)
	return n, f, err
}

// compile builds the node at ptr (once per pointer).
func (c *compiler) compile(ptr string) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	c.compiled++
	if c.compiled > 4*c.limits.SchemaNodes {
		return nil, ErrLimit
	}
	v, err := c.lookup(ptr)
	if err != nil {
		return nil, err
	}
	if !c.processed[ptr] {
		// A reference into a place that is no subschema position: the
		// reference library checks that value against the meta-schema and
		// walks it; an anchor found there would change what later
		// references resolve to, in an order it does not fix.
		m := metaCheck{d: c.draft, b: &c.budget, limits: c.limits}
		switch err := m.schema(v, 0); err {
		case nil:
		case errMeta:
			return nil, ErrInvalidSchema
		default:
			return nil, err
		}
		before := len(c.anchors)
		if err := c.walk(v, ptr); err != nil {
			return nil, err
		}
		if len(c.anchors) != before {
			return nil, ErrUnsupported
		}
	}
	n := &node{ptr: ptr, draft: c.draft}
	c.nodes[ptr] = n
	switch t := v.(type) {
	case bool:
		n.boolean, n.boolValue = true, t
	case map[string]any:
		if len(t) == 0 {
			n.boolean, n.boolValue = true, true
		} else if err := c.object(n, t); err != nil {
			return nil, err
		}
	}
	n.allPropsEvaluated = n.additionalProps != nil
	if n.draft < draft2020 {
		n.allItemsEvaluated = n.additionalItems != nil || n.items != nil
		n.numItemsEvaluated = len(n.itemsArray)
	} else {
		n.allItemsEvaluated = n.items != nil
		n.numItemsEvaluated = len(n.prefixItems)
	}
	return n, nil
}

func (c *compiler) prop(n *node, obj map[string]any, k string) (*node, error) {
	if _, ok := obj[k]; !ok {
		return nil, nil
	}
	return c.compile(n.ptr + "/" + escapeToken(k))
}

func (c *compiler) array(n *node, obj map[string]any, k string) ([]*node, error) {
	a, ok := obj[k].([]any)
	if !ok {
		return nil, nil
	}
	out := make([]*node, len(a))
	for i := range a {
		var err error
		if out[i], err = c.compile(n.ptr + "/" + escapeToken(k) + "/" + strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *compiler) members(n *node, obj map[string]any, k string) (map[string]*node, error) {
	m, ok := obj[k].(map[string]any)
	if !ok {
		return nil, nil
	}
	out := make(map[string]*node, len(m))
	for _, name := range sortedKeys(m) {
		var err error
		if out[name], err = c.compile(n.ptr + "/" + escapeToken(k) + "/" + escapeToken(name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *compiler) ref(obj map[string]any, k string) (*node, string, error) {
	s, ok := obj[k].(string)
	if !ok {
		return nil, "", nil
	}
	return c.resolve(s)
}

// The formats the reference library asserts in drafts 4 to 7; those this
// package checks, and those it does not (a schema using one is not judged).
func formatKnown(name string) (checked, known bool) {
	switch name {
	case "regex", "uri", "iri", "uri-reference", "iri-reference":
		return true, true
	case "json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
		"hostname", "email", "date", "time", "date-time", "uri-template", "semver":
		return false, true
	}
	return false, false
}

func (c *compiler) object(n *node, obj map[string]any) error {
	var err error
	d := n.draft
	// $ref; before 2019-09 it makes the other keywords of draft 4 (but
	// not those draft 6 and 7 added, which the reference library still
	// compiles) inert.
	if n.ref, _, err = c.ref(obj, "$ref"); err != nil {
		return err
	}
	if d >= draft2019 || n.ref == nil {
		if err := c.draft4Keywords(n, obj); err != nil {
			return err
		}
	}
	if d >= draft6 {
		if n.contains, err = c.prop(n, obj, "contains"); err != nil {
			return err
		}
		if n.propertyNames, err = c.prop(n, obj, "propertyNames"); err != nil {
			return err
		}
		if v, ok := obj["const"]; ok {
			n.constV, n.hasConst = v, true
		}
	}
	if d >= draft7 {
		if n.ifS, err = c.prop(n, obj, "if"); err != nil {
			return err
		}
		if n.ifS != nil {
			b, isBool := obj["if"].(bool)
			if !isBool || b {
				if n.thenS, err = c.prop(n, obj, "then"); err != nil {
					return err
				}
			}
			if !isBool || !b {
				if n.elseS, err = c.prop(n, obj, "else"); err != nil {
					return err
				}
			}
		}
	}
	if d >= draft2019 {
		if n.recursiveRef, _, err = c.ref(obj, "$recursiveRef"); err != nil {
			return err
		}
		n.recursiveAnchor, _ = obj["$recursiveAnchor"].(bool)
		if n.contains != nil {
			if n.minContains, err = intKeyword(obj, "minContains"); err != nil {
				return err
			}
			if n.maxContains, err = intKeyword(obj, "maxContains"); err != nil {
				return err
			}
		}
		if m, ok := obj["dependentRequired"].(map[string]any); ok {
			n.dependentRequired = map[string][]string{}
			for name, v := range m {
				if a, ok := v.([]any); ok {
					n.dependentRequired[name] = stringsOf(a)
				}
			}
		}
		if n.dependentSchemas, err = c.members(n, obj, "dependentSchemas"); err != nil {
			return err
		}
		if n.unevaluatedItem, err = c.prop(n, obj, "unevaluatedItems"); err != nil {
			return err
		}
		if n.unevaluatedProps, err = c.prop(n, obj, "unevaluatedProperties"); err != nil {
			return err
		}
	}
	if d >= draft2020 {
		// In one document a dynamic reference resolves where a static one
		// does: each anchor names one place, and the outermost dynamic
		// scope is that same document.
		if n.dynamicRef, _, err = c.ref(obj, "$dynamicRef"); err != nil {
			return err
		}
		if n.prefixItems, err = c.array(n, obj, "prefixItems"); err != nil {
			return err
		}
		if n.items, err = c.prop(n, obj, "items"); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) draft4Keywords(n *node, obj map[string]any) error {
	var err error
	d := n.draft
	if n.allOf, err = c.array(n, obj, "allOf"); err != nil {
		return err
	}
	if n.anyOf, err = c.array(n, obj, "anyOf"); err != nil {
		return err
	}
	if n.oneOf, err = c.array(n, obj, "oneOf"); err != nil {
		return err
	}
	if n.not, err = c.prop(n, obj, "not"); err != nil {
		return err
	}
	if d < draft2020 {
		if _, isArr := obj["items"].([]any); isArr {
			if n.itemsArray, err = c.array(n, obj, "items"); err != nil {
				return err
			}
			if n.additionalItems, err = c.prop(n, obj, "additionalItems"); err != nil {
				return err
			}
		} else if n.items, err = c.prop(n, obj, "items"); err != nil {
			return err
		}
	}
	if n.properties, err = c.members(n, obj, "properties"); err != nil {
		return err
	}
	if m, ok := obj["patternProperties"].(map[string]any); ok {
		for _, name := range sortedKeys(m) {
			re, rerr := regexp.Compile(name)
			if rerr != nil {
				return ErrInvalidSchema
			}
			sub, err := c.compile(n.ptr + "/patternProperties/" + escapeToken(name))
			if err != nil {
				return err
			}
			n.patternProperties = append(n.patternProperties, patternProperty{re, sub})
		}
	}
	if n.additionalProps, err = c.prop(n, obj, "additionalProperties"); err != nil {
		return err
	}
	if m, ok := obj["dependencies"].(map[string]any); ok {
		n.dependencies = map[string]dependency{}
		for _, name := range sortedKeys(m) {
			if a, ok := m[name].([]any); ok {
				n.dependencies[name] = dependency{names: stringsOf(a)}
				continue
			}
			sub, err := c.compile(n.ptr + "/dependencies/" + escapeToken(name))
			if err != nil {
				return err
			}
			n.dependencies[name] = dependency{schema: sub}
		}
	}
	switch t := obj["type"].(type) {
	case string:
		n.types = []string{t}
	case []any:
		n.types = stringsOf(t)
	}
	if a, ok := obj["enum"].([]any); ok {
		n.enum, n.hasEnum = a, true
	}
	if n.multipleOf, err = numKeyword(obj, "multipleOf"); err != nil {
		return err
	}
	if n.maximum, err = numKeyword(obj, "maximum"); err != nil {
		return err
	}
	if b, _ := obj["exclusiveMaximum"].(bool); b {
		n.exclusiveMaximum, n.maximum = n.maximum, nil
	} else if n.exclusiveMaximum, err = numKeyword(obj, "exclusiveMaximum"); err != nil {
		return err
	}
	if n.minimum, err = numKeyword(obj, "minimum"); err != nil {
		return err
	}
	if b, _ := obj["exclusiveMinimum"].(bool); b {
		n.exclusiveMinimum, n.minimum = n.minimum, nil
	} else if n.exclusiveMinimum, err = numKeyword(obj, "exclusiveMinimum"); err != nil {
		return err
	}
	for _, k := range [...]struct {
		name string
		dst  **int64
	}{{"minLength", &n.minLength}, {"maxLength", &n.maxLength}, {"minItems", &n.minItems}, {"maxItems", &n.maxItems},
		{"minProperties", &n.minProperties}, {"maxProperties", &n.maxProperties}} {
		if *k.dst, err = intKeyword(obj, k.name); err != nil {
			return err
		}
	}
	if s, ok := obj["pattern"].(string); ok {
		if n.pattern, err = regexp.Compile(s); err != nil {
			return ErrInvalidSchema
		}
	}
	n.uniqueItems, _ = obj["uniqueItems"].(bool)
	if a, ok := obj["required"].([]any); ok {
		n.required = stringsOf(a)
	}
	if d < draft2019 {
		if f, ok := obj["format"].(string); ok {
			if _, known := formatKnown(f); known {
				n.format = f // an unchecked one makes an outcome that hangs on it unknown
			}
		}
	}
	return nil
}

func numKeyword(obj map[string]any, k string) (*big.Rat, error) {
	v, ok := obj[k]
	if !ok {
		return nil, nil
	}
	r, ok, err := number(v)
	if err != nil || !ok {
		return nil, err
	}
	return r, nil
}

// intKeyword: a whole number as the reference library holds it (an int);
// one past int64 is not judged.
func intKeyword(obj map[string]any, k string) (*int64, error) {
	r, err := numKeyword(obj, k)
	if err != nil || r == nil || !r.IsInt() {
		return nil, err
	}
	if !r.Num().IsInt64() {
		return nil, ErrUnsupported
	}
	i := r.Num().Int64()
	return &i, nil
}

func stringsOf(a []any) []string {
	var out []string
	for _, v := range a {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
