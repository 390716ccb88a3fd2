package lint

import (
	"encoding/json"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// Document is one leg of a challenge, decoded into generic JSON values
// (numbers kept as json.Number, R17). It is an in-memory value for graders:
// it holds fetched values and never reaches a report.
type Document struct {
	Leg Leg
	// Root is the leg's JSON object; nil when the leg is not a JSON object.
	Root map[string]any
	// Version is x402Version when it is a JSON integer, else 0.
	Version int
	// Accepts is the accepts array as decoded (an element may be a
	// non-object); nil when accepts is absent or not an array.
	Accepts []any
}

// Entry returns accepts[i] when it is a JSON object.
func (d *Document) Entry(i int) (map[string]any, bool) {
	if d == nil || i < 0 || i >= len(d.Accepts) {
		return nil, false
	}
	m, ok := d.Accepts[i].(map[string]any)
	return m, ok
}

// Challenge is both legs of one response as decoded.
type Challenge struct {
	// Header is the PAYMENT-REQUIRED header's document; nil when the header
	// is absent. HeaderDecodable says whether it was base64 of a JSON object.
	Header          *Document
	HeaderDecodable bool
	// Body is the body's document when the body is a JSON object; nil
	// otherwise.
	Body *Document
}

// Decode reads both legs of a response. It never fails: what cannot be read
// is absent, and the rules say what that means.
func Decode(c capture.Capture) Challenge {
	var ch Challenge
	if v, ok := c.Header.Get(x402.HeaderName); ok {
		ch.Header = &Document{Leg: LegHeader}
		if root, ok := x402.DecodeHeaderValue(v); ok {
			ch.HeaderDecodable = true
			fill(ch.Header, root)
		}
	}
	if v, ok := x402.DecodeJSON(c.Body); ok {
		if root, ok := v.(map[string]any); ok {
			ch.Body = &Document{Leg: LegBody}
			fill(ch.Body, root)
		}
	}
	return ch
}

func fill(d *Document, root map[string]any) {
	d.Root = root
	if n, ok := root["x402Version"].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i > 0 && i < 1<<16 {
			d.Version = int(i)
		}
	}
	if arr, ok := root["accepts"].([]any); ok {
		d.Accepts = arr
	}
}

// Terms are the five terms a client pays by, read from one accepts entry
// with both dialects' names unified: Amount is amount (v2) or
// maxAmountRequired (v1), Network is CAIP-2 (a v1 legacy name mapped with
// NetworkCAIP2). A field is "" when absent or not a string (Network also
// when a v1 name is unknown). In-memory only, like Document: it holds
// fetched values.
type Terms struct {
	Scheme, Network, Amount, Asset, PayTo string
}

// EntryTerms returns the terms of accepts[i] of a leg graded as version
// (1 or 2; a Document's own Version when 0); ok is false when the entry is
// not an object. lint compares legs with the same unification
// (legs_mismatch); preflight hashes them.
func (d *Document) EntryTerms(i, version int) (Terms, bool) {
	m, ok := d.Entry(i)
	if !ok {
		return Terms{}, false
	}
	if version == 0 {
		version = d.Version
	}
	t := Terms{Scheme: str(m, "scheme"), Asset: str(m, "asset"), PayTo: str(m, "payTo")}
	if version == 1 {
		t.Amount = str(m, "maxAmountRequired")
		t.Network, _ = NetworkCAIP2(str(m, "network"))
	} else {
		t.Amount = str(m, "amount")
		t.Network = str(m, "network")
	}
	return t, true
}
