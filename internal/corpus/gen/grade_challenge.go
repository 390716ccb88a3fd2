package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// This file reads one capture and one x402 challenge the way the criteria's
// field_rule words it; grade_check.go, grade_memo.go and grade_probe.go decide
// from what it reads.

// bodyCap: "a response-body cap of 65,536 bytes" (target_safety); R7: 65,536 is
// within the cap, 65,537 is over.
const bodyCap = 65536

// body returns the capture's body bytes (absent means empty).
func (c Capture) body() []byte {
	switch {
	case c.BodyText != nil:
		return []byte(*c.BodyText)
	case c.BodyBase64 != nil:
		b, _ := base64.StdEncoding.DecodeString(*c.BodyBase64) // validated in validate()
		return b
	}
	return nil
}

// responded: a status line arrived. R27: a fetch that failed or timed out has
// no status, whatever the capture recorded before it failed.
func (c Capture) responded() bool {
	return (c.Outcome == "ok" || c.Outcome == "over_cap") && c.Status != nil
}

// overCap: "the response body exceeded the 65,536-byte cap". R7: a grader
// treats any body longer than the cap as over it, whatever the capture claims.
func (c Capture) overCap() bool {
	return c.responded() && (c.Outcome == "over_cap" || len(c.body()) > bodyCap)
}

// status is the response status, or nil when no status line arrived (R19, R27).
func (c Capture) status() *int {
	if !c.responded() {
		return nil
	}
	s := *c.Status
	return &s
}

// captureRead: a response arrived whose whole body is within the cap.
func captureRead(c Capture) bool { return c.responded() && !c.overCap() }

// parseJSON: R17 — the bytes parse as one JSON value (any type) with nothing
// but whitespace after it; an empty body does not parse.
func parseJSON(b []byte) (any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// decodeHeader: R4 — the PAYMENT-REQUIRED value is standard-alphabet base64
// (RFC 4648 §4), padding optional, surrounding space/tab/CR/LF ignored; any
// other character (URL-safe alphabet, inner whitespace) is undecodable. State
// rule (3) fires when the header "cannot be base64/JSON decoded": base64 of
// any one JSON value is decoded (R4 as corrected in issue 11). It returns the
// decoded value and whether it decoded; only an object carries fields.
func decodeHeader(v string) (any, bool) {
	s := strings.Trim(v, " \t\r\n")
	pad := 0
	for pad < 2 && len(s)-pad > 0 && s[len(s)-pad-1] == '=' {
		pad++
	}
	if pad > 0 && len(s)%4 != 0 {
		return nil, false // padding, when present, completes the last quantum
	}
	core := s[:len(s)-pad]
	if len(core)%4 == 1 {
		return nil, false
	}
	for i := 0; i < len(core); i++ {
		c := core[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	raw, err := base64.RawStdEncoding.DecodeString(core)
	if err != nil {
		return nil, false
	}
	return parseJSON(raw)
}

// challenge is what one 402 within the cap carries, per leg.
type challenge struct {
	bodyParseable bool
	body          map[string]any // the body when it is a JSON object
	bodyA0        map[string]any // body.accepts[0] when usable (R5)

	headerPresent   bool
	headerDecodable bool
	header          map[string]any // the decoded PAYMENT-REQUIRED value when it is an object
	headerA0        map[string]any // header accepts[0] when usable (R5)
}

// readChallenge reads both legs of one 402 capture within the cap.
func readChallenge(c Capture) challenge {
	var ch challenge
	if v, ok := parseJSON(c.body()); ok {
		ch.bodyParseable = true
		ch.body, _ = v.(map[string]any)
		ch.bodyA0 = firstAccept(ch.body)
	}
	// R18: the capture holds the first field value only.
	if hv, ok := c.Headers["payment-required"]; ok {
		ch.headerPresent = true
		var v any
		v, ch.headerDecodable = decodeHeader(hv)
		ch.header, _ = v.(map[string]any) // R4: a decoded non-object carries no field
		ch.headerA0 = firstAccept(ch.header)
	}
	return ch
}

// firstAccept: "reads accepts[0]". R5: accepts missing, not an array, empty,
// or with a non-object first element leaves every accepts[0] field absent.
func firstAccept(root map[string]any) map[string]any {
	arr, ok := root["accepts"].([]any)
	if !ok || len(arr) == 0 {
		return nil
	}
	m, _ := arr[0].(map[string]any)
	return m
}

// present: "A field is present when it is a non-empty string" (R3).
func present(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && s != ""
}

// presentAmount: "amounts: a string of digits" (R3: ^[0-9]+$; a number-typed
// amount is absent).
func presentAmount(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	return s, true
}

func extra(a0 map[string]any) map[string]any {
	m, _ := a0["extra"].(map[string]any)
	return m
}

// bodyMemo: "memo = extra.memo (falling back to the body's top-level memo
// field)". R15: an absent or empty extra.memo falls back. R5 (corrected in
// issue 11): the fallback reads the body, not accepts[0], so it holds whether
// or not accepts[0] is usable: {accepts: [], memo: "…"} carries a body memo.
func (ch challenge) bodyMemo() (string, bool) {
	if m, ok := present(extra(ch.bodyA0)["memo"]); ok {
		return m, true
	}
	return present(ch.body["memo"])
}

// headerMemo: header leg "memo = extra.memo" (no fallback is published).
func (ch challenge) headerMemo() (string, bool) {
	if !ch.headerDecodable {
		return "", false // R11: an absent/undecodable header carries nothing
	}
	return present(extra(ch.headerA0)["memo"])
}

// bodyResource: R1 (corrected in issue 11) — the body leg reads "resource =
// resource", and "a field is present when it is a non-empty string": only a
// string accepts[0].resource is a resource; an object there is absent.
func (ch challenge) bodyResource() (string, bool) {
	return present(ch.bodyA0["resource"])
}

// headerResources: R1 (corrected in issue 11) — the header leg reads
// "resource.url = resource.url" of accepts[0], and x402 v2 puts resource at
// the top level of the decoded header; both places are read. It returns every
// present one (top level first): a non-empty string resource.url at the top
// level, and a non-empty string accepts[0].resource.url. A string
// accepts[0].resource has no url and is not read.
func (ch challenge) headerResources() []string {
	if !ch.headerDecodable {
		return nil
	}
	var out []string
	for _, holder := range []map[string]any{ch.header, ch.headerA0} {
		if r, ok := holder["resource"].(map[string]any); ok {
			if u, ok := present(r["url"]); ok {
				out = append(out, u)
			}
		}
	}
	return out
}

// equality: the A1 semantics of a header-to-body equality — true when both
// legs carry the field and they are equal; false when both carry it and
// differ, or when exactly one leg carries it; null when neither does.
func equality(body string, bodyOK bool, header string, headerOK bool) *bool {
	switch {
	case !bodyOK && !headerOK:
		return nil
	case bodyOK && headerOK:
		return ptr(body == header)
	default:
		return ptr(false)
	}
}

func ptr[T any](v T) *T { return &v }
