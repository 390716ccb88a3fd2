// Package x402 decodes the two legs of an x402 challenge — the v1 JSON body
// and the v2 PAYMENT-REQUIRED header — into the fields the criteria grade. It
// is pure: bytes and strings in, extracted fields out.
package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"
)

// HeaderName is the x402 v2 challenge header.
const HeaderName = "PAYMENT-REQUIRED"

// Leg is what one leg of a challenge carries. A string field is "" when the
// field is absent: not a JSON string, or an empty one (reading R3). Amount
// fields are "" unless they are strings of digits.
type Leg struct {
	// Read is true when the leg could be read: the body parsed as a JSON
	// object, or the header decoded to a JSON object. A body or header that
	// decodes to another JSON value is parseable/decodable but not read.
	Read bool
	// HasAccepts0 is true when accepts[0] exists and is an object (R5).
	HasAccepts0 bool

	PayTo             string
	TokenAccount      string
	Memo              string
	Amount            string
	MaxAmountRequired string
	// Resource is the body leg's accepts[0].resource when it is a string
	// (R1). On the header leg it is the top-level resource.url.
	Resource string
	// Resource2 is the header leg's second resource place,
	// accepts[0].resource.url (R1); always "" on the body leg.
	Resource2   string
	Description string // body leg only; "" when absent or not a string

	// Census is the sorted, de-duplicated union of the key names of
	// accepts[0] and accepts[0].extra (R24); nil when the leg was not read.
	Census []string
}

var digits = regexp.MustCompile(`^[0-9]+$`)

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func amount(m map[string]any, key string) string {
	s := str(m, key)
	if !digits.MatchString(s) {
		return ""
	}
	return s
}

func accepts0(root map[string]any) (map[string]any, bool) {
	arr, ok := root["accepts"].([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	first, ok := arr[0].(map[string]any)
	return first, ok
}

func census(a0 map[string]any) []string {
	names := make([]string, 0, len(a0))
	seen := make(map[string]bool, len(a0))
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	for k := range a0 {
		add(k)
	}
	if extra, ok := a0["extra"].(map[string]any); ok {
		for k := range extra {
			add(k)
		}
	}
	sort.Strings(names)
	return names
}

// DecodeJSON parses b as exactly one JSON value with nothing but whitespace
// after it (R17). Numbers are kept as their text (json.Number): JSON's number
// grammar has no magnitude limit, so 1e400 or a 400-digit integer is as much
// JSON as 1, and must not make a body or header "not JSON" the way decoding
// into float64 would. A number is never a string, so a number-typed field stays
// absent (R3).
func DecodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // a second value or garbage after the first
	}
	return v, true
}

// ParseBody parses a challenge body. parseable reports whether the bytes are
// one JSON value (R17); the leg is read only when that value is an object.
func ParseBody(body []byte) (leg Leg, parseable bool) {
	v, ok := DecodeJSON(body)
	if !ok {
		return Leg{}, false
	}
	root, ok := v.(map[string]any)
	if !ok {
		return Leg{}, true
	}
	leg.Read = true
	a0, ok := accepts0(root)
	if !ok {
		leg.Census = []string{}
		leg.Memo = str(root, "memo") // R5/R15: the fallback needs no accepts[0]
		return leg, true
	}
	leg.HasAccepts0 = true
	leg.Census = census(a0)
	extra, _ := a0["extra"].(map[string]any)
	leg.PayTo = str(a0, "payTo")
	leg.TokenAccount = str(extra, "usdc_token_account")
	leg.Memo = str(extra, "memo")
	if leg.Memo == "" {
		leg.Memo = str(root, "memo") // R15: top-level fallback
	}
	leg.Amount = amount(a0, "amount")
	leg.MaxAmountRequired = amount(a0, "maxAmountRequired")
	leg.Resource = str(a0, "resource") // R1: "resource = resource", a string only
	leg.Description = str(a0, "description")
	return leg, true
}

// DecodeHeaderValue decodes a PAYMENT-REQUIRED value to a JSON object:
// standard base64 alphabet, padding optional, surrounding whitespace ignored
// (R4). ok is false for anything else, a decoded non-object included; the
// graders' decodability is DecodeHeaderJSON's.
func DecodeHeaderValue(value string) (map[string]any, bool) {
	v, ok := DecodeHeaderJSON(value)
	root, isObject := v.(map[string]any)
	if !ok || !isObject {
		return nil, false
	}
	return root, true
}

// DecodeHeaderJSON decodes a PAYMENT-REQUIRED value (R4): standard base64
// alphabet, padding optional, surrounding whitespace ignored, decoding to one
// JSON value of any type (R17). ok is false when the value cannot be
// base64/JSON decoded — state rule (3)'s words.
func DecodeHeaderJSON(value string) (any, bool) {
	s := strings.Trim(value, " \t\r\n")
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		// The standard library skips CR and LF inside base64; R4 does not.
		return nil, false
	}
	enc := base64.RawStdEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.StdEncoding
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return DecodeJSON(raw)
}

// ParseHeader decodes a PAYMENT-REQUIRED value and extracts the header leg:
// memo, amount, payTo and both resource places (R1). decodable is false when
// the value cannot be base64/JSON decoded; a decoded value that is not an
// object is decodable and carries nothing (R4).
func ParseHeader(value string) (leg Leg, decodable bool) {
	v, ok := DecodeHeaderJSON(value)
	if !ok {
		return Leg{}, false
	}
	root, isObject := v.(map[string]any)
	if !isObject {
		return Leg{}, true
	}
	leg.Read = true
	a0, hasA0 := accepts0(root)
	if r, ok := root["resource"].(map[string]any); ok {
		leg.Resource = str(r, "url")
	}
	if !hasA0 {
		leg.Census = []string{}
		return leg, true
	}
	leg.HasAccepts0 = true
	leg.Census = census(a0)
	extra, _ := a0["extra"].(map[string]any)
	leg.Memo = str(extra, "memo")
	leg.Amount = amount(a0, "amount")
	leg.PayTo = str(a0, "payTo")
	if r, ok := a0["resource"].(map[string]any); ok {
		leg.Resource2 = str(r, "url")
	}
	return leg, true
}
