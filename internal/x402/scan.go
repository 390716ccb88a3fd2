package x402

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// This file is the graders' single-pass reader of one JSON document. It
// validates the whole input exactly as encoding/json does (the JSON grammar,
// R17; the nesting limit, R31) and, in the same pass, keeps the few places
// the criteria read — as slices of the input, decoded only at the end — so a
// challenge is never built into generic maps. Strings are decoded with
// encoding/json's own rules (R30: invalid UTF-8 and lone surrogates become
// U+FFFD) and a key written twice keeps its last value, as a decode into a
// map does. The map-based reading it replaced is kept in the tests as the
// oracle it is fuzzed against.

// maxNesting is encoding/json's nesting limit: 10,000 levels parse, 10,001 do
// not (R31).
const maxNesting = 10000

// str is one JSON value the reader kept: raw is the quoted string token when
// the value was a string, nil otherwise (absent, or another type).
type str struct{ raw []byte }

// decoded returns the string value, "" when the value was not a string.
func (s str) decoded() string {
	if s.raw == nil {
		return ""
	}
	return decodeString(s.raw)
}

// decodeString decodes one quoted JSON string token.
func decodeString(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var out string
	_ = json.Unmarshal(quoted, &out) // the token was validated: this cannot fail
	return out
}

// keyName is a raw quoted key's name, decoded: the bytes between the quotes
// when there is no escape (an invalid UTF-8 byte there never equals one of
// the ASCII names compared with), else the decoded string's bytes.
func keyName(quoted []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	return []byte(decodeString(quoted))
}

// doc is what the reader keeps of one JSON document.
type doc struct {
	isObject bool

	// Top level.
	memo                   str
	resourceURL            str // resource.url when resource is an object
	errStr, reason, detail str

	// accepts[0], when accepts is an array whose first element is an object.
	hasA0                                           bool
	payTo, amount, maxAmount, description, resource str // resource when a string
	a0ResourceURL                                   str // accepts[0].resource.url
	extraMemo, tokenAccount                         str // accepts[0].extra.*
	// census is the census of accepts[0] (R24), built only when asked for;
	// nil otherwise and when there is no accepts[0].
	census []string
}

// reader walks the input once.
type reader struct {
	b      []byte
	i      int
	depth  int
	bad    bool
	census bool // keep the key names of accepts[0] and its extra

	// The raw key names of accepts[0] and of its (last) extra, while census.
	a0Keys, extraKeys keyList
}

// keyList holds raw quoted key names as offsets into the input: a fixed array
// first (the reader lives on the stack), a slice only past it.
type keyList struct {
	n     int
	fixed [24][2]int32
	more  [][2]int32
}

func (l *keyList) reset() { l.n, l.more = 0, l.more[:0] }

// add records key, a subslice of in.
func (l *keyList) add(in, key []byte) {
	start := cap(in) - cap(key)
	span := [2]int32{int32(start), int32(start + len(key))}
	if l.n < len(l.fixed) {
		l.fixed[l.n] = span
	} else {
		l.more = append(l.more, span)
	}
	l.n++
}

func (l *keyList) at(in []byte, i int) []byte {
	span := l.fixed[min(i, len(l.fixed)-1)]
	if i >= len(l.fixed) {
		span = l.more[i-len(l.fixed)]
	}
	return in[span[0]:span[1]]
}

func (r *reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *reader) fail() bool {
	r.bad = true
	return false
}

// peek returns the next byte after whitespace, 0 at the end.
func (r *reader) peek() byte {
	r.ws()
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// str scans a string token at r.i (the opening quote) and returns it quoted.
func (r *reader) str() []byte {
	start := r.i
	r.i++
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return r.b[start:r.i]
		case c == '\\':
			if r.i+1 >= len(r.b) {
				r.fail()
				return nil
			}
			switch r.b[r.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i += 2
			case 'u':
				if r.i+6 > len(r.b) {
					r.fail()
					return nil
				}
				for _, h := range r.b[r.i+2 : r.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						r.fail()
						return nil
					}
				}
				r.i += 6
			default:
				r.fail()
				return nil
			}
		case c < 0x20:
			r.fail()
			return nil
		default:
			r.i++
		}
	}
	r.fail()
	return nil
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *reader) number() bool {
	b := r.b
	if r.i < len(b) && b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(b) && b[r.i] == '0':
		r.i++
	case r.i < len(b) && b[r.i] >= '1' && b[r.i] <= '9':
		for r.i < len(b) && digit(b[r.i]) {
			r.i++
		}
	default:
		return r.fail()
	}
	if r.i < len(b) && b[r.i] == '.' {
		r.i++
		if r.i >= len(b) || !digit(b[r.i]) {
			return r.fail()
		}
		for r.i < len(b) && digit(b[r.i]) {
			r.i++
		}
	}
	if r.i < len(b) && (b[r.i] == 'e' || b[r.i] == 'E') {
		r.i++
		if r.i < len(b) && (b[r.i] == '+' || b[r.i] == '-') {
			r.i++
		}
		if r.i >= len(b) || !digit(b[r.i]) {
			return r.fail()
		}
		for r.i < len(b) && digit(b[r.i]) {
			r.i++
		}
	}
	return true
}

func (r *reader) literal(word string) bool {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return r.fail()
	}
	r.i += len(word)
	return true
}

// push enters an object or array.
func (r *reader) push() bool {
	r.depth++
	if r.depth > maxNesting {
		return r.fail()
	}
	r.i++ // '{' or '['
	return true
}

// members iterates an object's members; r.i is at '{'. For each member it
// calls f with the quoted key, r.i at the value; f must consume the value.
func (r *reader) members(f func(key []byte)) bool {
	if !r.push() {
		return false
	}
	if r.peek() == '}' {
		r.i++
		r.depth--
		return true
	}
	for {
		if r.peek() != '"' {
			return r.fail()
		}
		key := r.str()
		if r.bad {
			return false
		}
		if r.peek() != ':' {
			return r.fail()
		}
		r.i++
		r.ws()
		f(key)
		if r.bad {
			return false
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return true
		default:
			return r.fail()
		}
	}
}

// elements iterates an array's elements; r.i is at '['. f is called with the
// index, r.i at the element; f must consume it.
func (r *reader) elements(f func(i int)) bool {
	if !r.push() {
		return false
	}
	if r.peek() == ']' {
		r.i++
		r.depth--
		return true
	}
	for n := 0; ; n++ {
		r.ws()
		f(n)
		if r.bad {
			return false
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return true
		default:
			return r.fail()
		}
	}
}

// skip validates one value at r.i (after whitespace) and keeps nothing.
func (r *reader) skip() {
	switch r.peek() {
	case '{':
		r.members(func([]byte) { r.skip() })
	case '[':
		r.elements(func(int) { r.skip() })
	case '"':
		r.str()
	case 't':
		r.literal("true")
	case 'f':
		r.literal("false")
	case 'n':
		r.literal("null")
	default:
		r.number()
	}
}

// stringValue consumes one value and keeps it when it is a string.
func (r *reader) stringValue() str {
	if r.peek() == '"' {
		return str{raw: r.str()}
	}
	r.skip()
	return str{}
}

// urlOf consumes one value and returns its "url" member when it is an object.
func (r *reader) urlOf() str {
	if r.peek() != '{' {
		r.skip()
		return str{}
	}
	var url str
	r.members(func(k []byte) {
		if string(keyName(k)) == "url" {
			url = r.stringValue()
		} else {
			r.skip()
		}
	})
	return url
}

func (r *reader) extra(d *doc) {
	d.extraMemo, d.tokenAccount = str{}, str{}
	r.extraKeys.reset()
	if r.peek() != '{' {
		r.skip()
		return
	}
	r.members(func(k []byte) {
		if r.census {
			r.extraKeys.add(r.b, k)
		}
		switch string(keyName(k)) {
		case "memo":
			d.extraMemo = r.stringValue()
		case "usdc_token_account":
			d.tokenAccount = r.stringValue()
		default:
			r.skip()
		}
	})
}

func (r *reader) accepts0(d *doc) {
	d.hasA0 = true
	r.members(func(k []byte) {
		if r.census {
			r.a0Keys.add(r.b, k)
		}
		switch string(keyName(k)) {
		case "payTo":
			d.payTo = r.stringValue()
		case "amount":
			d.amount = r.stringValue()
		case "maxAmountRequired":
			d.maxAmount = r.stringValue()
		case "description":
			d.description = r.stringValue()
		case "resource":
			d.resource, d.a0ResourceURL = str{}, str{}
			if r.peek() == '{' {
				d.a0ResourceURL = r.urlOf()
			} else {
				d.resource = r.stringValue()
			}
		case "extra":
			r.extra(d)
		default:
			r.skip()
		}
	})
}

func (r *reader) acceptsValue(d *doc) {
	// A key written twice keeps its last value: forget the earlier accepts.
	r.a0Keys.reset()
	r.extraKeys.reset()
	*d = doc{isObject: true, memo: d.memo, resourceURL: d.resourceURL, errStr: d.errStr, reason: d.reason, detail: d.detail}
	if r.peek() != '[' {
		r.skip()
		return
	}
	r.elements(func(i int) {
		if i == 0 && r.peek() == '{' {
			r.accepts0(d)
			return
		}
		r.skip()
	})
}

// readDoc reads one JSON document. ok is false when the bytes are not exactly
// one JSON value with nothing but whitespace around it (R17).
func readDoc(b []byte, census bool) (d doc, ok bool) {
	r := reader{b: b, census: census}
	if r.peek() == '{' {
		d.isObject = true
		r.members(func(k []byte) {
			switch string(keyName(k)) {
			case "accepts":
				r.acceptsValue(&d)
			case "memo":
				d.memo = r.stringValue()
			case "resource":
				d.resourceURL = r.urlOf()
			case "error":
				d.errStr = r.stringValue()
			case "reason":
				d.reason = r.stringValue()
			case "detail":
				d.detail = r.stringValue()
			default:
				r.skip()
			}
		})
	} else {
		r.skip()
	}
	if r.bad {
		return doc{}, false
	}
	if r.peek() != 0 || r.i < len(b) {
		return doc{}, false
	}
	if census && d.hasA0 {
		d.census = censusOf(b, &r.a0Keys, &r.extraKeys)
	}
	return d, true
}

// censusOf is the sorted (byte order), de-duplicated union of the decoded
// key names (R24).
func censusOf(in []byte, a0Keys, extraKeys *keyList) []string {
	// Every name is decoded into one buffer that becomes one string; the
	// names are slices of it (two allocations, whatever the count).
	var bufArr [1024]byte
	var endsArr [64]int
	buf, ends := bufArr[:0], endsArr[:0]
	for _, keys := range [2]*keyList{a0Keys, extraKeys} {
		for i := 0; i < keys.n; i++ {
			k := keys.at(in, i)
			if inner := k[1 : len(k)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				buf = append(buf, inner...)
			} else {
				buf = append(buf, decodeString(k)...) // R30: decoded, U+FFFD for broken bytes
			}
			ends = append(ends, len(buf))
		}
	}
	all := string(buf)
	names := make([]string, 0, len(ends))
	start := 0
	for _, end := range ends {
		names = append(names, all[start:end])
		start = end
	}
	slices.Sort(names)
	return slices.Compact(names)
}
