package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BodyDrainCap is how much of a body over the cap is read and discarded
// before the 413 is answered: a client that sent it whole then reads the
// answer instead of a connection reset. A body longer than this is
// answered the same 413, and the connection is closed as the answer goes.
const BodyDrainCap = 32 << 20

// readBody reads a request body under the published cap and decodes it
// strictly into v, a pointer to a struct whose fields carry json tags. ok is
// false when an answer has been written:
//   - 415 content_type_unsupported unless the body is sent as
//     Content-Type: application/json (a cross-site form cannot send that
//     without a preflight, so it cannot spend a visitor's free allowance);
//   - 413 request_body_over_cap for a body over 262,144 bytes, read to its
//     end (up to BodyDrainCap) so the client gets the answer;
//   - 400 request_malformed unless the body is one JSON object in valid
//     UTF-8 whose member names are exactly v's field names, each at most
//     once. encoding/json alone would match "URL" to url, keep the last of
//     two "url" members and replace invalid UTF-8: a proxy in front could
//     then read another URL out of the same bytes than we do.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, route string, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.count(route, "unsupported_media_type")
		writeJSON(w, http.StatusUnsupportedMediaType, problem{errContentType,
			"The request body must be sent with Content-Type: application/json."})
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(RequestBodyCap)+1))
	if err != nil {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, "The request body could not be read."})
		return false
	}
	if len(body) > RequestBodyCap {
		if n, _ := io.CopyN(io.Discard, r.Body, BodyDrainCap); n == BodyDrainCap {
			w.Header().Set("Connection", "close")
		}
		s.count(route, "too_large")
		writeJSON(w, http.StatusRequestEntityTooLarge, problem{errBodyOverCap,
			"The request body is over the cap of 262,144 bytes."})
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed,
			"The request body must be one JSON object with only the documented fields, each once, named exactly."})
		return false
	}
	return true
}

var errNotStrict = errors.New("request body is not strict JSON")

// decodeStrict decodes body into v (a pointer to a struct) after checking,
// token by token, that it is one JSON object in valid UTF-8 whose member
// names are exactly the json names of v's fields, none repeated, and that
// no object nested in it repeats a name either.
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) || !pairedSurrogates(body) {
		return errNotStrict
	}
	if err := checkStrict(body, fieldNames(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errNotStrict
	}
	return nil
}

// pairedSurrogates reports whether every \u escape of a UTF-16 surrogate in
// body's strings is half of a pair (a high one followed at once by an
// escaped low one). A lone half is no character (RFC 8259 §8.2):
// encoding/json reads it as U+FFFD, a JavaScript reader keeps it, so two
// readers would see different strings. body is JSON text; outside strings
// there is no backslash, so the scan only follows backslash escapes.
func pairedSurrogates(body []byte) bool {
	hex4 := func(i int) (rune, bool) { // the four hex digits after "\u" at i
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		if i+1 < len(body) && body[i+1] != 'u' {
			i++ // a two-byte escape such as \\ or \"
			continue
		}
		r, ok := hex4(i)
		if !ok {
			continue // not JSON: the decoder refuses it
		}
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return false
		case 0xD800 <= r && r <= 0xDBFF:
			lo, ok := hex4(i + 6)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 11
		default:
			i += 5
		}
	}
	return true
}

// checkStrict walks the tokens of body: one top-level object whose names
// are in allowed, and no repeated name in any object.
func checkStrict(body []byte, allowed map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return errNotStrict
	}
	if err := checkObject(dec, allowed, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errNotStrict
	}
	return nil
}

// maxDepth bounds the nesting checkStrict follows; our bodies are flat.
const maxDepth = 32

// checkObject reads the members of an object whose '{' was read, to its '}'.
// allowed is nil for a nested object (any names, none repeated).
func checkObject(dec *json.Decoder, allowed map[string]bool, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errNotStrict
		}
		name, ok := tok.(string)
		if !ok || seen[name] || (allowed != nil && !allowed[name]) {
			return errNotStrict
		}
		seen[name] = true
		if err := checkValue(dec, depth); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return errNotStrict
	}
	return nil
}

func checkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return errNotStrict
	}
	switch tok {
	case json.Delim('{'):
		if depth >= maxDepth {
			return errNotStrict
		}
		return checkObject(dec, nil, depth+1)
	case json.Delim('['):
		if depth >= maxDepth {
			return errNotStrict
		}
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
			return errNotStrict
		}
	}
	return nil
}

// fieldNames are the json names of the fields of the struct v points to.
func fieldNames(v any) map[string]bool {
	t := reflect.TypeOf(v).Elem()
	names := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}
