package lint

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/exchangerebel/payability/internal/jsonschema"
)

// Extension keys graded by x402-lint/v1.
const (
	extBazaar            = "bazaar"
	extSignInWithX       = "sign-in-with-x"
	extPaymentIdentifier = "payment-identifier"
)

// extensions grades a v2 leg's extensions object: its shape, then each
// extension lint knows.
func (g *grader) extensions(v view) {
	raw, present := v.doc.Root["extensions"]
	if !present {
		return
	}
	exts, ok := raw.(map[string]any)
	if !ok {
		g.add(ruleExtensionsInvalid, v.leg, nil, "extensions")
		return
	}
	for _, k := range sortedKeys(exts) {
		ext, ok := exts[k].(map[string]any)
		if !ok {
			// Only a key lint knows is named in the path: an unknown key is
			// the seller's text.
			field := "extensions"
			if k == extBazaar || k == extSignInWithX || k == extPaymentIdentifier {
				field += "." + k
			}
			g.add(ruleExtensionsInvalid, v.leg, nil, field)
			continue
		}
		switch k {
		case extBazaar:
			g.bazaar(v.leg, ext)
		case extSignInWithX:
			g.signInWithX(v.leg, ext)
		case extPaymentIdentifier:
			g.paymentIdentifier(v.leg, ext)
		}
	}
}

// bazaar validates info against schema (JSON Schema, 2020-12 unless its
// $schema names draft 4, 6, 7 or 2019-09) with only same-document
// references: every $ref, $dynamicRef, $recursiveRef and $id must start
// with "#", and nothing remote is ever loaded (bazaar.md, Schema
// Validation). The validator is internal/jsonschema, held to the outcomes
// of santhosh-tekuri/jsonschema/v6 (which lint used before) by a
// differential test and a fuzz target. A schema or info it does not judge
// (a construct it does not reproduce, or past its bounds) draws no bazaar
// finding: lint never claims a defect it has not shown (docs/lint.md).
func (g *grader) bazaar(leg Leg, ext map[string]any) {
	const p = "extensions.bazaar."
	schema, ok := ext["schema"].(map[string]any)
	if !ok || !localRefsOnly(schema, 0) {
		g.add(ruleBazaarSchemaInvalid, leg, nil, p+"schema")
		return
	}
	sch, err := jsonschema.Compile(schema)
	if errors.Is(err, jsonschema.ErrInvalidSchema) {
		g.add(ruleBazaarSchemaInvalid, leg, nil, p+"schema")
		return
	}
	info, present := ext["info"]
	if !present {
		g.add(ruleBazaarInfoInvalid, leg, nil, p+"info")
		return
	}
	if err != nil {
		return // not judged
	}
	if valid, err := sch.Validate(info); err == nil && !valid {
		g.add(ruleBazaarInfoInvalid, leg, nil, p+"info")
	}
}

// maxSchemaDepth bounds the walk of a seller's schema (the decoder already
// bounds JSON nesting; this keeps the walk's own stack small).
const maxSchemaDepth = 64

// localRefsOnly reports whether every reference keyword in v is a
// same-document fragment. Only a string value is a reference: a member named
// "$ref" whose value is an object is a property of that name (under
// properties) or, in keyword position, a schema the compiler refuses; the
// refusing loader stays the guard either way.
func localRefsOnly(v any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "$ref" || k == "$dynamicRef" || k == "$id" || k == "$recursiveRef" {
				if s, ok := x.(string); ok && !strings.HasPrefix(s, "#") {
					return false
				}
			}
			if !localRefsOnly(x, depth+1) {
				return false
			}
		}
	case []any:
		for _, x := range t {
			if !localRefsOnly(x, depth+1) {
				return false
			}
		}
	}
	return true
}

var siwxNonce = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{32}$`) }) // compiled on first use, not at start-up

// signInWithX grades the server-declared info of sign-in-with-x against the
// called URL and the check time (sign-in-with-x.md, Server-Declared Fields
// and 2. Validate Message Fields). Its schema describes the client's proof
// and is not graded.
func (g *grader) signInWithX(leg Leg, ext map[string]any) {
	const p = "extensions.sign-in-with-x.info."
	info, ok := ext["info"].(map[string]any)
	if !ok {
		g.add(ruleSIWXInfoMissing, leg, nil, "extensions.sign-in-with-x.info")
		return
	}
	if c := g.called; c != nil {
		if d, _ := info["domain"].(string); !strings.EqualFold(d, authority(c)) {
			g.add(ruleSIWXDomain, leg, nil, p+"domain")
		}
		u, err := url.Parse(str(info, "uri"))
		if err != nil || u.Host == "" || !sameOrigin(u, c) {
			g.add(ruleSIWXURI, leg, nil, p+"uri")
		}
	}
	if str(info, "version") != "1" {
		g.add(ruleSIWXVersion, leg, nil, p+"version")
	}
	if !siwxNonce().MatchString(str(info, "nonce")) {
		g.add(ruleSIWXNonce, leg, nil, p+"nonce")
	}
	now := g.in.Now
	issued, err := parseTime(info["issuedAt"])
	if err != nil || (!now.IsZero() && issued.After(now)) {
		g.add(ruleSIWXIssuedAt, leg, nil, p+"issuedAt")
	}
	if v, present := info["expirationTime"]; present {
		exp, err := parseTime(v)
		if err != nil || (!now.IsZero() && !exp.After(now)) {
			g.add(ruleSIWXExpiration, leg, nil, p+"expirationTime")
		}
	}
}

func parseTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errors.New("not a string")
	}
	return time.Parse(time.RFC3339Nano, s)
}

var paymentID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`) }) // compiled on first use, not at start-up

// paymentIdentifier grades payment-identifier's info: a boolean required
// and, when present, an id of 16 to 128 of A-Z a-z 0-9 - _
// (payment_identifier.md, PaymentRequired and id Format).
func (g *grader) paymentIdentifier(leg Leg, ext map[string]any) {
	const p = "extensions.payment-identifier.info"
	info, ok := ext["info"].(map[string]any)
	if !ok {
		g.add(rulePaymentIdentifierInvalid, leg, nil, p)
		return
	}
	if _, ok := info["required"].(bool); !ok {
		g.add(rulePaymentIdentifierInvalid, leg, nil, p+".required")
	}
	if v, present := info["id"]; present {
		if s, _ := v.(string); !paymentID().MatchString(s) {
			g.add(rulePaymentIdentifierInvalid, leg, nil, p+".id")
		}
	}
}
