package main

// This file is the generator's own reading of x402-lint/v1
// (internal/lint/x402-lint.v1.json and docs/lint.md): from one case's
// request, response and chain observations it writes the expected result.
// It shares no code with internal/lint; where the two disagree, the corpus
// fails and one of them is wrong.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mr-tron/base58"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/crypto/sha3"
)

type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Leg      string `json:"leg"`
	Entry    *int   `json:"entry"`
	Field    string `json:"field"`
}

type entrySummary struct {
	Index       int    `json:"index"`
	Leg         string `json:"leg"`
	X402Version int    `json:"x402_version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
	Errors      int    `json:"errors"`
	Warnings    int    `json:"warnings"`
}

type expected struct {
	Status   int             `json:"status"`
	Dialect  map[string]bool `json:"dialect"`
	Conforms bool            `json:"conforms"`
	Entries  []entrySummary  `json:"entries"`
	Findings []finding       `json:"findings"`
}

// severity of every rule, read from the published document at start.
var severity map[string]string

type chainObs struct {
	Leg               string  `json:"leg"`
	Entry             int     `json:"entry"`
	Family            string  `json:"family"`
	Unavailable       bool    `json:"unavailable"`
	OtherNetwork      bool    `json:"other_network"`
	Skipped           bool    `json:"skipped,omitempty"`
	AssetIsMint       bool    `json:"asset_is_mint"`
	ATAExists         bool    `json:"ata_exists"`
	ATAIsTokenAccount bool    `json:"ata_is_token_account"`
	Name              *string `json:"name"`
	Version           *string `json:"version"`
}

type input struct {
	url, method string
	now         time.Time
	outcome     string
	status      int
	headers     [][2]string // in file order
	body        []byte
	hasBody     bool
	chain       []chainObs
}

type judge struct {
	in  input
	out []finding
}

func (j *judge) f(rule, leg string, entry int, field string) {
	sev, ok := severity[rule]
	if !ok {
		panic("lintgen: rule not in the document: " + rule)
	}
	var e *int
	if entry >= 0 {
		n := entry
		e = &n
	}
	j.out = append(j.out, finding{rule, sev, leg, e, field})
}

func (j *judge) header(name string) (string, bool) {
	for _, h := range j.in.headers {
		if strings.EqualFold(h[0], name) {
			return h[1], true
		}
	}
	return "", false
}

func (j *judge) headerAll(name string) []string {
	var vs []string
	for _, h := range j.in.headers {
		if strings.EqualFold(h[0], name) {
			vs = append(vs, h[1])
		}
	}
	return vs
}

// parseOne: exactly one JSON value, numbers as text.
func parseOne(b []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func decodeHeader(v string) (map[string]any, bool) {
	s := strings.Trim(v, " \t\r\n")
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return nil, false
	}
	var raw []byte
	var err error
	if strings.HasSuffix(s, "=") {
		raw, err = base64.StdEncoding.DecodeString(s)
	} else {
		raw, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, false
	}
	x, ok := parseOne(raw)
	m, isObj := x.(map[string]any)
	return m, ok && isObj
}

func versionOf(m map[string]any) int {
	n, ok := m["x402Version"].(json.Number)
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < 1 || i > 65535 {
		return 0
	}
	return int(i)
}

type leg struct {
	name    string // header | body
	version int
	root    map[string]any
	accepts []any
}

func grade(in input) expected {
	j := &judge{in: in}
	ex := expected{Status: in.status, Dialect: map[string]bool{"v1_body": false, "v2_header": false}, Entries: []entrySummary{}}
	var legs []leg
	complete := in.outcome == "ok" && in.status != 0 && len(in.body) <= 65536
	// status_not_402 reads the status line: a status that arrived (the
	// exchange finished, or only its body ran past the cap) and is not 402
	// is that one error, whatever the body.
	statusSeen := in.status != 0 && (in.outcome == "ok" || in.outcome == "over_cap")
	if statusSeen && in.status != 402 {
		j.f("status_not_402", "http", -1, "status")
	} else if !complete {
		j.f("fetch_failed", "http", -1, "status")
	} else {
		legs = j.legs(ex.Dialect)
		j.http()
		for _, l := range legs {
			j.leg(l)
		}
		var h, v1 *leg
		for i := range legs {
			if legs[i].name == "header" {
				h = &legs[i]
			} else if legs[i].version == 1 {
				v1 = &legs[i]
			}
		}
		if h != nil && v1 != nil {
			j.sameOffers(*h, *v1)
		}
		if in.chain != nil {
			j.chain(legs)
		}
	}
	ex.Findings = j.out
	if ex.Findings == nil {
		ex.Findings = []finding{}
	}
	ex.Conforms = true
	for _, f := range j.out {
		if f.Severity == "error" {
			ex.Conforms = false
		}
	}
	for _, l := range legs {
		for i, a := range l.accepts {
			s := entrySummary{Index: i, Leg: l.name, X402Version: l.version}
			if m, ok := a.(map[string]any); ok {
				if sc, _ := m["scheme"].(string); sc == "exact" || sc == "upto" {
					s.Scheme = sc
				}
				n, _ := m["network"].(string)
				if caip2RE.MatchString(n) {
					s.Network = n
				} else if _, known := legacy[n]; known && l.version == 1 {
					s.Network = n
				}
			}
			for _, f := range j.out {
				if f.Leg == l.name && f.Entry != nil && *f.Entry == i {
					if f.Severity == "error" {
						s.Errors++
					} else if f.Severity == "warn" {
						s.Warnings++
					}
				}
			}
			ex.Entries = append(ex.Entries, s)
		}
	}
	return ex
}

func (j *judge) legs(d map[string]bool) []leg {
	var legs []leg
	hv, hasHeader := j.header("PAYMENT-REQUIRED")
	usable := false
	if hasHeader {
		root, ok := decodeHeader(hv)
		switch {
		case !ok:
			j.f("header_undecodable", "http", -1, "PAYMENT-REQUIRED")
		case versionOf(root) != 2:
			j.f("x402_version_invalid", "header", -1, "x402Version")
		default:
			usable = true
			d["v2_header"] = true
			arr, _ := root["accepts"].([]any)
			legs = append(legs, leg{"header", 2, root, arr})
		}
	}
	if x, ok := parseOne(j.in.body); ok {
		if root, isObj := x.(map[string]any); isObj {
			arr, _ := root["accepts"].([]any)
			_, hasV := root["x402Version"]
			_, hasA := root["accepts"]
			v := versionOf(root)
			if v == 1 {
				d["v1_body"] = true
				legs = append(legs, leg{"body", 1, root, arr})
			} else if !usable {
				if v == 2 {
					if !hasHeader {
						j.f("v2_header_missing", "http", -1, "PAYMENT-REQUIRED")
					}
					legs = append(legs, leg{"body", 2, root, arr})
				} else if hasV || hasA {
					j.f("x402_version_invalid", "body", -1, "x402Version")
				}
			}
		}
	}
	if len(legs) == 0 && len(j.out) == 0 {
		j.f("challenge_missing", "http", -1, "PAYMENT-REQUIRED")
	}
	return legs
}

func listHas(values []string, tok string) bool {
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if i := strings.Index(p, "="); i >= 0 {
				p = strings.TrimSpace(p[:i])
			}
			if strings.EqualFold(p, tok) {
				return true
			}
		}
	}
	return false
}

func (j *judge) http() {
	if !listHas(j.headerAll("Cache-Control"), "no-store") {
		j.f("cache_control_no_store", "http", -1, "Cache-Control")
	}
	if _, ok := j.header("Access-Control-Allow-Origin"); ok {
		eh := j.headerAll("Access-Control-Expose-Headers")
		if !listHas(eh, "PAYMENT-REQUIRED") && !listHas(eh, "*") {
			j.f("cors_expose_headers", "http", -1, "Access-Control-Expose-Headers")
		}
	}
}

func sget(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

func (j *judge) leg(l leg) {
	if len(l.accepts) == 0 {
		j.f("accepts_missing", l.name, -1, "accepts")
	}
	if l.version == 2 {
		res, _ := l.root["resource"].(map[string]any)
		if u, ok := sget(res, "url"); ok && u != "" {
			j.resourceURL(l.name, -1, "resource.url", u)
		} else {
			j.f("resource_missing", l.name, -1, "resource.url")
		}
		if d, ok := sget(res, "description"); ok && utf8.RuneCountInString(d) > 500 {
			j.f("description_long", l.name, -1, "resource.description")
		}
		j.exts(l)
	}
	for i := range l.accepts {
		j.entry(l, i)
	}
}

func effPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Port()
	}
	if strings.ToLower(u.Scheme) == "https" {
		return "443"
	}
	return "80"
}

func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + effPort(u)
}

func (j *judge) resourceURL(legName string, entry int, field, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		j.f("resource_url_invalid", legName, entry, field)
		return
	}
	c, err := url.Parse(j.in.url)
	if err != nil || c.Host == "" {
		return
	}
	if origin(u) != origin(c) {
		j.f("resource_url_mismatch", legName, entry, field)
		return
	}
	p := func(x *url.URL) string {
		if x.EscapedPath() == "" {
			return "/"
		}
		return pctNormal(x.EscapedPath())
	}
	if p(u) == p(c) && pctNormal(u.RawQuery) == pctNormal(c.RawQuery) {
		return
	}
	if strings.TrimRight(p(u), "/") == strings.TrimRight(p(c), "/") {
		j.f("resource_url_query", legName, entry, field)
	} else {
		j.f("resource_url_mismatch", legName, entry, field)
	}
}

// pctNormal is RFC 3986 §6.2.2.1-2 for percent-encodings: each %XX is
// compared by value (hex case ignored), and one that encodes an unreserved
// character stands for that character.
var pctRE = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

func pctNormal(s string) string {
	return pctRE.ReplaceAllStringFunc(s, func(t string) string {
		v, _ := strconv.ParseUint(t[1:], 16, 8)
		if strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", rune(v)) {
			return string(rune(v))
		}
		return strings.ToUpper(t)
	})
}

// legacy is the v1 client's network table (x402 legacy TypeScript package,
// types/shared/network.ts: NetworkSchema, EvmNetworkToChainId).
var legacy = map[string]string{
	"abstract": "eip155:2741", "abstract-testnet": "eip155:11124",
	"story": "eip155:1514", "educhain": "eip155:41923", "skale-base-sepolia": "eip155:324705682",
	"base": "eip155:8453", "base-sepolia": "eip155:84532",
	"avalanche": "eip155:43114", "avalanche-fuji": "eip155:43113",
	"iotex": "eip155:4689", "sei": "eip155:1329", "sei-testnet": "eip155:1328",
	"polygon": "eip155:137", "polygon-amoy": "eip155:80002", "peaq": "eip155:3338",
	"solana": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
}

var caip2RE = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
var digitsRE = regexp.MustCompile(`^[0-9]+$`)

func famOf(id string) string {
	switch {
	case strings.HasPrefix(id, "eip155:"):
		return "evm"
	case strings.HasPrefix(id, "solana:"):
		return "solana"
	}
	return ""
}

func keccakHex(s string) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(s))
	return h.Sum(nil)
}

// addrRule: "" when valid, else the rule.
func addrRule(fam, s string) string {
	switch fam {
	case "solana":
		b, err := base58.Decode(s)
		if err != nil || len(b) != 32 || len(s) > 44 {
			return "address_invalid"
		}
	case "evm":
		if !regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`).MatchString(s) {
			return "address_invalid"
		}
		hexPart := s[2:]
		if hexPart == strings.ToLower(hexPart) || hexPart == strings.ToUpper(hexPart) {
			return ""
		}
		sum := keccakHex(strings.ToLower(hexPart))
		for i := 0; i < 40; i++ {
			c := hexPart[i]
			if c >= '0' && c <= '9' {
				continue
			}
			nib := sum[i/2]
			if i%2 == 0 {
				nib >>= 4
			}
			nib &= 0xf
			upper := c >= 'A' && c <= 'F'
			if upper != (nib >= 8) {
				return "address_checksum"
			}
		}
	}
	return ""
}

func intAbove0(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok || len(n) > 64 {
		return nil, false
	}
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e < -30 || e > 30 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || r.Sign() <= 0 {
		return nil, false
	}
	return r, true
}

func (j *judge) entry(l leg, i int) {
	m, ok := l.accepts[i].(map[string]any)
	pre := "accepts[" + strconv.Itoa(i) + "]"
	if !ok {
		j.f("entry_not_object", l.name, i, pre)
		return
	}
	pre += "."
	at := func(rule, field string) { j.f(rule, l.name, i, pre+field) }

	scheme := ""
	if s, ok := sget(m, "scheme"); !ok || s == "" {
		at("scheme_missing", "scheme")
	} else if s != "exact" && s != "upto" {
		at("scheme_unknown", "scheme")
		return // skipped by clients; its fields are its scheme's business
	} else {
		scheme = s
	}

	fam := ""
	if n, ok := sget(m, "network"); !ok || n == "" {
		at("network_missing", "network")
	} else if l.version == 2 {
		if !caip2RE.MatchString(n) {
			at("network_not_caip2", "network")
		} else if fam = famOf(n); fam == "" {
			at("network_family_unknown", "network")
		}
	} else if caip2RE.MatchString(n) {
		at("network_caip2_on_v1", "network")
	} else if id, known := legacy[n]; !known {
		at("network_unknown_v1", "network")
	} else if fam = famOf(id); fam == "" {
		at("network_family_unknown", "network")
	}

	amt := "amount"
	if l.version == 1 {
		amt = "maxAmountRequired"
	}
	if s, ok := sget(m, amt); !ok {
		at("amount_missing", amt)
	} else if !digitsRE.MatchString(s) {
		at("amount_not_digits", amt)
	} else if strings.Trim(s, "0") == "" {
		at("amount_zero", amt)
	} else if s[0] == '0' {
		at("amount_leading_zeros", amt)
	}

	for _, k := range []string{"asset", "payTo"} {
		s, ok := sget(m, k)
		if !ok || s == "" {
			at("address_missing", k)
			continue
		}
		if r := addrRule(fam, s); r != "" {
			at(r, k)
			continue
		}
		if k == "payTo" && ((fam == "evm" && strings.ToLower(s) == "0x0000000000000000000000000000000000000000") ||
			(fam == "solana" && s == "11111111111111111111111111111111")) {
			at("pay_to_placeholder", k)
		}
	}

	if v, ok := m["maxTimeoutSeconds"]; !ok {
		at("max_timeout_missing", "maxTimeoutSeconds")
	} else if r, ok := intAbove0(v); !ok {
		at("max_timeout_invalid", "maxTimeoutSeconds")
	} else if r.Cmp(big.NewRat(3600, 1)) > 0 {
		at("max_timeout_long", "maxTimeoutSeconds")
	}

	if l.version == 1 {
		if r, ok := sget(m, "resource"); ok && r != "" {
			j.resourceURL(l.name, i, pre+"resource", r)
		} else {
			at("resource_missing", "resource")
		}
		if d, ok := sget(m, "description"); ok && utf8.RuneCountInString(d) > 500 {
			at("description_long", "description")
		}
	}

	var extra map[string]any
	if x, ok := m["extra"]; ok {
		if extra, ok = x.(map[string]any); !ok {
			at("extra_not_object", "extra")
		}
	}
	if scheme == "" || fam == "" {
		return
	}
	needAddr := func(key, missing string) {
		s, ok := sget(extra, key)
		if !ok || s == "" {
			at(missing, "extra."+key)
		} else if r := addrRule(fam, s); r != "" {
			at(r, "extra."+key)
		}
	}
	memo := func() {
		if v, ok := extra["memo"]; ok {
			if s, isStr := v.(string); !isStr {
				at("svm_memo_not_string", "extra.memo")
			} else if len(s) > 256 {
				at("svm_memo_too_long", "extra.memo")
			}
		}
	}
	nonEmpty := func(key string) bool {
		s, ok := sget(extra, key)
		return ok && s != ""
	}
	switch scheme + "/" + fam {
	case "exact/solana":
		needAddr("feePayer", "address_missing")
		memo()
	case "exact/evm":
		v, named := extra["assetTransferMethod"]
		method, _ := v.(string)
		if named && method != "eip3009" && method != "permit2" && method != "erc7710" {
			at("evm_transfer_method_unknown", "extra.assetTransferMethod")
			break
		}
		// evm_domain_required: "with assetTransferMethod eip3009, or with
		// none (clients then sign eip3009)".
		if !named || method == "eip3009" {
			if !nonEmpty("name") {
				at("evm_domain_required", "extra.name")
			}
			if !nonEmpty("version") {
				at("evm_domain_required", "extra.version")
			}
		}
	case "upto/evm":
		if !nonEmpty("name") {
			at("upto_extra_missing", "extra.name")
		}
		if !nonEmpty("version") {
			at("upto_extra_missing", "extra.version")
		}
		needAddr("facilitatorAddress", "upto_extra_missing")
	case "upto/solana":
		needAddr("feePayer", "upto_extra_missing")
		needAddr("receiverAuthorizer", "upto_extra_missing")
		if v, ok := extra["withdrawDelay"]; !ok {
			at("upto_extra_missing", "extra.withdrawDelay")
		} else if _, ok := intAbove0(v); !ok {
			at("upto_withdraw_delay_invalid", "extra.withdrawDelay")
		}
		if v, ok := extra["tokenProgram"]; !ok {
			at("upto_extra_missing", "extra.tokenProgram")
		} else if s, _ := v.(string); s != "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" && s != "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" {
			at("upto_token_program_invalid", "extra.tokenProgram")
		}
		memo()
	}
}

func (j *judge) sameOffers(h, b leg) {
	if len(h.accepts) != len(b.accepts) {
		j.f("legs_entry_count", "body", -1, "accepts")
	}
	n := len(h.accepts)
	if len(b.accepts) < n {
		n = len(b.accepts)
	}
	for i := 0; i < n; i++ {
		he, ok1 := h.accepts[i].(map[string]any)
		be, ok2 := b.accepts[i].(map[string]any)
		if !ok1 || !ok2 {
			continue
		}
		pre := "accepts[" + strconv.Itoa(i) + "]."
		bad := func(field string) { j.f("legs_mismatch", "body", i, pre+field) }
		hs, _ := sget(he, "scheme")
		bs, _ := sget(be, "scheme")
		if hs != "" && bs != "" && hs != bs {
			bad("scheme")
		}
		hn, _ := sget(he, "network")
		bn, _ := sget(be, "network")
		if mapped, ok := legacy[bn]; ok && hn != "" && mapped != hn {
			bad("network")
		}
		ha, _ := sget(he, "amount")
		ba, _ := sget(be, "maxAmountRequired")
		if ha != "" && ba != "" {
			same := ha == ba
			if digitsRE.MatchString(ha) && digitsRE.MatchString(ba) {
				x, _ := new(big.Int).SetString(ha, 10)
				y, _ := new(big.Int).SetString(ba, 10)
				same = x.Cmp(y) == 0
			}
			if !same {
				bad("maxAmountRequired")
			}
		}
		for _, k := range []string{"asset", "payTo"} {
			x, _ := sget(he, k)
			y, _ := sget(be, k)
			if x == "" || y == "" {
				continue
			}
			eq := x == y
			if famOf(hn) == "evm" {
				eq = strings.EqualFold(x, y)
			}
			if !eq {
				bad(k)
			}
		}
	}
}

func (j *judge) exts(l leg) {
	raw, ok := l.root["extensions"]
	if !ok {
		return
	}
	exts, ok := raw.(map[string]any)
	if !ok {
		j.f("extensions_invalid", l.name, -1, "extensions")
		return
	}
	keys := make([]string, 0, len(exts))
	for k := range exts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		known := k == "bazaar" || k == "sign-in-with-x" || k == "payment-identifier"
		ext, ok := exts[k].(map[string]any)
		if !ok {
			if known {
				j.f("extensions_invalid", l.name, -1, "extensions."+k)
			} else {
				j.f("extensions_invalid", l.name, -1, "extensions")
			}
			continue
		}
		switch k {
		case "bazaar":
			j.bazaar(l.name, ext)
		case "sign-in-with-x":
			j.siwx(l.name, ext)
		case "payment-identifier":
			j.payID(l.name, ext)
		}
	}
}

func refsLocal(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch k {
			case "$ref", "$dynamicRef", "$recursiveRef", "$id":
				// bazaar.md bounds reference *values* (strings); an
				// object under such a key is a property named so, or a
				// keyword the compiler rejects.
				if s, ok := x.(string); ok && !strings.HasPrefix(s, "#") {
					return false
				}
			}
			if !refsLocal(x, depth+1) {
				return false
			}
		}
	case []any:
		for _, x := range t {
			if !refsLocal(x, depth+1) {
				return false
			}
		}
	}
	return true
}

type noLoad struct{}

func (noLoad) Load(string) (any, error) { return nil, io.ErrUnexpectedEOF }

func (j *judge) bazaar(legName string, ext map[string]any) {
	schema, ok := ext["schema"].(map[string]any)
	if !ok || !refsLocal(schema, 0) {
		j.f("bazaar_schema_invalid", legName, -1, "extensions.bazaar.schema")
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoad{})
	if c.AddResource("urn:lintgen:bazaar", schema) != nil {
		j.f("bazaar_schema_invalid", legName, -1, "extensions.bazaar.schema")
		return
	}
	sch, err := c.Compile("urn:lintgen:bazaar")
	if err != nil {
		j.f("bazaar_schema_invalid", legName, -1, "extensions.bazaar.schema")
		return
	}
	info, ok := ext["info"]
	if !ok || sch.Validate(info) != nil {
		j.f("bazaar_info_invalid", legName, -1, "extensions.bazaar.info")
	}
}

func (j *judge) siwx(legName string, ext map[string]any) {
	info, ok := ext["info"].(map[string]any)
	if !ok {
		j.f("siwx_info_missing", legName, -1, "extensions.sign-in-with-x.info")
		return
	}
	p := "extensions.sign-in-with-x.info."
	if c, err := url.Parse(j.in.url); err == nil && c.Host != "" {
		want := strings.ToLower(c.Hostname())
		if strings.Contains(want, ":") {
			want = "[" + want + "]"
		}
		if port := c.Port(); port != "" && !((c.Scheme == "https" && port == "443") || (c.Scheme == "http" && port == "80")) {
			want += ":" + port
		}
		if d, _ := sget(info, "domain"); strings.ToLower(d) != want {
			j.f("siwx_domain", legName, -1, p+"domain")
		}
		us, _ := sget(info, "uri")
		u, err := url.Parse(us)
		if err != nil || u.Host == "" || origin(u) != origin(c) {
			j.f("siwx_uri", legName, -1, p+"uri")
		}
	}
	if v, _ := sget(info, "version"); v != "1" {
		j.f("siwx_version", legName, -1, p+"version")
	}
	if n, _ := sget(info, "nonce"); !regexp.MustCompile(`^[0-9a-fA-F]{32}$`).MatchString(n) {
		j.f("siwx_nonce", legName, -1, p+"nonce")
	}
	ts := func(k string) (time.Time, bool) {
		s, ok := sget(info, k)
		if !ok {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil
	}
	if t, ok := ts("issuedAt"); !ok || t.After(j.in.now) {
		j.f("siwx_issued_at", legName, -1, p+"issuedAt")
	}
	if _, present := info["expirationTime"]; present {
		if t, ok := ts("expirationTime"); !ok || !t.After(j.in.now) {
			j.f("siwx_expiration", legName, -1, p+"expirationTime")
		}
	}
}

func (j *judge) payID(legName string, ext map[string]any) {
	p := "extensions.payment-identifier.info"
	info, ok := ext["info"].(map[string]any)
	if !ok {
		j.f("payment_identifier_invalid", legName, -1, p)
		return
	}
	if _, ok := info["required"].(bool); !ok {
		j.f("payment_identifier_invalid", legName, -1, p+".required")
	}
	if v, ok := info["id"]; ok {
		s, _ := v.(string)
		if !regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`).MatchString(s) {
			j.f("payment_identifier_invalid", legName, -1, p+".id")
		}
	}
}

func (j *judge) chain(legs []leg) {
	for _, o := range j.in.chain {
		var m map[string]any
		for _, l := range legs {
			if l.name == o.Leg && o.Entry >= 0 && o.Entry < len(l.accepts) {
				m, _ = l.accepts[o.Entry].(map[string]any)
			}
		}
		if m == nil {
			continue
		}
		// scheme_unknown: nothing else of such an entry is graded, chain
		// readiness included (clients skip the entry).
		if s, ok := sget(m, "scheme"); ok && s != "" && s != "exact" && s != "upto" {
			continue
		}
		pre := "accepts[" + strconv.Itoa(o.Entry) + "]."
		at := func(rule, field string) { j.f(rule, o.Leg, o.Entry, pre+field) }
		// The caller's cap of distinct look-ups was reached: not looked up.
		if o.Skipped {
			at("chain_lookup_skipped", "network")
			continue
		}
		if o.Unavailable {
			at("chain_unavailable", "network")
			continue
		}
		if o.OtherNetwork {
			at("chain_other_network", "network")
			continue
		}
		if o.Family == "solana" {
			if !o.AssetIsMint {
				at("svm_asset_not_mint", "asset")
			} else if !o.ATAExists {
				at("svm_ata_missing", "payTo")
			} else if !o.ATAIsTokenAccount {
				at("svm_ata_not_token_account", "payTo")
			}
			continue
		}
		if o.Family == "evm" {
			if o.Name == nil || o.Version == nil {
				at("evm_domain_unreadable", "asset")
			}
			extra, _ := m["extra"].(map[string]any)
			if n, ok := sget(extra, "name"); ok && o.Name != nil && *o.Name != n {
				at("evm_domain_mismatch", "extra.name")
			}
			if v, ok := sget(extra, "version"); ok && o.Version != nil && *o.Version != v {
				at("evm_domain_mismatch", "extra.version")
			}
		}
	}
}
