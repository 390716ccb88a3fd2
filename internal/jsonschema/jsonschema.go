// Package jsonschema compiles a JSON Schema document and validates a JSON
// value against it, for lint's bazaar check (bazaar.md, Schema Validation).
//
// It is written from the JSON Schema specifications (drafts 4, 6, 7,
// 2019-09 and 2020-12, json-schema.org) and held, by a differential test and
// a fuzz target, to the outcomes of github.com/santhosh-tekuri/jsonschema/v6
// as lint configured it (NewCompiler, DefaultDraft(Draft2020), a loader that
// refuses every URL), which it replaces in the binary: that library compiles
// five drafts' meta-schemas in its init, in every process that links it.
//
// Scope, and what it shares with the reference:
//   - One document, same-document references only: "$ref", "$dynamicRef"
//     and "$recursiveRef" to "#", "#/json/pointer" or "#anchor"; an "$id"
//     (or draft 4's "id") naming another resource, or any reference
//     outside the document, is ErrUnsupported (lint refuses those before).
//   - "$schema" selects the draft (absent: 2020-12); a "$schema" naming no
//     draft is ErrInvalidSchema, as the reference (which cannot load it)
//     refuses it.
//   - The document is checked against its draft's meta-schema, encoded here
//     keyword by keyword from the published meta-schemas, with the formats
//     "regex", "uri" and "uri-reference" asserted in that check.
//   - Numbers are exact (big.Rat from the literal): multipleOf, minimum,
//     maximum, the exclusive bounds, enum and const compare decimals, not
//     floats.
//   - "format" asserts in drafts 4, 6 and 7 and is an annotation in 2019-09
//     and 2020-12, as in the reference; of the drafts-4-to-7 formats, regex,
//     uri, iri, uri-reference and iri-reference are checked here; another
//     one the reference knows is unknown, and validation is three-valued:
//     only an outcome that hangs on an unknown is ErrUnsupported.
//   - "pattern" and "patternProperties" are Go regexp, as in the reference.
//
// Every pass is bounded (Limits): a schema or a value past a bound is
// ErrLimit, never a verdict. Nothing is built at package initialisation.
package jsonschema

import (
	"errors"
	"maps"
	"slices"
)

var (
	// ErrInvalidSchema: the document is not a schema the reference
	// library compiles (meta-schema, references, regular expressions).
	ErrInvalidSchema = errors.New("jsonschema: invalid schema")
	// ErrUnsupported: the document uses something this package does not
	// judge (another resource, a format it does not check, ...).
	ErrUnsupported = errors.New("jsonschema: not judged: unsupported construct")
	// ErrLimit: a bound of Limits was reached before a verdict.
	ErrLimit = errors.New("jsonschema: not judged: limit reached")
)

// Limits bound the work of one Compile and of one Validate.
type Limits struct {
	// SchemaNodes is the most JSON values the schema document may hold.
	SchemaNodes int
	// Depth is the deepest nesting of the schema document and of the
	// validated value.
	Depth int
	// Steps is the most schema evaluations (and value comparisons) one
	// Validate may make; the meta-schema check of Compile has the same.
	Steps int
}

// DefaultLimits: far above any schema a bazaar seller publishes (the
// corpus's largest has 40 values), low enough that a hostile one costs
// milliseconds.
var DefaultLimits = Limits{SchemaNodes: 20000, Depth: 128, Steps: 200000}

type budget struct {
	left int
}

func (b *budget) step() error {
	b.left--
	if b.left < 0 {
		return ErrLimit
	}
	return nil
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
