package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// scanKeys walks the document once, before it is decoded, to refuse what
// encoding/json would let through or report without a position: keys the
// schema does not know, repeated keys, and syntax errors. It returns the
// offset of every field's value by path (endpoints[0].every), so that the
// validator can name the line of a bad value.
func scanKeys(data []byte) (map[string]int, error) { return scanKeysOf(data, topSchema) }

// scanKeysOf is scanKeys for a document of schema sc.
func scanKeysOf(data []byte, sc *schema) (map[string]int, error) {
	s := &keyScanner{data: data, dec: json.NewDecoder(bytes.NewReader(data)), pos: map[string]int{}}
	s.dec.UseNumber()
	if err := s.value("", sc, 0); err != nil {
		return nil, err
	}
	// Nothing but white space may follow the document: a second document
	// and trailing junk alike are refused.
	at := s.start()
	if at < len(data) {
		line, col := lineCol(data, at)
		if _, err := s.dec.Token(); err == nil {
			return nil, &ConfigError{Line: line, Column: col, Reason: "more than one JSON document"}
		}
		return nil, &ConfigError{Line: line, Column: col, Reason: "trailing data after the document"}
	}
	return s.pos, nil
}

// schema says which keys an object at a path allows and what their values
// are; nil means a value with no keys to check below it.
type schema struct {
	keys map[string]*schema
	elem *schema // for arrays
}

var (
	leaf           = &schema{}
	endpointSchema = objectOf(endpointKeys)
	webhookSchema  = objectOf(webhookKeys)
	sourceSchema   = objectOf(sourceKeys)
	topSchema      = &schema{keys: map[string]*schema{
		"endpoints":                {elem: endpointSchema},
		"webhooks":                 {elem: webhookSchema},
		"retention":                leaf,
		"sources":                  {elem: sourceSchema},
		"retire_after":             leaf,
		"failures_before_alert":    leaf,
		"successes_before_resolve": leaf,
	}}
)

func objectOf(keys []string) *schema {
	s := &schema{keys: map[string]*schema{}}
	for _, k := range keys {
		s.keys[k] = leaf
	}
	return s
}

type keyScanner struct {
	data []byte
	dec  *json.Decoder
	pos  map[string]int
}

// start is the offset where the next token begins.
func (s *keyScanner) start() int {
	off := int(s.dec.InputOffset())
	for off < len(s.data) {
		switch s.data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (s *keyScanner) errAt(field string, reason string) error {
	line, col := lineCol(s.data, s.start())
	return &ConfigError{Field: field, Line: line, Column: col, Reason: reason}
}

func (s *keyScanner) token(field string) (json.Token, error) {
	t, err := s.dec.Token()
	if err != nil {
		if se, ok := err.(*json.SyntaxError); ok {
			line, col := lineCol(s.data, int(se.Offset))
			return nil, &ConfigError{Field: field, Line: line, Column: col, Reason: "JSON syntax error"}
		}
		return nil, s.errAt(field, "JSON syntax error or unexpected end")
	}
	return t, nil
}

// value reads one value at path, depth objects and arrays deep. The depth
// is checked before an object or array is entered, so a deeply nested file
// is refused after MaxDepth levels, its memory bounded by them (the paths
// and the decoder's stack grow with the depth).
func (s *keyScanner) value(path string, sc *schema, depth int) error {
	s.pos[path] = s.start()
	t, err := s.token(path)
	if err != nil {
		return err
	}
	if (t == json.Delim('{') || t == json.Delim('[')) && depth >= MaxDepth {
		line, col := lineCol(s.data, int(s.dec.InputOffset())-1)
		return &ConfigError{Field: path, Line: line, Column: col, Reason: fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for s.dec.More() {
			at := s.start()
			kt, err := s.token(path)
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			field := k
			if path != "" {
				field = path + "." + k
			}
			sub, known := sc.keys[k]
			if sc.keys != nil && !known {
				line, col := lineCol(s.data, at)
				return &ConfigError{Field: field, Line: line, Column: col, Reason: "unknown key (allowed: " + allowed(sc) + ")"}
			}
			if seen[k] {
				line, col := lineCol(s.data, at)
				return &ConfigError{Field: field, Line: line, Column: col, Reason: "repeated key"}
			}
			seen[k] = true
			if sub == nil {
				sub = leaf
			}
			if err := s.value(field, sub, depth+1); err != nil {
				return err
			}
		}
		_, err := s.token(path)
		return err
	case json.Delim('['):
		for i := 0; s.dec.More(); i++ {
			el := sc.elem
			if el == nil {
				el = leaf
			}
			if err := s.value(path+"["+strconv.Itoa(i)+"]", el, depth+1); err != nil {
				return err
			}
		}
		_, err := s.token(path)
		return err
	}
	return nil
}

func allowed(sc *schema) string {
	var ks []string
	for k := range sc.keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return fmt.Sprint(ks)
}
