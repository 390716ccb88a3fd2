package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file builds synthetic inputs: realistic fleet-shaped challenges
// (x402 v1 body + v2 PAYMENT-REQUIRED header) and captures. Nothing here
// decides an expected output.

// O is a JSON object that keeps its key order, so bodies read like what
// sellers send.
type O struct {
	keys []string
	vals map[string]any
}

func obj(kv ...any) *O {
	o := &O{vals: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *O) set(k string, v any) *O {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *O) del(k string) *O {
	if _, ok := o.vals[k]; !ok {
		return o
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return o
}

// MarshalJSON writes the keys in insertion order.
func (o *O) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(enc(k))
		buf.WriteByte(':')
		buf.Write(enc(o.vals[k]))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// at walks a dotted path ("accepts.0.extra") to an object.
func at(root *O, path string) *O {
	var cur any = root
	if path == "" {
		return root
	}
	for _, seg := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case *O:
			cur = c.vals[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				panic("bad path " + path)
			}
			cur = c[i]
		default:
			panic("bad path " + path)
		}
	}
	o, ok := cur.(*O)
	if !ok {
		panic("path is not an object: " + path)
	}
	return o
}

// put sets the last key of a dotted path; drop deletes it.
func put(root *O, path string, v any) *O {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return root.set(path, v)
	}
	at(root, path[:i]).set(path[i+1:], v)
	return root
}

func drop(root *O, path string) *O {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return root.del(path)
	}
	at(root, path[:i]).del(path[i+1:])
	return root
}

// enc is compact JSON without HTML escaping.
func enc(v any) []byte {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// raw is JSON text inserted as is (for escapes the encoder would not write).
type raw string

func (r raw) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// Realistic values. The wallets and token accounts are made-up base58 strings;
// the asset is the USDC mint on Solana.
const (
	usdcMint       = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solanaMainnet  = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	payTo          = "7Hn4sVfWqZ3pKx9RtLmB2cYdJgE5uA8NwQk6oDzFhT1P"
	tokenAccount   = "3kTq8ZrYvNw5HcXpB7mD2fGsLuJ9aE4hQn6RbVtWyK1C"
	otherPayTo     = "5DfR2kWq9NzXv7bTcY3mHs8LpJ4gUaE6nQ1wKtBhVy9Z"
	otherTokenAcct = "Gq2vH8sKx5mNcT9RbW3zYpL7dF4jUe6AaQk1nVtBwXhS"
	evmPayTo       = "0x4b7C9e21a3F0d85E6c1B2a97D4e03f8A5c6B1d27"
	evmUSDCBase    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	evmUSDCSepolia = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"

	seller      = "https://seller.example/api/paid"
	weatherURL  = "https://api.forecast.example/v1/weather?city=oslo"
	stagingURL  = "http://staging.seller.example:8080/paid"
	description = "Paid weather forecast for one city (JSON)"

	memoA = "pv-1b7e4c9a2f6d8e03c5a7"
	memoB = "pv-8d2f6a1c9e4b7035d2e8"
	memoC = "pv-5c09e3b7a4d1f6828b3e"
)

// fleetAccept is the body leg's accepts[0] as the fleet serves it.
func fleetAccept(url, memo string) *O {
	return obj(
		"scheme", "exact",
		"network", "solana",
		"amount", "10000",
		"maxAmountRequired", "10000",
		"asset", usdcMint,
		"payTo", payTo,
		"resource", url,
		"description", description,
		"mimeType", "application/json",
		"maxTimeoutSeconds", 60,
		"extra", obj("usdc_token_account", tokenAccount, "memo", memo),
	)
}

// fleetBody is the x402 v1 challenge body the fleet serves.
func fleetBody(url, memo string) *O {
	return obj("x402Version", 1, "accepts", []any{fleetAccept(url, memo)}, "memo", memo)
}

// fleetHeader is the x402 v2 object the fleet base64-encodes into
// PAYMENT-REQUIRED.
func fleetHeader(url, memo string) *O {
	return obj(
		"x402Version", 2,
		"resource", obj("url", url, "description", description, "mimeType", "application/json"),
		"accepts", []any{obj(
			"scheme", "exact",
			"network", solanaMainnet,
			"amount", "10000",
			"asset", usdcMint,
			"payTo", payTo,
			"maxTimeoutSeconds", 60,
			"extra", obj("memo", memo, "usdc_token_account", tokenAccount),
		)},
	)
}

// b64 is the standard padded base64 of a JSON value (or of raw bytes/string).
func b64(v any) string {
	switch x := v.(type) {
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case string:
		return base64.StdEncoding.EncodeToString([]byte(x))
	}
	return base64.StdEncoding.EncodeToString(enc(v))
}

// bodyBytes turns a body value into bytes: nil is empty, strings and byte
// slices are taken as is, anything else is JSON.
func bodyBytes(body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	}
	return enc(body)
}

// resp is a capture of a response that arrived. header: nil (no
// PAYMENT-REQUIRED), a string (the field value as is), or a JSON value
// (standard padded base64 of it). More headers may follow as name, value pairs.
func resp(status int, header any, body any, more ...string) Capture {
	c := Capture{Outcome: "ok", Status: ptr(status), Headers: map[string]string{}}
	switch h := header.(type) {
	case nil:
	case string:
		c.Headers["payment-required"] = h
	default:
		c.Headers["payment-required"] = b64(h)
	}
	for i := 0; i < len(more); i += 2 {
		c.Headers[more[i]] = more[i+1]
	}
	b := bodyBytes(body)
	if len(b) > 0 && c.Headers["content-type"] == "" {
		if json.Valid(b) {
			c.Headers["content-type"] = "application/json"
		} else if bytes.HasPrefix(bytes.TrimSpace(b), []byte("<")) {
			c.Headers["content-type"] = "text/html; charset=utf-8"
		}
	}
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	switch {
	case len(b) == 0:
	case utf8.Valid(b):
		c.BodyText = ptr(string(b))
	default:
		c.BodyBase64 = ptr(base64.StdEncoding.EncodeToString(b))
	}
	return c
}

// fleet402 is the fleet's full challenge: v1 body + v2 header.
func fleet402(url, memo string) Capture {
	return resp(402, fleetHeader(url, memo), fleetBody(url, memo))
}

func failed() Capture  { return Capture{Outcome: "failed"} }
func timeout() Capture { return Capture{Outcome: "timeout"} }
func notSent() Capture { return Capture{Outcome: "not_sent"} }

// overCap marks a response whose body ran past the cap (the fetcher keeps at
// most cap + 1 bytes; these captures keep none).
func overCap(c Capture) Capture {
	c.Outcome = "over_cap"
	c.BodyText, c.BodyBase64 = nil, nil
	return c
}

// padTo pads a JSON body with trailing whitespace to exactly n bytes.
func padTo(b []byte, n int) string {
	if len(b) > n {
		panic(fmt.Sprintf("body already %d bytes, over %d", len(b), n))
	}
	if len(b) == n {
		return string(b)
	}
	return string(b) + "\n" + strings.Repeat(" ", n-len(b)-1)
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// urlSafe rewrites standard base64 into the URL-safe alphabet; it panics if
// the text has no + or / (the case would not test anything).
func urlSafe(s string) string {
	if !strings.ContainsAny(s, "+/") {
		panic("base64 text has no + or /: choose other content")
	}
	return strings.NewReplacer("+", "-", "/", "_").Replace(s)
}

// urlSafeHeader is a fleet header (for url, memo) in the URL-safe alphabet.
// Its description ends in five "?" (0x3F): any five bytes hold one whole
// 3-byte group, and "???" encodes to "Pz8/", so the standard text surely has a
// character the URL-safe alphabet replaces.
func urlSafeHeader(h *O) string {
	put(h, "resource.description", description+" ?????")
	return urlSafe(b64(h))
}

// unpadded strips the padding; it panics when there is none to strip.
func unpadded(s string) string {
	if !strings.HasSuffix(s, "=") {
		panic("base64 text has no padding: choose other content")
	}
	return strings.TrimRight(s, "=")
}

// wrap76 breaks base64 text into MIME-style 76-character lines.
func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteString("\r\n")
		s = s[76:]
	}
	b.WriteString(s)
	return b.String()
}

// gen collects synthetic cases.
type gen struct{ cases []Case }

func (g *gen) add(op, id, note, url string, cs ...Capture) {
	g.cases = append(g.cases, Case{ID: id, Provenance: "synthetic", Op: op, Note: note, URL: url, Captures: cs})
}

func (g *gen) check(id, note, url string, c Capture) { g.add("check", id, note, url, c) }

func (g *gen) memo(id, note, url string, c1, c2 Capture) { g.add("memo", id, note, url, c1, c2) }

func (g *gen) probe(id, note, url string, cs [7]Capture) { g.add("probe", id, note, url, cs[:]...) }

// synthetic returns every synthetic case, check and memo first, then probe.
func synthetic() []Case {
	var g gen
	checkCases(&g)
	memoCases(&g)
	probeCases(&g)
	return g.cases
}
