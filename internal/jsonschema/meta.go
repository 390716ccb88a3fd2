package jsonschema

import (
	"errors"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
)

// The drafts, by the reference library's numbering.
const (
	draft4    = 4
	draft6    = 6
	draft7    = 7
	draft2019 = 2019
	draft2020 = 2020
)

// errMeta: the document fails its draft's meta-schema.
var errMeta = errors.New("jsonschema: meta-schema")

// What a meta-schema requires of one keyword's value. Each draft's table
// (metaKind) is read from the published meta-schema of that draft
// (http://json-schema.org/draft-04/schema, .../draft-06/schema,
// .../draft-07/schema, https://json-schema.org/draft/2019-09/schema and
// its six vocabulary meta-schemas, https://json-schema.org/draft/2020-12/schema
// and its seven): "properties" of each, with the "$ref"/"$recursiveRef"/
// "$dynamicRef" to the meta-schema itself read as "a schema of this draft".
type kind uint8

const (
	kAny          kind = iota // true, {} : no constraint
	kSchema                   // the meta-schema itself
	kSchemaArray              // array, minItems 1, items schema
	kItems                    // anyOf [schema, schemaArray]
	kSchemaMap                // object, additionalProperties schema
	kPatternMap               // kSchemaMap whose names are regexes (format regex)
	kDeps                     // object, additionalProperties anyOf [schema, stringArray]
	kDepRequired              // object, additionalProperties stringArray
	kBoolOrSchema             // draft 4 additional*: anyOf [boolean, schema]
	kString                   // type string
	kURI                      // type string, format uri
	kURIRef                   // type string, format uri-reference
	kRegex                    // type string, format regex
	kID                       // uri-reference matching ^[^#]*#?$ (2019-09, 2020-12)
	kAnchor2019               // ^[A-Za-z][-A-Za-z0-9.:_]*$
	kAnchor2020               // ^[A-Za-z_][-A-Za-z0-9._]*$
	kNumber                   // type number
	kPositive                 // type number, exclusive minimum 0
	kBool                     // type boolean
	kNonNegInt                // type integer, minimum 0
	kStringArray              // the draft's stringArray
	kEnum                     // the draft's enum
	kType                     // simpleTypes or a unique non-empty array of them
	kArray                    // type array
	kVocabulary               // object: names format uri, values boolean
)

// metaKind is the meta-schema's rule for keyword k in draft d; known is
// false for a keyword the meta-schema does not name (no constraint).
func metaKind(d int, k string) (kind, bool) {
	// Keywords every draft's meta-schema names the same way.
	switch k {
	case "title", "description":
		return kString, true
	case "default":
		return kAny, true
	case "multipleOf":
		return kPositive, true
	case "maximum", "minimum":
		return kNumber, true
	case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties":
		return kNonNegInt, true
	case "pattern":
		return kRegex, true
	case "uniqueItems":
		return kBool, true
	case "required":
		return kStringArray, true
	case "properties":
		return kSchemaMap, true
	case "enum":
		return kEnum, true
	case "type":
		return kType, true
	case "allOf", "anyOf", "oneOf":
		return kSchemaArray, true
	case "not":
		return kSchema, true
	case "format":
		return kString, true
	case "$schema":
		return kURI, true
	case "definitions":
		return kSchemaMap, true
	case "dependencies":
		return kDeps, true
	}
	switch d {
	case draft4:
		switch k {
		case "id", "$ref":
			return kString, true // id's "format": "uriref" is no format the reference knows
		case "exclusiveMaximum", "exclusiveMinimum":
			return kBool, true
		case "additionalItems", "additionalProperties":
			return kBoolOrSchema, true
		case "items":
			return kItems, true
		case "patternProperties":
			return kSchemaMap, true
		}
	case draft6, draft7:
		switch k {
		case "$id", "$ref":
			return kURIRef, true
		case "exclusiveMaximum", "exclusiveMinimum":
			return kNumber, true
		case "additionalItems", "contains", "additionalProperties", "propertyNames":
			return kSchema, true
		case "items":
			return kItems, true
		case "const":
			return kAny, true
		case "patternProperties":
			if d == draft7 {
				return kPatternMap, true
			}
			return kSchemaMap, true
		}
		if d == draft7 {
			switch k {
			case "$comment", "contentMediaType", "contentEncoding":
				return kString, true
			case "readOnly", "writeOnly":
				return kBool, true
			case "examples":
				return kArray, true
			case "if", "then", "else":
				return kSchema, true
			}
		}
	case draft2019, draft2020:
		switch k {
		// core
		case "$id":
			return kID, true
		case "$ref":
			return kURIRef, true
		case "$vocabulary":
			return kVocabulary, true
		case "$comment":
			return kString, true
		case "$defs":
			return kSchemaMap, true
		// applicator
		case "contains", "additionalProperties", "propertyNames", "if", "then", "else",
			"unevaluatedItems", "unevaluatedProperties":
			return kSchema, true
		case "patternProperties":
			return kPatternMap, true
		case "dependentSchemas":
			return kSchemaMap, true
		// validation
		case "exclusiveMaximum", "exclusiveMinimum":
			return kNumber, true
		case "maxContains", "minContains":
			return kNonNegInt, true
		case "dependentRequired":
			return kDepRequired, true
		case "const":
			return kAny, true
		// meta-data
		case "deprecated", "readOnly", "writeOnly":
			return kBool, true
		case "examples":
			return kArray, true
		// content
		case "contentMediaType", "contentEncoding":
			return kString, true
		case "contentSchema":
			return kSchema, true
		}
		if d == draft2019 {
			switch k {
			case "$anchor":
				return kAnchor2019, true
			case "$recursiveRef":
				return kURIRef, true
			case "$recursiveAnchor":
				return kBool, true
			case "additionalItems":
				return kSchema, true
			case "items":
				return kItems, true
			}
		} else {
			switch k {
			case "$anchor", "$dynamicAnchor", "$recursiveAnchor":
				return kAnchor2020, true
			case "$dynamicRef", "$recursiveRef":
				return kURIRef, true
			case "prefixItems":
				return kSchemaArray, true
			case "items":
				return kSchema, true
			}
		}
	}
	return kAny, false
}

// metaCheck checks doc against draft d's meta-schema.
type metaCheck struct {
	d      int
	b      *budget
	limits Limits
}

func (m *metaCheck) schema(v any, depth int) error {
	if depth > m.limits.Depth {
		return ErrLimit
	}
	if err := m.b.step(); err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool && m.d != draft4 {
			return nil
		}
		return errMeta // draft 4's meta-schema has "type": "object"
	}
	for _, k := range sortedKeys(obj) {
		kd, known := metaKind(m.d, k)
		if !known {
			continue
		}
		if err := m.keyword(kd, obj[k], depth); err != nil {
			return err
		}
	}
	if m.d == draft4 {
		// "dependencies": {"exclusiveMaximum": ["maximum"], "exclusiveMinimum": ["minimum"]}
		if _, ok := obj["exclusiveMaximum"]; ok {
			if _, ok := obj["maximum"]; !ok {
				return errMeta
			}
		}
		if _, ok := obj["exclusiveMinimum"]; ok {
			if _, ok := obj["minimum"]; !ok {
				return errMeta
			}
		}
	}
	return nil
}

func (m *metaCheck) keyword(kd kind, v any, depth int) error {
	switch kd {
	case kAny:
		return nil
	case kSchema:
		return m.schema(v, depth+1)
	case kSchemaArray:
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return errMeta
		}
		for _, x := range arr {
			if err := m.schema(x, depth+2); err != nil {
				return err
			}
		}
		return nil
	case kItems:
		if _, ok := v.([]any); ok {
			return m.keyword(kSchemaArray, v, depth)
		}
		return m.schema(v, depth+1)
	case kSchemaMap, kPatternMap:
		obj, ok := v.(map[string]any)
		if !ok {
			return errMeta
		}
		for _, k := range sortedKeys(obj) {
			if kd == kPatternMap && !isRegex(k) {
				return errMeta
			}
			if err := m.schema(obj[k], depth+2); err != nil {
				return err
			}
		}
		return nil
	case kDeps, kDepRequired:
		obj, ok := v.(map[string]any)
		if !ok {
			return errMeta
		}
		for _, k := range sortedKeys(obj) {
			x := obj[k]
			if kd == kDeps {
				if _, isArr := x.([]any); !isArr {
					if err := m.schema(x, depth+2); err != nil {
						return err
					}
					continue
				}
			}
			if err := m.keyword(kStringArray, x, depth+1); err != nil {
				return err
			}
		}
		return nil
	case kBoolOrSchema:
		if _, ok := v.(bool); ok {
			return nil
		}
		return m.schema(v, depth+1)
	case kString:
		return isString(v)
	case kURI:
		if s, ok := v.(string); ok && isURI(s) {
			return nil
		}
		return errMeta
	case kURIRef:
		if s, ok := v.(string); ok && isURIReference(s) {
			return nil
		}
		return errMeta
	case kRegex:
		if s, ok := v.(string); ok && isRegex(s) {
			return nil
		}
		return errMeta
	case kID:
		if s, ok := v.(string); ok && isURIReference(s) && fragmentEmpty(s) {
			return nil
		}
		return errMeta
	case kAnchor2019, kAnchor2020:
		if s, ok := v.(string); ok && isAnchor(s, kd == kAnchor2019) {
			return nil
		}
		return errMeta
	case kNumber:
		if isNumber(v) {
			return nil
		}
		return errMeta
	case kPositive:
		r, ok, err := number(v)
		if err != nil {
			return err
		}
		if !ok || r.Sign() <= 0 {
			return errMeta
		}
		return nil
	case kBool:
		if _, ok := v.(bool); ok {
			return nil
		}
		return errMeta
	case kNonNegInt:
		r, ok, err := number(v)
		if err != nil {
			return err
		}
		if !ok || !r.IsInt() || r.Sign() < 0 {
			return errMeta
		}
		return nil
	case kStringArray:
		arr, ok := v.([]any)
		if !ok || (m.d == draft4 && len(arr) == 0) {
			return errMeta
		}
		for _, x := range arr {
			if err := isString(x); err != nil {
				return err
			}
		}
		return m.unique(arr)
	case kEnum:
		arr, ok := v.([]any)
		if !ok {
			return errMeta
		}
		if m.d < draft2019 {
			if len(arr) == 0 {
				return errMeta
			}
			return m.unique(arr)
		}
		return nil
	case kType:
		if s, ok := v.(string); ok {
			if simpleType(s) {
				return nil
			}
			return errMeta
		}
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return errMeta
		}
		for _, x := range arr {
			if s, ok := x.(string); !ok || !simpleType(s) {
				return errMeta
			}
		}
		return m.unique(arr)
	case kArray:
		if _, ok := v.([]any); ok {
			return nil
		}
		return errMeta
	case kVocabulary:
		obj, ok := v.(map[string]any)
		if !ok {
			return errMeta
		}
		for k, x := range obj {
			if _, ok := x.(bool); !ok || !isURI(k) {
				return errMeta
			}
		}
		return nil
	}
	return nil
}

func (m *metaCheck) unique(arr []any) error {
	dup, err := m.b.hasDuplicates(arr)
	if err != nil {
		return err
	}
	if dup {
		return errMeta
	}
	return nil
}

func (b *budget) hasDuplicates(arr []any) (bool, error) {
	if len(arr) < 2 {
		return false, nil
	}
	seen := make(map[string]struct{}, len(arr))
	var key []byte
	for _, x := range arr {
		var err error
		if key, err = b.canonical(key[:0], x); err != nil {
			return false, err
		}
		if _, ok := seen[string(key)]; ok {
			return true, nil
		}
		seen[string(key)] = struct{}{}
	}
	return false, nil
}

func isString(v any) error {
	if _, ok := v.(string); ok {
		return nil
	}
	return errMeta
}

func simpleType(s string) bool {
	switch s {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

// isAnchor: the anchor patterns of 2019-09 (^[A-Za-z][-A-Za-z0-9.:_]*$)
// and 2020-12 (^[A-Za-z_][-A-Za-z0-9._]*$).
func isAnchor(s string, d2019 bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		switch {
		case letter:
		case c == '_':
			if d2019 && i == 0 {
				return false
			}
		case c >= '0' && c <= '9' || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		case c == ':' && d2019:
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isRegex: format "regex", read (as the reference reads it) as "Go's
// regexp compiles it".
func isRegex(s string) bool {
	_, err := regexp.Compile(s)
	return err == nil
}

// parseURL is net/url's parser with a check it leaves out: a host with a
// colon must be a bracketed IPv6 address without a zone (RFC 3986, 3.2.2).
func parseURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	if h := u.Hostname(); strings.Contains(h, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return nil, false
		}
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" {
			return nil, false
		}
	}
	return u, true
}

// isURI: format "uri" (and "iri"): an absolute URL (RFC 3986, 4.3).
func isURI(s string) bool {
	u, ok := parseURL(s)
	return ok && u.IsAbs()
}

// isURIReference: format "uri-reference" (and "iri-reference"): a URL,
// relative or not, with no backslash.
func isURIReference(s string) bool {
	if strings.Contains(s, `\`) {
		return false
	}
	_, ok := parseURL(s)
	return ok
}

// fragmentEmpty: ^[^#]*#?$ (no "#", or one "#" that ends the string).
func fragmentEmpty(s string) bool {
	i := strings.IndexByte(s, '#')
	return i == -1 || i == len(s)-1
}
