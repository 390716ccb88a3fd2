// Package report signs and verifies the JSON documents the paid service
// returns: RFC 8785 canonical form, Ed25519 signatures named by an RFC 7638
// key id, and the RFC 8037 key set that publishes the verifying keys.
//
// Everything here is pure except keys.go, which loads and saves key files.
package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/gowebpki/jcs"
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

// canonicalBytes canonicalizes JSON text: jcs validates it (syntax, UTF-8,
// duplicate names, nesting) and writes the canonical form, whose numbers
// are then in ES6 shortest form, so a safe integer is exactly a run of
// digits with an optional minus sign and a bounded value.
func canonicalBytes(raw []byte) ([]byte, error) {
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, ErrInvalidJSON
	}
	if err := checkNumbers(out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkNumbers(canonical []byte) error {
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return ErrInvalidJSON
		}
		if n, ok := tok.(json.Number); ok && !safeInteger(string(n)) {
			return ErrUnsafeNumber
		}
	}
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
