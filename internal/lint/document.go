package lint

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

func entryPrefix(i int) string { return "accepts[" + strconv.Itoa(i) + "]." }

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// document grades one leg: its accepts array, its resource (v2: the
// document's; v1: each entry's), its extensions (v2) and every entry.
func (g *grader) document(v view) {
	root := v.doc.Root
	if len(v.doc.Accepts) == 0 {
		g.add(ruleAcceptsMissing, v.leg, nil, "accepts")
	}
	if v.version == 2 {
		res, _ := root["resource"].(map[string]any)
		if u, ok := res["url"].(string); ok && u != "" {
			g.resource(v.leg, nil, "resource.url", u)
		} else {
			g.add(ruleResourceMissing, v.leg, nil, "resource.url")
		}
		if d, ok := res["description"].(string); ok && utf8.RuneCountInString(d) > 500 {
			g.add(ruleDescriptionLong, v.leg, nil, "resource.description")
		}
		g.extensions(v)
	}
	for i := range v.doc.Accepts {
		g.entry(v, i)
	}
}

// resource grades a resource URL against the called URL.
func (g *grader) resource(leg Leg, entry *int, field, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		g.add(ruleResourceURLInvalid, leg, entry, field)
		return
	}
	c := g.called
	if c == nil {
		return
	}
	if !sameOrigin(u, c) {
		g.add(ruleResourceMismatch, leg, entry, field)
		return
	}
	up, cp := pathOf(u), pathOf(c)
	switch {
	case up == cp && normalEncoding(u.RawQuery) == normalEncoding(c.RawQuery):
	case strings.TrimRight(up, "/") == strings.TrimRight(cp, "/"):
		g.add(ruleResourceQuery, leg, entry, field)
	default:
		g.add(ruleResourceMismatch, leg, entry, field)
	}
}

// pathOf is the URL's path as escaped on the wire, "/" when empty, in the
// normal form of normalEncoding.
func pathOf(u *url.URL) string {
	p := normalEncoding(u.EscapedPath())
	if p == "" {
		return "/"
	}
	return p
}

// normalEncoding applies RFC 3986 §6.2.2.1 and §6.2.2.2 to an escaped path
// or query: a percent-encoding's hex digits are upper case, and an encoded
// unreserved character (ALPHA, DIGIT, "-", ".", "_", "~") is that character.
// Every other encoding stays, so %2F is still not "/".
func normalEncoding(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// sameOrigin compares scheme, host (case-insensitive) and port, a missing
// port being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// authority is the called URL's host, with its port when that is not the
// scheme's default (sign-in-with-x domain).
func authority(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	p := u.Port()
	if p == "" || (p == "443" && strings.EqualFold(u.Scheme, "https")) || (p == "80" && strings.EqualFold(u.Scheme, "http")) {
		return h
	}
	return h + ":" + p
}
