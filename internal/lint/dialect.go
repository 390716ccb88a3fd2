package lint

import "strings"

const headerField = "PAYMENT-REQUIRED"

// dialect decides which legs of a 402 are graded and as which version:
//
//   - the header, when it decodes, is a v2 leg (x402Version must be 2);
//   - a body with x402Version 1 is a v1 leg, always;
//   - with no usable header, a body with x402Version 2 is graded as a v2
//     body leg, plus v2_header_missing when the header is absent;
//   - with a usable header, any other body is the server's business
//     (transports-v2/http.md, Response Body) and is not graded.
func (g *grader) dialect(ch Challenge, d *Dialect) []view {
	var legs []view
	headerOK := false
	switch {
	case ch.Header == nil:
	case !ch.HeaderDecodable:
		g.add(ruleHeaderUndecodable, LegHTTP, nil, headerField)
	case ch.Header.Version != 2:
		g.add(ruleVersionInvalid, LegHeader, nil, "x402Version")
	default:
		headerOK = true
		d.V2Header = true
		legs = append(legs, view{doc: ch.Header, leg: LegHeader, version: 2})
	}
	if b := ch.Body; b != nil {
		_, hasVersion := b.Root["x402Version"]
		_, hasAccepts := b.Root["accepts"]
		switch {
		case b.Version == 1:
			d.V1Body = true
			legs = append(legs, view{doc: b, leg: LegBody, version: 1})
		case headerOK:
		case b.Version == 2:
			if ch.Header == nil {
				g.add(ruleV2HeaderMissing, LegHTTP, nil, headerField)
			}
			legs = append(legs, view{doc: b, leg: LegBody, version: 2})
		case hasVersion || hasAccepts:
			g.add(ruleVersionInvalid, LegBody, nil, "x402Version")
		}
	}
	if len(legs) == 0 && len(g.findings) == 0 {
		g.add(ruleChallengeMissing, LegHTTP, nil, headerField)
	}
	return legs
}

// compareLegs grades that a v2 header and a v1 body offer the same terms,
// entry by entry; findings are on the v1 leg, in its field names.
func (g *grader) compareLegs(h, b view) {
	if len(h.doc.Accepts) != len(b.doc.Accepts) {
		g.add(ruleLegsEntryCount, LegBody, nil, "accepts")
	}
	for i := 0; i < min(len(h.doc.Accepts), len(b.doc.Accepts)); i++ {
		ht, ok1 := h.doc.EntryTerms(i, 2)
		bt, ok2 := b.doc.EntryTerms(i, 1)
		if !ok1 || !ok2 {
			continue
		}
		// A term absent from either leg is that leg's own finding, not a
		// mismatch; so is a v1 network name lint does not know.
		p := entryPrefix(i)
		fam := FamilyOf(ht.Network)
		for _, c := range []struct {
			field    string
			a, b     string
			sameTerm func(a, b string) bool
		}{
			{"scheme", ht.Scheme, bt.Scheme, func(a, b string) bool { return a == b }},
			{"network", ht.Network, bt.Network, func(a, b string) bool { return a == b }},
			{"maxAmountRequired", ht.Amount, bt.Amount, sameAmount},
			{"asset", ht.Asset, bt.Asset, func(a, b string) bool { return sameAddress(fam, a, b) }},
			{"payTo", ht.PayTo, bt.PayTo, func(a, b string) bool { return sameAddress(fam, a, b) }},
		} {
			if c.a != "" && c.b != "" && !c.sameTerm(c.a, c.b) {
				g.add(ruleLegsMismatch, LegBody, idx(i), p+c.field)
			}
		}
	}
}

// sameAmount compares two amounts as numbers when both are digit strings
// (leading zeros are their own warning), else as strings.
func sameAmount(a, b string) bool {
	if digits(a) && digits(b) {
		return trimZeros(a) == trimZeros(b)
	}
	return a == b
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

// sameAddress: EVM addresses are case-insensitive (EIP-55 case is only a
// checksum); every other family's are compared exactly.
func sameAddress(f Family, a, b string) bool {
	if f == FamilyEVM {
		return strings.EqualFold(a, b)
	}
	return a == b
}
