// Package jsonenc appends JSON values to a byte slice exactly as
// encoding/json writes them, without reflection or allocation: the hot
// path of a scan writes one report per URL (docs/performance.md,
// "Same-host throughput"). FuzzAppendStringMatchesEncoder holds every
// output to encoding/json's own.
package jsonenc

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, byte for byte as encoding/json
// encodes it: json.Marshal when escapeHTML (<, > and & as \u003c, \u003e,
// \u0026), an Encoder with SetEscapeHTML(false) otherwise. Invalid UTF-8
// becomes \ufffd; U+2028 and U+2029 are escaped.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = AppendEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendEscape appends the escape of the ASCII byte c: the short forms of
// '"', '\\', backspace, form feed, newline, carriage return and tab, else
// \u00xx (the other control bytes, and <, > and & where HTML is escaped).
// RFC 8259 and RFC 8785 escape the same way.
func AppendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// AppendBoolPtr appends a *bool as encoding/json does: null, true or false.
func AppendBoolPtr(b []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(b, "null"...)
	case *v:
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// AppendIntPtr appends a *int: null or the number.
func AppendIntPtr(b []byte, v *int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

// AppendStringPtr appends a *string: null or the string (AppendString).
func AppendStringPtr(b []byte, v *string, escapeHTML bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *v, escapeHTML)
}
