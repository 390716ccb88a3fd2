// Package report signs and verifies the JSON documents the paid service
// returns: RFC 8785 canonical form, Ed25519 signatures named by an RFC 7638
// key id, and the RFC 8037 key set that publishes the verifying keys.
//
// Everything here is pure except keys.go, which loads and saves key files.
package report

import (
	"encoding/json"
)

// MaxSafeInteger is the largest integer every JSON reader holds exactly
// (2^53 − 1, the I-JSON range of RFC 7493). Amounts and lamports travel as
// strings; a number outside this range in a signed document is refused.
const MaxSafeInteger = 1<<53 - 1

// Error is a closed-form failure: a fixed code, never a byte of the input.
// Compare with errors.Is against the Err values below; Code gives the code
// for a response body or a metrics label.
type Error struct{ code string }

func (e *Error) Error() string { return "report: " + e.code }

// Code is the closed reason code, e.g. "bad_signature".
func (e *Error) Code() string { return e.code }

// Canonical-form failures.
var (
	// ErrInvalidJSON: the value does not marshal, is not valid JSON (syntax,
	// UTF-8, duplicate member names), or is not the object a signed document
	// must be.
	ErrInvalidJSON = &Error{"invalid_json"}
	// ErrUnsafeNumber: a number that is not an integer in
	// [−MaxSafeInteger, MaxSafeInteger].
	ErrUnsafeNumber = &Error{"unsafe_number"}
)

// Canonical marshals v with encoding/json and returns its RFC 8785
// canonical form. Pass json.RawMessage to canonicalize JSON text as it is.
// Every number must be a safe integer; errors never quote the input.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, ErrInvalidJSON
	}
	return canonicalBytes(raw)
}

// canonicalBytes canonicalizes JSON text in one pass (canon.go): it is
// validated (syntax, UTF-8, surrogates, duplicate names, nesting) and
// written in canonical form, numbers in ES6 form, every one a safe integer.
func canonicalBytes(raw []byte) ([]byte, error) {
	v, err := canonicalTree(raw)
	if err != nil {
		return nil, err
	}
	return v.bytes(), nil
}

// safeInteger reports whether s, an ES6-formatted number, is an integer
// whose magnitude is at most MaxSafeInteger.
func safeInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || len(s) > 16 {
		return false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		v = v*10 + uint64(c-'0')
	}
	return v <= MaxSafeInteger
}
