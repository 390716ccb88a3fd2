package format

import (
	"strings"
	"unicode/utf8"
)

// Inert text. Every renderer writes strings it did not write itself: the
// endpoint URL is the caller's input (a scan's input file may come from a
// third-party discovery document), and render reads rule ids, fields,
// messages and codes back from a JSON file. Each format therefore escapes
// them for what its reader interprets (docs/ci.md, "Inert output"): no
// input can add a Markdown link, image or HTML to a job summary, end or start
// a workflow command, or break an XML or SARIF document.

// replacement stands for every character safeText removes.
const replacement = '\uFFFD'

// unsafeRune reports whether r is a character no format passes through:
// a C0 control, DEL, a C1 control (NEL among them), the Unicode line and
// paragraph separators, a bidirectional formatting character (which can
// make displayed text read otherwise than it is), the byte order mark, or
// U+FFFE and U+FFFF (not XML characters).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // bidi marks
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0xfeff: // byte order mark, zero width no-break space
		return true
	case r == 0xfffe, r == 0xffff: // noncharacters XML 1.0 forbids
		return true
	}
	return false
}

// safeText returns s as valid UTF-8 with every unsafe character replaced by
// U+FFFD, but those in keep (such as "\n" where the format escapes line
// breaks itself). An invalid byte is U+FFFD as well.
func safeText(s, keep string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) && !strings.ContainsRune(keep, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s { // an invalid byte ranges as utf8.RuneError
		if unsafeRune(r) && !strings.ContainsRune(keep, r) {
			r = replacement
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode renders s as one Markdown code span fit for a table cell: inside a
// code span nothing is interpreted (no link, autolink, image, HTML, entity,
// emphasis or heading), so s reads as it is. Line breaks become spaces and
// every other unsafe character U+FFFD; the fence is one backtick longer than
// the longest run of backticks in s, padded with a space when s starts or
// ends with a backtick (CommonMark strips exactly one such space); a pipe
// is written \| because a GFM table splits its cells before reading code
// spans (the table unescapes it). The empty string is an empty cell.
func mdCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
	s = safeText(s, "")
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	allSpace := strings.Trim(s, " ") == ""
	if !allSpace && (s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' && s[len(s)-1] == ' ') {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// sarifEscaper escapes a SARIF plain-text message: a plain-text message may
// embed links written [text](target) (SARIF 2.1.0 §3.11.6), so literal
// brackets, and the backslash that escapes them, are escaped with a
// backslash.
var sarifEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)

// sarifMessage returns s as a SARIF plain-text message: unsafe characters
// replaced (line breaks too: the message is one line) and brackets escaped.
func sarifMessage(s string) string {
	return sarifEscaper.Replace(safeText(s, ""))
}
