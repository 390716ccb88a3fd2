package jsonschema_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// gen builds random schemas and values from the keywords of every draft,
// so that the differential test reaches combinations no list names.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g gen) number() json.Number {
	return json.Number(g.pick("0", "1", "-1", "2", "0.5", "0.01", "0.07", "1.0", "1e2", "3", "-0.5", "10", "9007199254740993", "0.1", "1E+2", "-0", "1e-2", "100e-2", "0.30000000000000004"))
}

func (g gen) value(depth int) any {
	switch k := g.r.IntN(8); {
	case k == 0:
		return nil
	case k == 1:
		return g.r.IntN(2) == 0
	case k == 2 || k == 3:
		return g.number()
	case k == 4:
		return g.pick("", "a", "ab", "é", "x-a", "https://a.example/", "(", "abc", "1")
	case k == 5 && depth < 3:
		a := []any{}
		for range g.r.IntN(4) {
			a = append(a, g.value(depth+1))
		}
		return a
	case depth < 3:
		m := map[string]any{}
		for range g.r.IntN(4) {
			m[g.pick("a", "b", "c", "x-a", "ab")] = g.value(depth + 1)
		}
		return m
	}
	return g.number()
}

func (g gen) schema(depth int) any {
	if depth > 3 || g.r.IntN(6) == 0 {
		switch g.r.IntN(4) {
		case 0:
			return g.r.IntN(2) == 0
		case 1:
			return map[string]any{}
		}
	}
	s := map[string]any{}
	for range 1 + g.r.IntN(3) {
		g.keyword(s, depth)
	}
	return s
}

func (g gen) schemas(depth int) []any {
	a := []any{}
	for range 1 + g.r.IntN(3) {
		a = append(a, g.schema(depth+1))
	}
	return a
}

func (g gen) keyword(s map[string]any, depth int) {
	switch k := g.pick("type", "enum", "const", "multipleOf", "maximum", "minimum", "exclusiveMaximum",
		"exclusiveMinimum", "minLength", "maxLength", "pattern", "items", "prefixItems", "additionalItems",
		"contains", "minContains", "maxContains", "uniqueItems", "minItems", "maxItems", "required",
		"properties", "patternProperties", "additionalProperties", "propertyNames", "dependencies",
		"dependentRequired", "dependentSchemas", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
		"unevaluatedProperties", "unevaluatedItems", "$ref", "$defs", "definitions", "$anchor",
		"format", "minProperties", "maxProperties", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
		"$recursiveAnchor", "$id", "id"); k {
	case "type":
		if g.r.IntN(3) == 0 {
			s[k] = []any{g.pick("string", "integer", "null"), g.pick("number", "object", "array")}
		} else {
			s[k] = g.pick("string", "integer", "number", "object", "array", "boolean", "null", "foo")
		}
	case "enum":
		s[k] = []any{g.value(2), g.value(2)}
	case "const":
		s[k] = g.value(1)
	case "multipleOf", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum":
		if k[0] == 'e' && g.r.IntN(4) == 0 {
			s[k] = true
		} else {
			s[k] = g.number()
		}
	case "minLength", "maxLength", "minContains", "maxContains", "minItems", "maxItems", "minProperties", "maxProperties":
		s[k] = json.Number(g.pick("0", "1", "2", "-1", "1.0"))
	case "pattern":
		s[k] = g.pick("^a", "b$", "(", "é", "^x-")
	case "items", "additionalItems", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else",
		"unevaluatedProperties", "unevaluatedItems":
		if k == "items" && g.r.IntN(3) == 0 {
			s[k] = g.schemas(depth)
		} else {
			s[k] = g.schema(depth + 1)
		}
	case "prefixItems", "allOf", "anyOf", "oneOf":
		s[k] = g.schemas(depth)
	case "uniqueItems":
		s[k] = g.r.IntN(2) == 0
	case "required":
		s[k] = []any{g.pick("a", "b"), g.pick("a", "c")}
	case "properties", "patternProperties", "dependentSchemas", "$defs", "definitions":
		m := map[string]any{}
		for range 1 + g.r.IntN(2) {
			name := g.pick("a", "b", "^x-", "ab")
			if k == "$defs" || k == "definitions" {
				name = g.pick("d1", "d2")
			}
			m[name] = g.schema(depth + 1)
		}
		s[k] = m
	case "dependencies", "dependentRequired":
		if g.r.IntN(2) == 0 && k == "dependencies" {
			s[k] = map[string]any{"a": g.schema(depth + 1)}
		} else {
			s[k] = map[string]any{"a": []any{g.pick("b", "c")}}
		}
	case "$ref", "$dynamicRef", "$recursiveRef":
		s[k] = g.pick("#", "#/$defs/d1", "#/definitions/d2", "#a1", "#/properties/a", "#/nope", "#/$defs/d2")
	case "$anchor", "$dynamicAnchor":
		s[k] = g.pick("a1", "a2", "1a")
	case "$recursiveAnchor":
		s[k] = g.r.IntN(2) == 0
	case "$id", "id":
		s[k] = g.pick("#a1", "#a2", "#")
	case "format":
		s[k] = g.pick("uri", "uri-reference", "regex", "email", "date", "nope")
	}
}

// TestRandomSchemasMatchReference: 4,000 random schema/value pairs per
// run (a fixed seed, so a failure repeats; JSONSCHEMA_SEED and
// JSONSCHEMA_PAIRS choose others), each judged as the reference.
func TestRandomSchemasMatchReference(t *testing.T) {
	n, seed := 4000, uint64(23)
	if v, err := strconv.Atoi(os.Getenv("JSONSCHEMA_PAIRS")); err == nil {
		n = v
	}
	if v, err := strconv.ParseUint(os.Getenv("JSONSCHEMA_SEED"), 10, 64); err == nil {
		seed = v
	}
	g := gen{rand.New(rand.NewPCG(seed, 0))}
	judged := 0
	for i := range n {
		s := g.schema(0).(any)
		if m, ok := s.(map[string]any); ok && i%2 == 0 {
			m["$schema"] = drafts[1+g.r.IntN(len(drafts)-1)]
		}
		v := g.value(0)
		got := ours(s, v)
		if got == notJudged {
			if os.Getenv("JSONSCHEMA_SHOW") != "" {
				sb, _ := json.Marshal(s)
				t.Logf("not judged: %s", sb)
			}
			continue
		}
		judged++
		if want := reference(s, v); got != want {
			sb, _ := json.Marshal(s)
			vb, _ := json.Marshal(v)
			t.Errorf("#%d schema %s value %s: got %s, reference %s", i, sb, vb, got, want)
		}
	}
	t.Logf("%d of %d pairs judged (each as the reference), the rest not judged", judged, n)
}
