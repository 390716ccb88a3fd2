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
	"strings"
)

// HeaderName is the x402 v2 challenge header.
const HeaderName = "PAYMENT-REQUIRED"

// HeaderKey is HeaderName in Go's canonical form, the key a captured header
// map holds it under: looked up with it, the name is not re-canonicalised
// (an allocation per graded capture).
const HeaderKey = "Payment-Required"

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

// ParseBody parses a challenge body, census included. parseable reports
// whether the bytes are one JSON value (R17); the leg is read only when that
// value is an object.
func ParseBody(body []byte) (leg Leg, parseable bool) { return ReadBody(body, true) }

// ReadBody is ParseBody in one pass over the bytes; census says whether to
// build the census (only the memo op reports it).
func ReadBody(body []byte, census bool) (leg Leg, parseable bool) {
	d, ok := readDoc(body, census)
	if !ok {
		return Leg{}, false
	}
	if !d.isObject {
		return Leg{}, true
	}
	leg.Read = true
	leg.Memo = d.extraMemo.decoded()
	if leg.Memo == "" {
		// R15: the top-level fallback; R5: it needs no accepts[0].
		leg.Memo = d.memo.decoded()
	}
	if census {
		leg.Census = []string{}
	}
	if !d.hasA0 {
		return leg, true
	}
	leg.HasAccepts0 = true
	if census {
		leg.Census = d.census
	}
	leg.PayTo = d.payTo.decoded()
	leg.TokenAccount = d.tokenAccount.decoded()
	leg.Amount = digitsOnly(d.amount.decoded())
	leg.MaxAmountRequired = digitsOnly(d.maxAmount.decoded())
	leg.Resource = d.resource.decoded() // R1: "resource = resource", a string only
	leg.Description = d.description.decoded()
	return leg, true
}

// digitsOnly is s when it is a string of digits (R3), else "".
func digitsOnly(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return ""
		}
	}
	return s
}

// RejectionReason is rail-probe rule (3)'s body test (R10), in one pass:
// parseable when the bytes are one JSON value (R17), reason when that value
// is an object with a non-empty error, reason or detail string.
func RejectionReason(body []byte) (parseable, reason bool) {
	d, ok := readDoc(body, false)
	if !ok {
		return false, false
	}
	return true, d.isObject && (d.errStr.decoded() != "" || d.reason.decoded() != "" || d.detail.decoded() != "")
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
	raw, ok := headerBytes(value)
	if !ok {
		return nil, false
	}
	return DecodeJSON(raw)
}

// headerBytes is the base64 step of R4 and R29.
func headerBytes(value string) ([]byte, bool) {
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
	return raw, true
}

// ParseHeader decodes a PAYMENT-REQUIRED value and extracts the header leg,
// census included: memo, amount, payTo and both resource places (R1).
// decodable is false when the value cannot be base64/JSON decoded; a decoded
// value that is not an object is decodable and carries nothing (R4).
func ParseHeader(value string) (leg Leg, decodable bool) { return ReadHeader(value, true) }

// ReadHeader is ParseHeader in one pass over the decoded bytes; census says
// whether to build the census.
func ReadHeader(value string, census bool) (leg Leg, decodable bool) {
	raw, ok := headerBytes(value)
	if !ok {
		return Leg{}, false
	}
	d, ok := readDoc(raw, census)
	if !ok {
		return Leg{}, false
	}
	if !d.isObject {
		return Leg{}, true
	}
	leg.Read = true
	leg.Resource = d.resourceURL.decoded()
	if census {
		leg.Census = []string{}
	}
	if !d.hasA0 {
		return leg, true
	}
	leg.HasAccepts0 = true
	if census {
		leg.Census = d.census
	}
	leg.Memo = d.extraMemo.decoded()
	leg.Amount = digitsOnly(d.amount.decoded())
	leg.PayTo = d.payTo.decoded()
	leg.Resource2 = d.a0ResourceURL.decoded()
	return leg, true
}
