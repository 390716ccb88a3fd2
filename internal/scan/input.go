package scan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/exchangerebel/payability/internal/target"
)

// Format is the shape of a scan's input, told apart by its first non-space
// byte.
type Format string

// The three input formats.
const (
	FormatLines     Format = "lines"     // one URL per line; blank lines and '#' comments ignored
	FormatArray     Format = "array"     // a JSON array of URL strings ('[')
	FormatDiscovery Format = "discovery" // an x402 Bazaar-style discovery document ('{'): resources[].resource
)

// Input rules: an entry that cannot be taken as a URL at all. They are
// reported like URL-policy refusals (a record naming the rule), never abort
// the scan.
const (
	// RuleNotAString: a JSON array entry that is not a string, or a discovery
	// resource whose "resource" is missing or not a string.
	RuleNotAString = "entry_not_a_string"
)

// maxLine is the longest input line kept. A longer line is far past the URL
// policy's 2,048 bytes; it is refused as url_too_long without being echoed.
const maxLine = 64 << 10

// Item is one entry of the input: a URL and the line it stands on (1-based).
// Rule is set when the entry was refused before the URL policy could look at
// it (RuleNotAString, or url_too_long for a line over 64 KiB).
type Item struct {
	Line int
	URL  string
	Rule string
}

// Input streams the entries of a scan's input, one at a time: memory stays
// flat whatever the number of entries.
type Input struct {
	br     *bufio.Reader
	format Format
	line   int   // lines mode: the number of the last line read
	err    error // sticky: the error (or io.EOF) that ended the input
	rdErr  error // lines mode: a read error to return after the data that came with it

	// JSON formats.
	dec   *json.Decoder
	lines *lineCounter
	state jsonState
}

type jsonState int

const (
	jsonStart      jsonState = iota // before the top-level value
	jsonInArray                     // inside the URL array (array, or a discovery document's resources)
	jsonInDocument                  // inside the discovery document's top-level object
	jsonDone                        // past the top-level value
)

// InputError is a malformed input (JSON that does not parse, or a discovery
// document without a resources array): the scan stops reading there. The
// message names the line, never the input's content.
type InputError struct {
	Line   int
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("scan: input line %d: %s", e.Line, e.Reason)
}

// NewInput reads entries from r. The format is detected on the first call to
// Next (or Format) from the first non-space byte.
func NewInput(r io.Reader) *Input {
	return &Input{br: bufio.NewReaderSize(r, maxLine)}
}

// Format detects and returns the input's format; an empty input is lines.
func (in *Input) Format() (Format, error) {
	if in.format == "" && in.err == nil {
		in.detect()
	}
	return in.format, in.err
}

// detect skips a byte-order mark and leading white space, counting lines,
// and looks at the first byte that remains.
func (in *Input) detect() {
	if b, err := in.br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = in.br.Discard(3)
	}
	skipped := 0
	for {
		c, err := in.br.ReadByte()
		if err != nil {
			if err != io.EOF {
				in.err = err
			}
			in.format = FormatLines
			in.line = skipped
			return
		}
		if c == '\n' {
			skipped++
		}
		if isSpace(c) {
			continue
		}
		_ = in.br.UnreadByte()
		switch c {
		case '[':
			in.format = FormatArray
		case '{':
			in.format = FormatDiscovery
		default:
			in.format = FormatLines
			in.line = skipped
			return
		}
		in.lines = &lineCounter{r: in.br, before: skipped}
		in.dec = json.NewDecoder(in.lines)
		return
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Next returns the next entry, io.EOF after the last one, or an error that
// ends the input (an *InputError or a read error).
func (in *Input) Next() (Item, error) {
	if in.format == "" && in.err == nil {
		in.detect()
	}
	if in.err != nil {
		return Item{}, in.err
	}
	var it Item
	var err error
	if in.format == FormatLines {
		it, err = in.nextLine()
	} else {
		it, err = in.nextJSON()
	}
	if err != nil {
		in.err = err
	}
	return it, err
}

func (in *Input) nextLine() (Item, error) {
	for {
		if in.rdErr != nil {
			return Item{}, in.rdErr
		}
		raw, err := in.br.ReadSlice('\n')
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			// Drop the rest of an over-long line without keeping it.
			tooLong = true
			_, err = in.br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			in.rdErr = err
		}
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				return Item{}, io.EOF
			}
			continue
		}
		in.line++
		if tooLong {
			return Item{Line: in.line, Rule: target.RuleTooLong}, nil
		}
		s := bytes.TrimSpace(raw)
		if len(s) == 0 || s[0] == '#' {
			continue
		}
		return Item{Line: in.line, URL: string(s)}, nil
	}
}

// nextJSON walks the JSON input token by token, so that only the current
// token is ever held.
func (in *Input) nextJSON() (Item, error) {
	for {
		switch in.state {
		case jsonStart:
			tok, err := in.token()
			if err != nil {
				return Item{}, err
			}
			if in.format == FormatArray {
				_ = tok // '[' by detection
				in.state = jsonInArray
			} else {
				in.state = jsonInDocument
			}
		case jsonInDocument:
			if !in.dec.More() {
				// Closing '}' of a document that named no resources array.
				if _, err := in.token(); err != nil {
					return Item{}, err
				}
				return Item{}, &InputError{Line: in.lineNow(), Reason: "the discovery document has no resources array"}
			}
			key, err := in.token()
			if err != nil {
				return Item{}, err
			}
			if k, _ := key.(string); k == "resources" || k == "items" {
				tok, err := in.token()
				if err != nil {
					return Item{}, err
				}
				if d, ok := tok.(json.Delim); ok && d == '[' {
					in.state = jsonInArray
					continue
				}
				if err := in.skipRest(tok); err != nil {
					return Item{}, err
				}
				continue
			}
			if err := in.skipValue(); err != nil {
				return Item{}, err
			}
		case jsonInArray:
			if !in.dec.More() {
				if _, err := in.token(); err != nil { // ']'
					return Item{}, err
				}
				in.state = jsonDone
				return Item{}, in.finish()
			}
			return in.nextEntry()
		case jsonDone:
			return Item{}, io.EOF
		}
	}
}

// nextEntry reads one element of the URL array.
func (in *Input) nextEntry() (Item, error) {
	tok, err := in.token()
	if err != nil {
		return Item{}, err
	}
	line := in.lineNow()
	if s, ok := tok.(string); ok && in.format == FormatArray {
		return Item{Line: line, URL: s}, nil
	}
	d, ok := tok.(json.Delim)
	if !ok || d != '{' || in.format != FormatDiscovery {
		if err := in.skipRest(tok); err != nil {
			return Item{}, err
		}
		return Item{Line: line, Rule: RuleNotAString}, nil
	}
	// A discovery resource: the first top-level "resource" string is the URL.
	it := Item{Line: line, Rule: RuleNotAString}
	found := false
	for in.dec.More() {
		key, err := in.token()
		if err != nil {
			return Item{}, err
		}
		if k, _ := key.(string); k == "resource" && !found {
			found = true
			v, err := in.token()
			if err != nil {
				return Item{}, err
			}
			if s, ok := v.(string); ok {
				it = Item{Line: in.lineNow(), URL: s}
				continue
			}
			if err := in.skipRest(v); err != nil {
				return Item{}, err
			}
			continue
		}
		if err := in.skipValue(); err != nil {
			return Item{}, err
		}
	}
	if _, err := in.token(); err != nil { // '}'
		return Item{}, err
	}
	return it, nil
}

// finish checks that nothing but the end of the document follows the array.
func (in *Input) finish() error {
	if in.format == FormatDiscovery {
		// Skip the document's remaining members and its closing '}'.
		for in.dec.More() {
			if _, err := in.token(); err != nil {
				return err
			}
			if err := in.skipValue(); err != nil {
				return err
			}
		}
		if _, err := in.token(); err != nil {
			return err
		}
	}
	if _, err := in.dec.Token(); err != io.EOF {
		return &InputError{Line: in.lineNow(), Reason: "unexpected data after the JSON value"}
	}
	return io.EOF
}

// token reads one JSON token; a syntax error or a truncated document is an
// *InputError naming the line.
func (in *Input) token() (json.Token, error) {
	tok, err := in.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
			if in.lines.err != nil {
				return nil, in.lines.err
			}
			return nil, &InputError{Line: in.lines.lineAt(in.lines.pos), Reason: "the JSON input ends early"}
		case errors.As(err, &se):
			// The decoder's offsets differ by path; the later one is the
			// offending byte.
			return nil, &InputError{Line: in.lines.lineAt(max(se.Offset, in.dec.InputOffset())), Reason: "the JSON input does not parse"}
		case in.lines.err != nil:
			return nil, in.lines.err
		}
		return nil, &InputError{Line: in.lineNow(), Reason: "the JSON input does not parse"}
	}
	in.lineNow() // keep the newline record short
	return tok, nil
}

// skipValue skips the next complete value.
func (in *Input) skipValue() error {
	tok, err := in.token()
	if err != nil {
		return err
	}
	return in.skipRest(tok)
}

// skipRest skips the rest of a value whose first token was tok.
func (in *Input) skipRest(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := in.token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

func (in *Input) lineNow() int { return in.lines.lineAt(in.dec.InputOffset()) }

// lineCounter passes bytes through to the JSON decoder and remembers where
// the newlines were, so a decoder offset can be turned into a line number.
// Offsets are asked for in increasing order, so only the newlines the decoder
// has read ahead are held.
type lineCounter struct {
	r       io.Reader
	pos     int64   // bytes passed through
	pending []int64 // offsets of newlines not yet passed by lineAt
	before  int     // newlines before the decoder's first byte, plus those passed
	err     error   // a read error of the underlying reader
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			c.pending = append(c.pending, c.pos+int64(i))
		}
	}
	c.pos += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// lineAt returns the 1-based line of the byte at offset off.
func (c *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(c.pending) && c.pending[i] < off {
		i++
	}
	if i > 0 {
		c.before += i
		c.pending = append(c.pending[:0], c.pending[i:]...)
	}
	return c.before + 1
}

// Count returns the number of entries (records a scan would write) in r.
// It reads r to the end; the CLI runs it on a second handle of an input file
// so the progress bar can show a total.
func Count(r io.Reader) (int, error) {
	in := NewInput(r)
	n := 0
	for {
		_, err := in.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}
