package suppress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is a configuration or baseline file refused: the field path
// (ignore[2].until), the 1-based line and column where it is (0 when not
// known) and a static reason. It never quotes the file's values.
type Error struct {
	Field        string
	Line, Column int
	Reason       string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// kind is the JSON type a value of a shape must have.
type kind int

const (
	kObject kind = iota
	kArray
	kString
	kIndex // a non-negative integer or null (a finding's accepts entry)
)

// shape says what a value at one place of a file must be: its type, and
// for an object its allowed keys, for an array its elements' shape.
type shape struct {
	kind kind
	keys map[string]*shape
	elem *shape
}

var (
	str   = &shape{kind: kString}
	index = &shape{kind: kIndex}
)

func object(keys map[string]*shape) *shape { return &shape{kind: kObject, keys: keys} }
func array(elem *shape) *shape             { return &shape{kind: kArray, elem: elem} }

// walker reads one document token by token against its shape: unknown and
// repeated keys, wrong types, nesting past maxDepth and anything after the
// document are refused where they are. It records where each value starts
// (for the validator's errors).
type walker struct {
	data []byte
	dec  *json.Decoder
	pos  map[string]int
}

// maxDepth bounds nesting while walking; both files need 3 levels.
const maxDepth = 8

func walk(data []byte, top *shape) (map[string]int, error) {
	w := &walker{data: data, dec: json.NewDecoder(bytes.NewReader(data)), pos: map[string]int{}}
	w.dec.UseNumber()
	if err := w.value("", top, 0); err != nil {
		return nil, err
	}
	if at := w.start(); at < len(data) {
		line, col := lineCol(data, at)
		return nil, &Error{Line: line, Column: col, Reason: "trailing data after the document"}
	}
	return w.pos, nil
}

// start is the offset where the next token begins.
func (w *walker) start() int {
	off := int(w.dec.InputOffset())
	for off < len(w.data) && strings.IndexByte(" \t\r\n:,", w.data[off]) >= 0 {
		off++
	}
	return off
}

func (w *walker) fail(field string, at int, reason string) error {
	line, col := lineCol(w.data, at)
	return &Error{Field: field, Line: line, Column: col, Reason: reason}
}

func (w *walker) token(field string) (json.Token, error) {
	at := w.start()
	t, err := w.dec.Token()
	if err != nil {
		if se, ok := err.(*json.SyntaxError); ok {
			at = int(se.Offset)
		}
		return nil, w.fail(field, at, "JSON syntax error or unexpected end")
	}
	return t, nil
}

func (w *walker) value(path string, sh *shape, depth int) error {
	at := w.start()
	w.pos[path] = at
	t, err := w.token(path)
	if err != nil {
		return err
	}
	if (t == json.Delim('{') || t == json.Delim('[')) && depth >= maxDepth {
		return w.fail(path, at, fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	want := map[kind]string{kObject: "an object", kArray: "an array", kString: "a string", kIndex: "a non-negative integer or null"}[sh.kind]
	switch v := t.(type) {
	case json.Delim:
		if (v == '{') != (sh.kind == kObject) || (v == '[') != (sh.kind == kArray) {
			return w.fail(path, at, "wrong type (want "+want+")")
		}
	case string:
		if sh.kind != kString {
			return w.fail(path, at, "wrong type (want "+want+")")
		}
		return nil
	case json.Number:
		if n, err := strconv.Atoi(v.String()); sh.kind != kIndex || err != nil || n < 0 {
			return w.fail(path, at, "wrong type (want "+want+")")
		}
		return nil
	case nil:
		if sh.kind != kIndex {
			return w.fail(path, at, "wrong type (want "+want+")")
		}
		return nil
	default:
		return w.fail(path, at, "wrong type (want "+want+")")
	}
	if sh.kind == kArray {
		for i := 0; w.dec.More(); i++ {
			if err := w.value(path+"["+strconv.Itoa(i)+"]", sh.elem, depth+1); err != nil {
				return err
			}
		}
		_, err := w.token(path)
		return err
	}
	seen := map[string]bool{}
	for w.dec.More() {
		kat := w.start()
		kt, err := w.token(path)
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		sub, known := sh.keys[k]
		if !known {
			return w.fail(path, kat, "unknown key (allowed: "+allowedKeys(sh)+")")
		}
		field := k
		if path != "" {
			field = path + "." + k
		}
		if seen[k] {
			return w.fail(field, kat, "repeated key")
		}
		seen[k] = true
		if err := w.value(field, sub, depth+1); err != nil {
			return err
		}
	}
	_, err = w.token(path)
	return err
}

func allowedKeys(sh *shape) string {
	ks := make([]string, 0, len(sh.keys))
	for k := range sh.keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
