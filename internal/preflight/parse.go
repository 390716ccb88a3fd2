package preflight

import (
	"bytes"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/x402"
)

// ParseChallenge reads a challenge as terms-hash is given it: a JSON object
// (a v1 body, or a v2 document as decoded) or a PAYMENT-REQUIRED header value
// (base64 of a v2 document). It returns the hash of every entry a standard
// client reads; ok is false when the input is neither.
func ParseChallenge(raw []byte) ([]EntryHash, bool) {
	s := bytes.TrimSpace(raw)
	if len(s) > 0 && s[0] == '{' {
		v, ok := x402.DecodeJSON(s)
		root, isObj := v.(map[string]any)
		if !ok || !isObj {
			return nil, false
		}
		// A decoded v2 document is read as the header it came from.
		if n, _ := root["x402Version"].(interface{ String() string }); n != nil && n.String() == "2" {
			return HashEntries(lint.Decode(capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{
				"Payment-Required": {encodeB64(s)}}})), true
		}
		return HashEntries(lint.Decode(capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{}, Body: s})), true
	}
	if _, ok := x402.DecodeHeaderValue(string(s)); !ok {
		return nil, false
	}
	return HashEntries(lint.Decode(capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{
		"Payment-Required": {string(s)}}})), true
}
