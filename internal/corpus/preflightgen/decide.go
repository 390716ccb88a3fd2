package main

// An independent reading of x402-preflight/v1 (internal/preflight/
// x402-preflight.v1.json and docs/preflight.md), written from the document's
// text. It shares no code with internal/preflight: the decision it computes
// is what the corpus expects the shipped decision to be.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"regexp"
	"strings"

	"github.com/gowebpki/jcs"
)

// decoded is one leg of an answer: its JSON object and x402Version.
type decoded struct {
	leg     string // "header" or "body"
	root    map[string]any
	version int
	accepts []any
}

// parseJSONObject reads exactly one JSON value, numbers kept as text; ok only
// for an object.
func parseJSONObject(b []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// fromBase64 reads a header value: outer whitespace ignored, none inside,
// padding optional, standard alphabet.
func fromBase64(v string) ([]byte, bool) {
	v = strings.Trim(v, " \t\r\n")
	if v == "" || strings.ContainsAny(v, " \t\r\n") {
		return nil, false
	}
	var out []byte
	var err error
	if strings.HasSuffix(v, "=") {
		out, err = base64.StdEncoding.DecodeString(v)
	} else {
		out, err = base64.RawStdEncoding.DecodeString(v)
	}
	return out, err == nil
}

func legOf(name string, root map[string]any) *decoded {
	d := &decoded{leg: name, root: root}
	if n, ok := root["x402Version"].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i > 0 && i < 65536 {
			d.version = int(i)
		}
	}
	d.accepts, _ = root["accepts"].([]any)
	return d
}

// legs returns the header leg (nil when absent or undecodable) and the body
// leg (nil when the body is no JSON object).
func legs(c observed) (header, body *decoded) {
	if v, ok := c.header("payment-required"); ok {
		if raw, ok := fromBase64(v); ok {
			if root, ok := parseJSONObject(raw); ok {
				header = legOf("header", root)
			}
		}
	}
	if root, ok := parseJSONObject(c.body); ok {
		body = legOf("body", root)
	}
	return header, body
}

// observed is a capture as the generator reads it.
type observed struct {
	outcome string
	status  int
	headers map[string]string // lower-case names
	body    []byte
}

func (o observed) header(name string) (string, bool) {
	v, ok := o.headers[strings.ToLower(name)]
	return v, ok
}

func (o observed) answered() bool {
	return (o.outcome == "ok" || o.outcome == "over_cap") && o.status != 0
}

// candidate is an entry a standard client reads.
type candidate struct {
	leg      string
	index    int
	version  int
	entry    map[string]any
	resource any
	hasRes   bool
	caip2    string
}

var v1Names = map[string]string{
	"base": "eip155:8453", "base-sepolia": "eip155:84532", "avalanche": "eip155:43114", "avalanche-fuji": "eip155:43113",
	"polygon": "eip155:137", "polygon-amoy": "eip155:80002", "sei": "eip155:1329", "sei-testnet": "eip155:1328",
	"iotex": "eip155:4689", "peaq": "eip155:3338",
	"solana": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
}

var chainID = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)

func toCAIP2(version int, n string) string {
	if chainID.MatchString(n) {
		return n
	}
	if version == 1 {
		return v1Names[n]
	}
	return ""
}

func text(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func candidatesOf(header, body *decoded) []candidate {
	var out []candidate
	if header != nil && header.version == 2 {
		res, has := header.root["resource"]
		for i, a := range header.accepts {
			if e, ok := a.(map[string]any); ok {
				out = append(out, candidate{"header", i, 2, e, res, has, toCAIP2(2, text(e, "network"))})
			}
		}
	}
	if body != nil && body.version == 1 {
		for i, a := range body.accepts {
			if e, ok := a.(map[string]any); ok {
				out = append(out, candidate{"body", i, 1, e, nil, false, toCAIP2(1, text(e, "network"))})
			}
		}
	}
	return out
}

func (c candidate) amount() string {
	if c.version == 1 {
		return text(c.entry, "maxAmountRequired")
	}
	return text(c.entry, "amount")
}

// lintData is the lint result a case gives.
type lintData struct {
	Entries []struct {
		Index    int    `json:"index"`
		Leg      string `json:"leg"`
		Errors   int    `json:"errors"`
		Warnings int    `json:"warnings"`
	} `json:"entries"`
	Findings []struct {
		Severity string `json:"severity"`
		Leg      string `json:"leg"`
		Entry    *int   `json:"entry"`
		Field    string `json:"field"`
	} `json:"findings"`
	Conforms bool `json:"conforms"`
}

func (l lintData) isClean(leg string, index int) bool {
	found := false
	for _, e := range l.Entries {
		if e.Leg == leg && e.Index == index {
			if e.Errors != 0 {
				return false
			}
			found = true
		}
	}
	for _, f := range l.Findings {
		if f.Severity == "error" && f.Leg == leg && f.Entry == nil {
			return false
		}
	}
	return found
}

func (l lintData) hasWarning(leg string, index int) bool {
	for _, e := range l.Entries {
		if e.Leg == leg && e.Index == index && e.Warnings != 0 {
			return true
		}
	}
	for _, f := range l.Findings {
		if f.Severity == "warn" && f.Leg == leg && (f.Entry == nil || *f.Entry == index) {
			return true
		}
	}
	return false
}

var resourcePath = regexp.MustCompile(`^(resource(\..+)?|accepts\[[0-9]+\]\.resource)$`)

func (l lintData) resourceErr() bool {
	for _, f := range l.Findings {
		if f.Severity == "error" && resourcePath.MatchString(f.Field) {
			return true
		}
	}
	return false
}

var hexAddr = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

func assetMatches(got, want string) bool {
	if hexAddr.MatchString(got) && hexAddr.MatchString(want) {
		return strings.EqualFold(got, want)
	}
	return got == want
}

var atomic = regexp.MustCompile(`^[0-9]{1,78}$`)

func inBudget(amount, max string) bool {
	if max == "" {
		return true
	}
	if !atomic.MatchString(amount) {
		return false
	}
	a, _ := new(big.Int).SetString(amount, 10)
	m, _ := new(big.Int).SetString(max, 10)
	return a.Cmp(m) <= 0
}

// options are the agent's constraints, as the corpus writes them.
type options struct {
	Network   string `json:"network,omitempty"`
	Scheme    string `json:"scheme,omitempty"`
	Asset     string `json:"asset,omitempty"`
	MaxAmount string `json:"max_amount,omitempty"`
}

// selectEntry returns the selected candidate (nil if none) and whether any
// clean entry matched network, scheme and asset.
func selectEntry(cs []candidate, l lintData, o options) (*candidate, bool) {
	matched := false
	for i := range cs {
		c := cs[i]
		if !l.isClean(c.leg, c.index) {
			continue
		}
		if o.Network != "" && c.caip2 != o.Network || o.Scheme != "" && text(c.entry, "scheme") != o.Scheme ||
			o.Asset != "" && !assetMatches(text(c.entry, "asset"), o.Asset) {
			continue
		}
		matched = true
		if inBudget(c.amount(), o.MaxAmount) {
			return &c, true
		}
	}
	return nil, matched
}

// probeable: P1 is sent for exact on an eip155 network, or on a solana
// network whose payTo, asset and extra.feePayer are 32-byte keys and whose
// amount fits 64 bits.
func probeable(c *candidate) bool {
	if c == nil || text(c.entry, "scheme") != "exact" {
		return false
	}
	if strings.HasPrefix(c.caip2, "eip155:") {
		return true
	}
	_, _, _, _, ok := svmTerms(c)
	return strings.HasPrefix(c.caip2, "solana:") && ok
}

// rejection signals: source|value strings.
func rejections(o observed) map[string]bool {
	out := map[string]bool{}
	if m, ok := parseJSONObject(o.body); ok {
		for _, k := range []string{"error", "reason", "detail"} {
			if s := text(m, k); s != "" {
				out["body."+k+"|"+s] = true
			}
		}
	}
	if v, ok := o.header("payment-required"); ok {
		if raw, ok := fromBase64(v); ok {
			if m, ok := parseJSONObject(raw); ok && text(m, "error") != "" {
				out["pr.error|"+text(m, "error")] = true
			}
		}
	}
	if v, ok := o.header("payment-response"); ok {
		if raw, ok := fromBase64(strings.Trim(v, " \t")); ok {
			if m, ok := parseJSONObject(raw); ok {
				if b, isBool := m["success"].(bool); isBool && !b {
					out["pr.success|false"] = true
				}
			}
		}
	}
	return out
}

func gradeOf(unpaid, a observed) string {
	switch {
	case !a.answered():
		return "UNGRADED"
	case a.status/100 == 2:
		return "FAIL-OPEN"
	case a.status == 402:
		before := rejections(unpaid)
		for s := range rejections(a) {
			if !before[s] {
				return "CLOSED"
			}
		}
		return "NOT-EVALUATED"
	case a.status == 400 || a.status == 422:
		return "CLOSED"
	case a.status/100 == 5:
		return "ERRORED"
	}
	return "DIRTY"
}

func siwxNonce(root map[string]any) string {
	e, _ := root["extensions"].(map[string]any)
	s, _ := e["sign-in-with-x"].(map[string]any)
	i, _ := s["info"].(map[string]any)
	return text(i, "nonce")
}

func freshness(first, second string, secondOK bool) string {
	switch {
	case first == "":
		return "absent"
	case !secondOK || second == "":
		return "unreadable"
	case first == second:
		return "repeated"
	}
	return "fresh"
}

// termsHash is SHA-256 of the RFC 8785 form of the seven terms, or "".
func termsHash(c *candidate) string {
	url := text(c.entry, "resource")
	if c.version == 2 {
		r, _ := c.resource.(map[string]any)
		url = text(r, "url")
	}
	mts, ok := c.entry["maxTimeoutSeconds"].(json.Number)
	terms := map[string]string{"url": url, "scheme": text(c.entry, "scheme"), "network": c.caip2,
		"asset": text(c.entry, "asset"), "payTo": text(c.entry, "payTo"), "amount": c.amount()}
	for _, v := range terms {
		if v == "" {
			return ""
		}
	}
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("{")
	for _, k := range []string{"url", "scheme", "network", "asset", "payTo", "amount"} {
		q, _ := json.Marshal(terms[k])
		b.WriteString(`"` + k + `":` + string(q) + ",")
	}
	b.WriteString(`"maxTimeoutSeconds":` + string(mts) + "}")
	canon, err := jcs.Transform([]byte(b.String()))
	if err != nil {
		return ""
	}
	// The number must be a safe integer once canonical.
	var members map[string]json.RawMessage
	if json.Unmarshal(canon, &members) != nil || !safeInt(string(members["maxTimeoutSeconds"])) {
		return ""
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

var ident = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$`)

func identOrEmpty(s string) string {
	if ident.MatchString(s) {
		return s
	}
	return ""
}

// safeInt: an integer of magnitude at most 2^53-1, as ES6 writes it.
func safeInt(n string) bool {
	n = strings.TrimPrefix(n, "-")
	if !regexp.MustCompile(`^[0-9]{1,16}$`).MatchString(n) {
		return false
	}
	v, _ := new(big.Int).SetString(n, 10)
	return v.Cmp(big.NewInt(1<<53-1)) <= 0
}
