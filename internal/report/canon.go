package report

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/exchangerebel/payability/internal/jsonenc"
)

// This file builds the RFC 8785 canonical form in one pass over JSON text:
// a tree of canonical scalar texts and sorted members, never a generic
// map[string]any. It accepts and refuses exactly what jcs.Transform followed
// by the safe-integer check did (the tests compare the two on every corpus
// of odd inputs and by fuzzing), so signatures are byte-identical.

// maxDepth is jcs's nesting limit, kept so the same documents are refused.
const maxDepth = 10000

type kind uint8

const (
	kindScalar kind = iota
	kindArray
	kindObject
)

// cval is one value in canonical form.
type cval struct {
	kind    kind
	text    []byte // scalar: its canonical text
	elems   []cval
	members []cmember // sorted by key in UTF-16 code-unit order
}

// cmember is one object member: its decoded name (for sorting and lookup)
// and the name's canonical text.
type cmember struct {
	name  string
	qname []byte
	val   cval
}

// parser reads JSON text; unsafe records a number that is not a safe
// integer, which matters only once the whole text has parsed.
type parser struct {
	in     []byte
	i      int
	depth  int
	unsafe bool
	// out is scratch space for canonical scalars, so most of them share one
	// allocation.
	out []byte
}

// canonicalTree parses JSON text into its canonical tree. Errors are
// ErrInvalidJSON (jcs would refuse the text) or ErrUnsafeNumber (jcs would
// accept it but a number is not a safe integer).
func canonicalTree(in []byte) (cval, error) {
	p := parser{in: in, out: make([]byte, 0, len(in))}
	p.skipSpace()
	v, ok := p.value()
	if !ok {
		return cval{}, ErrInvalidJSON
	}
	p.skipSpace()
	if p.i != len(p.in) {
		return cval{}, ErrInvalidJSON
	}
	if p.unsafe {
		return cval{}, ErrUnsafeNumber
	}
	return v, nil
}

func (p *parser) skipSpace() {
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (cval, bool) {
	if p.i >= len(p.in) {
		return cval{}, false
	}
	switch c := p.in[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, ok := p.str()
		if !ok {
			return cval{}, false
		}
		return cval{text: p.quote(s)}, true
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return cval{}, false
}

func (p *parser) literal(lit string) (cval, bool) {
	if !bytes.HasPrefix(p.in[p.i:], []byte(lit)) {
		return cval{}, false
	}
	p.i += len(lit)
	return cval{text: []byte(lit)}, true
}

// number reads a number of the JSON grammar and writes its ES6 form, as jcs
// does; a number jcs would refuse (out of float64 range) is invalid.
func (p *parser) number() (cval, bool) {
	start := p.i
	if p.in[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.in) && p.in[p.i] >= '0' && p.in[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	n := digits()
	if n == 0 || n > 1 && p.in[intStart] == '0' {
		return cval{}, false
	}
	integer := true
	if p.i < len(p.in) && p.in[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return cval{}, false
		}
		integer = false
	}
	if p.i < len(p.in) && (p.in[p.i] == 'e' || p.in[p.i] == 'E') {
		p.i++
		if p.i < len(p.in) && (p.in[p.i] == '+' || p.in[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return cval{}, false
		}
		integer = false
	}
	tok := p.in[start:p.i]
	if integer && n <= 15 {
		// Fewer than 16 digits: exactly a float64, and ES6 writes it as
		// its digits ("-0" as "0"). Always a safe integer.
		if n == 1 && p.in[intStart] == '0' {
			return cval{text: []byte("0")}, true
		}
		return cval{text: tok}, true
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return cval{}, false
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return cval{}, false
	}
	if !safeInteger(s) {
		p.unsafe = true
	}
	return cval{text: []byte(s)}, true
}

// str reads a string token and returns its decoded UTF-8 text, refusing
// what jcs refuses: raw control characters, unknown escapes, unpaired
// surrogates and invalid UTF-8.
func (p *parser) str() (string, bool) {
	p.i++ // the opening quote
	start := p.i
	// Fast path: no escape and only ASCII or valid UTF-8 up to the quote.
	for p.i < len(p.in) {
		c := p.in[p.i]
		if c == '"' {
			s := p.in[start:p.i]
			p.i++
			return string(s), true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			p.i++
			continue
		}
		r, size := utf8.DecodeRune(p.in[p.i:])
		if r == utf8.RuneError && size <= 1 {
			return "", false
		}
		p.i += size
	}
	buf := append([]byte(nil), p.in[start:p.i]...)
	for p.i < len(p.in) {
		c := p.in[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), true
		case c < 0x20:
			return "", false
		case c == '\\':
			p.i++
			if p.i >= len(p.in) {
				return "", false
			}
			e := p.in[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					if r > 0xDBFF { // a low surrogate first
						return "", false
					}
					if p.i+1 >= len(p.in) || p.in[p.i] != '\\' || p.in[p.i+1] != 'u' {
						return "", false
					}
					p.i += 2
					lo, ok := p.hex4()
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return "", false
					}
					r = utf16.DecodeRune(r, lo)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.in[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", false
			}
			buf = append(buf, p.in[p.i:p.i+size]...)
			p.i += size
		}
	}
	return "", false
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.i : p.i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

// quote writes s as an RFC 8785 string: only '"', '\\' and control
// characters are escaped (the six short forms, else \u00xx); every other
// character is written as its UTF-8 bytes.
func (p *parser) quote(s string) []byte {
	start := len(p.out)
	p.out = appendQuoted(p.out, s)
	return p.out[start:len(p.out):len(p.out)]
}

func appendQuoted(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			out = jsonenc.AppendEscape(out, c)
		} else {
			out = append(out, c)
		}
	}
	return append(out, '"')
}

func (p *parser) array() (cval, bool) {
	if p.depth++; p.depth > maxDepth {
		return cval{}, false
	}
	defer func() { p.depth-- }()
	p.i++ // '['
	v := cval{kind: kindArray}
	p.skipSpace()
	if p.i < len(p.in) && p.in[p.i] == ']' {
		p.i++
		return v, true
	}
	for {
		p.skipSpace()
		e, ok := p.value()
		if !ok {
			return cval{}, false
		}
		v.elems = append(v.elems, e)
		p.skipSpace()
		if p.i >= len(p.in) {
			return cval{}, false
		}
		switch p.in[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, true
		default:
			return cval{}, false
		}
	}
}

func (p *parser) object() (cval, bool) {
	if p.depth++; p.depth > maxDepth {
		return cval{}, false
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	v := cval{kind: kindObject}
	p.skipSpace()
	if p.i < len(p.in) && p.in[p.i] == '}' {
		p.i++
		return v, true
	}
	for {
		p.skipSpace()
		if p.i >= len(p.in) || p.in[p.i] != '"' {
			return cval{}, false
		}
		name, ok := p.str()
		if !ok {
			return cval{}, false
		}
		p.skipSpace()
		if p.i >= len(p.in) || p.in[p.i] != ':' {
			return cval{}, false
		}
		p.i++
		p.skipSpace()
		e, ok := p.value()
		if !ok {
			return cval{}, false
		}
		v.members = append(v.members, cmember{name: name, qname: p.quote(name), val: e})
		p.skipSpace()
		if p.i >= len(p.in) {
			return cval{}, false
		}
		switch p.in[p.i] {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
		default:
			return cval{}, false
		}
		break
	}
	if !sortMembers(v.members) {
		return cval{}, false // a name given twice
	}
	return v, true
}

// sortMembers sorts by name in UTF-16 code-unit order (insertion sort:
// objects are small, and most arrive nearly sorted) and reports false when
// a name occurs twice.
func sortMembers(m []cmember) bool {
	for i := 1; i < len(m); i++ {
		for j := i; j > 0; j-- {
			c := compareUTF16(m[j-1].name, m[j].name)
			if c == 0 {
				return false
			}
			if c < 0 {
				break
			}
			m[j-1], m[j] = m[j], m[j-1]
		}
	}
	return true
}

// compareUTF16 orders two UTF-8 strings as their UTF-16 code units compare.
// Byte order agrees with it except between a supplementary character (a
// surrogate pair, 0xD800–0xDFFF) and one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for i, j := 0, 0; ; {
		if i == len(a) || j == len(b) {
			return (len(a) - i) - (len(b) - j) // the shorter remainder sorts first
		}
		ca, cb := a[i], b[j]
		if ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			if ca != cb {
				return int(ca) - int(cb)
			}
			i++
			j++
			continue
		}
		ra, sa := utf8.DecodeRuneInString(a[i:])
		rb, sb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if ua[0] != ub[0] {
				return int(ua[0]) - int(ub[0])
			}
			return int(ua[1]) - int(ub[1])
		}
		i += sa
		j += sb
	}
}

func utf16Units(r rune) [2]uint16 {
	if r < 0x10000 {
		return [2]uint16{uint16(r), 0}
	}
	hi, lo := utf16.EncodeRune(r)
	return [2]uint16{uint16(hi), uint16(lo)}
}

// size is the length of v's canonical text.
func (v *cval) size() int {
	switch v.kind {
	case kindArray:
		n := 2 + max(len(v.elems)-1, 0)
		for i := range v.elems {
			n += v.elems[i].size()
		}
		return n
	case kindObject:
		n := 2 + max(len(v.members)-1, 0)
		for i := range v.members {
			n += len(v.members[i].qname) + 1 + v.members[i].val.size()
		}
		return n
	}
	return len(v.text)
}

// appendTo writes v's canonical text.
func (v *cval) appendTo(out []byte) []byte {
	switch v.kind {
	case kindArray:
		out = append(out, '[')
		for i := range v.elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = v.elems[i].appendTo(out)
		}
		return append(out, ']')
	case kindObject:
		out = append(out, '{')
		for i := range v.members {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, v.members[i].qname...)
			out = append(out, ':')
			out = v.members[i].val.appendTo(out)
		}
		return append(out, '}')
	}
	return append(out, v.text...)
}

func (v *cval) bytes() []byte { return v.appendTo(make([]byte, 0, v.size())) }

// member returns the index of the member named name, or -1.
func (v *cval) member(name string) int {
	for i := range v.members {
		if v.members[i].name == name {
			return i
		}
	}
	return -1
}

// without returns a shallow copy of object v without member i.
func (v *cval) without(i int) cval {
	c := *v
	c.members = append(append(make([]cmember, 0, len(v.members)-1), v.members[:i]...), v.members[i+1:]...)
	return c
}

// with returns a shallow copy of object v with m added in order; v has no
// member of m's name.
func (v *cval) with(m cmember) cval {
	c := *v
	at := len(v.members)
	for i := range v.members {
		if compareUTF16(m.name, v.members[i].name) < 0 {
			at = i
			break
		}
	}
	c.members = make([]cmember, 0, len(v.members)+1)
	c.members = append(append(append(c.members, v.members[:at]...), m), v.members[at:]...)
	return c
}
