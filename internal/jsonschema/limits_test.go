package jsonschema

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLimitsAtTheEdge: each bound of Limits holds at its value and refuses
// one past it (ErrLimit, never a verdict).
func TestLimitsAtTheEdge(t *testing.T) {
	nested := func(n int) string { // n levels of {"not": ...} around {}: 2n+1 values
		return strings.Repeat(`{"not":`, n) + `{}` + strings.Repeat(`}`, n)
	}
	t.Run("schema nodes", func(t *testing.T) {
		doc := mustDecode(t, `{"enum":[1,2,3]}`) // 5 values
		if _, err := CompileWithLimits(doc, Limits{SchemaNodes: 5, Depth: 10, Steps: 100}); err != nil {
			t.Fatalf("at the bound: %v", err)
		}
		if _, err := CompileWithLimits(doc, Limits{SchemaNodes: 4, Depth: 10, Steps: 100}); !errors.Is(err, ErrLimit) {
			t.Fatalf("past the bound: %v", err)
		}
	})
	t.Run("schema depth", func(t *testing.T) {
		doc := mustDecode(t, nested(3)) // depth 3
		if _, err := CompileWithLimits(doc, Limits{SchemaNodes: 100, Depth: 3, Steps: 100}); err != nil {
			t.Fatalf("at the bound: %v", err)
		}
		if _, err := CompileWithLimits(doc, Limits{SchemaNodes: 100, Depth: 2, Steps: 100}); !errors.Is(err, ErrLimit) {
			t.Fatalf("past the bound: %v", err)
		}
	})
	t.Run("validation steps", func(t *testing.T) {
		// allOf of four empty-but-not-trivial schemas: 1 + 4 evaluations.
		doc := mustDecode(t, `{"allOf":[{"type":"integer"},{"type":"integer"},{"type":"integer"},{"type":"integer"}]}`)
		s, err := CompileWithLimits(doc, Limits{SchemaNodes: 100, Depth: 10, Steps: 1000})
		if err != nil {
			t.Fatal(err)
		}
		s.limits.Steps = 5
		if ok, err := s.Validate(json.Number("1")); err != nil || !ok {
			t.Fatalf("at the bound: %v %v", ok, err)
		}
		s.limits.Steps = 4
		if _, err := s.Validate(json.Number("1")); !errors.Is(err, ErrLimit) {
			t.Fatalf("past the bound: %v", err)
		}
	})
	t.Run("value depth", func(t *testing.T) {
		s, err := Compile(mustDecode(t, `{"items":{"$ref":"#"}}`))
		if err != nil {
			t.Fatal(err)
		}
		deep := func(n int) any { return mustDecode(t, strings.Repeat("[", n)+strings.Repeat("]", n)) }
		// The root value is at depth 0: Depth+1 nested arrays end at Depth.
		if ok, err := s.Validate(deep(DefaultLimits.Depth + 1)); err != nil || !ok {
			t.Fatalf("at the bound: %v %v", ok, err)
		}
		if _, err := s.Validate(deep(DefaultLimits.Depth + 2)); !errors.Is(err, ErrLimit) {
			t.Fatalf("past the bound: %v", err)
		}
	})
	t.Run("exponent", func(t *testing.T) {
		s, err := Compile(mustDecode(t, `{"minimum":1e-10000}`))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Validate(json.Number("1e10000")); err != nil || !ok {
			t.Fatalf("at the bound: %v %v", ok, err)
		}
		if _, err := s.Validate(json.Number("1e10001")); !errors.Is(err, ErrLimit) {
			t.Fatalf("past the bound: %v", err)
		}
		if _, err := Compile(mustDecode(t, `{"minimum":1e-10001}`)); !errors.Is(err, ErrLimit) {
			t.Fatalf("schema past the bound: %v", err)
		}
	})
	t.Run("exponential schema", func(t *testing.T) {
		// Each level applies the next twice: 2^40 evaluations unbounded.
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range 40 {
			if i > 0 {
				b.WriteString(",")
			}
			next := `{"type":"integer"}`
			if i < 39 {
				next = `{"$ref":"#/$defs/d` + itoa(i+1) + `"}`
			}
			b.WriteString(`"d` + itoa(i) + `":{"allOf":[` + next + `,{"anyOf":[` + next + `]}]}`)
		}
		b.WriteString(`}}`)
		s, err := Compile(mustDecode(t, b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Validate(json.Number("1")); !errors.Is(err, ErrLimit) {
			t.Fatalf("got %v", err)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestNothingAtInit: the package builds nothing before first use (its
// tables are switch statements, its regular expressions compiled per schema).
func TestNothingAtInit(t *testing.T) {
	if d := draftOf("https://json-schema.org/draft/2020-12/schema"); d != draft2020 {
		t.Fatal(d)
	}
}
