package jsonschema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/exchangerebel/payability/internal/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// The outcome of one judgement: the schema refused, the value invalid, the
// value valid; notJudged only from this package.
type outcome string

const (
	schemaInvalid outcome = "schema-invalid"
	valueInvalid  outcome = "value-invalid"
	valueValid    outcome = "valid"
	notJudged     outcome = "not-judged"
)

type refuse struct{}

func (refuse) Load(string) (any, error) { return nil, errors.New("refused") }

// reference judges as lint judged with santhosh-tekuri/jsonschema/v6.
func reference(schema, value any) outcome {
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.UseLoader(refuse{})
	const loc = "urn:x402-lint:bazaar-schema"
	if err := c.AddResource(loc, schema); err != nil {
		return schemaInvalid
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return schemaInvalid
	}
	if sch.Validate(value) != nil {
		return valueInvalid
	}
	return valueValid
}

func ours(schema, value any) outcome {
	s, err := jsonschema.Compile(schema)
	switch {
	case errors.Is(err, jsonschema.ErrInvalidSchema):
		return schemaInvalid
	case err != nil:
		return notJudged
	}
	ok, err := s.Validate(value)
	switch {
	case err != nil:
		return notJudged
	case ok:
		return valueValid
	}
	return valueInvalid
}

func decode(t testing.TB, s string) (any, bool) {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if t != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		return nil, false
	}
	if d.More() {
		return nil, false
	}
	return v, true
}
