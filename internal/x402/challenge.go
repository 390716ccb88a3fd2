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
	// object, or the header decoded to a JSON object.
	Read bool
	// HasAccepts0 is true when accepts[0] exists and is an object (R5).
	HasAccepts0 bool

	PayTo             string
	TokenAccount      string
	Memo              string
	Amount            string
	MaxAmountRequired string
	Resource          string
	Description       string // body leg only; "" when absent or not a string

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
	switch r := a0["resource"].(type) {
	case string:
		leg.Resource = r
	case map[string]any:
		leg.Resource = str(r, "url")
	}
	leg.Description = str(a0, "description")
	return leg, true
}

// DecodeHeaderValue decodes a PAYMENT-REQUIRED value (R4): standard base64
// alphabet, padding optional, surrounding whitespace ignored, decoding to a
// JSON object. ok is false for anything else.
func DecodeHeaderValue(value string) (map[string]any, bool) {
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
	v, ok := DecodeJSON(raw)
	root, isObject := v.(map[string]any)
	if !ok || !isObject {
		return nil, false
	}
	return root, true
}

// ParseHeader decodes a PAYMENT-REQUIRED value and extracts the header leg:
// memo, amount, payTo and resource (R1). decodable is false when the value is
// not base64 of a JSON object.
func ParseHeader(value string) (leg Leg, decodable bool) {
	root, ok := DecodeHeaderValue(value)
	if !ok {
		return Leg{}, false
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
	if leg.Resource == "" {
		leg.Resource = str(a0, "resource")
	}
	return leg, true
}
