package main

// The generator's own reading of x402-lint's document rules (family
// origin; docs/lint.md, Origin mode): from an origin, its fetched discovery
// documents and the live responses of the listed resources it writes the
// document findings. It shares no code with internal/lint.

import (
	"encoding/json"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type originDoc struct {
	Leg     string     `json:"leg"`
	URL     string     `json:"url"`
	Named   bool       `json:"named"`
	Capture outCapture `json:"capture"`
}

type originLive struct {
	URL     string     `json:"url"`
	Method  string     `json:"method"` // as listed: "", GET or POST
	Sent    string     `json:"sent"`   // GET or POST
	Capture outCapture `json:"capture"`
}

type originCase struct {
	Origin    string       `json:"origin"`
	Documents []originDoc  `json:"documents"`
	Live      []originLive `json:"live"`
}

// resourceCap: at most 32 distinct (URL, method) are linted per origin.
const resourceCap = 32

func complete(c outCapture) bool {
	return c.Outcome == "ok" && c.Status != nil && *c.Status != 0 && (c.BodyText == nil || len(*c.BodyText) <= 65536)
}

func bodyOf(c outCapture) []byte {
	if c.BodyText == nil {
		return nil
	}
	return []byte(*c.BodyText)
}

// listed is one resource a document names, in the generator's words.
type listed struct {
	leg     string
	i       int
	at      string // the listing's own path: resources[i], items[i], paths["/x"].get
	urlAt   string // where its URL is written
	u       string
	method  string // "", GET, POST
	terms   [][5]string
	hasAcc  bool
	price   string
	priced  bool
	priceAt string
}

type originJudge struct{ judge }

func (o *originJudge) add(rule, leg string, entry int, field string) { o.f(rule, leg, entry, field) }

func gradeOrigin(oc originCase) expected {
	o := &originJudge{}
	base, _ := url.Parse(oc.Origin)
	read := 0
	type key struct{ u, m string }
	var targets []key
	linted := map[[2]int]int{} // (doc index, listing position) -> target
	var all [][]listed
	for di, d := range oc.Documents {
		var ls []listed
		st := d.Capture.Status
		if !complete(d.Capture) || *st != 200 {
			if d.Named {
				o.add("discovery_missing", d.Leg, -1, "")
			}
			all = append(all, nil)
			continue
		}
		read++
		v, ok := parseOne(bodyOf(d.Capture))
		root, isObj := v.(map[string]any)
		if !ok || !isObj {
			o.add("discovery_invalid", d.Leg, -1, "")
			all = append(all, nil)
			continue
		}
		switch d.Leg {
		case "well-known":
			ls = o.wellKnown(root)
		case "manifest":
			ls = o.manifest(root)
		case "openapi":
			ls = o.openapi(root, base)
		}
		seen := map[key]bool{}
		for li, l := range ls {
			u, err := url.Parse(l.u)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
				o.add("discovery_invalid", l.leg, l.i, l.urlAt)
				continue
			}
			u.Fragment = ""
			if base == nil || !strings.EqualFold(u.Hostname(), base.Hostname()) || u.Scheme != base.Scheme || port(u) != port(base) {
				o.add("listing_off_origin", l.leg, l.i, l.urlAt)
				continue
			}
			k := key{u.String(), l.method}
			if seen[k] {
				o.add("discovery_resource_duplicate", l.leg, l.i, l.urlAt)
				continue
			}
			seen[k] = true
			ls[li].u = u.String()
			ti := -1
			for i, t := range targets {
				if t == k {
					ti = i
				}
			}
			if ti < 0 {
				if len(targets) >= resourceCap {
					if !o.has("discovery_resources_capped") {
						o.add("discovery_resources_capped", l.leg, l.i, l.at)
					}
					continue
				}
				ti = len(targets)
				targets = append(targets, k)
			}
			linted[[2]int{di, li}] = ti
		}
		all = append(all, ls)
	}
	if read == 0 && !o.has("discovery_missing") {
		o.add("discovery_missing", "origin", -1, "")
	}
	for di, ls := range all {
		for li, l := range ls {
			ti, ok := linted[[2]int{di, li}]
			if !ok {
				continue
			}
			var live *originLive
			for i := range oc.Live {
				if oc.Live[i].URL == targets[ti].u && oc.Live[i].Method == targets[ti].m {
					live = &oc.Live[i]
					break
				}
			}
			if live == nil || !complete(live.Capture) || *live.Capture.Status != 402 {
				o.add("listed_not_402", l.leg, l.i, l.at)
				continue
			}
			o.compare(l, live.Capture)
		}
	}
	ex := expected{Dialect: map[string]bool{"v1_body": false, "v2_header": false}, Entries: []entrySummary{}, Findings: o.out, Conforms: true}
	if ex.Findings == nil {
		ex.Findings = []finding{}
	}
	for _, f := range ex.Findings {
		if f.Severity == "error" {
			ex.Conforms = false
		}
	}
	return ex
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (o *originJudge) has(rule string) bool {
	for _, f := range o.out {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

func (o *originJudge) wellKnown(root map[string]any) []listed {
	arr, ok := root["resources"].([]any)
	if !ok {
		o.add("discovery_invalid", "well-known", -1, "resources")
		return nil
	}
	var out []listed
	for i, e := range arr {
		at := "resources[" + strconv.Itoa(i) + "]"
		s, ok := e.(string)
		if !ok {
			o.add("discovery_invalid", "well-known", i, at)
			continue
		}
		out = append(out, listed{leg: "well-known", i: i, at: at, urlAt: at, u: s})
	}
	return out
}

// routeParam: a path with :name or {name} cannot be called as written.
func routeParam(p string) bool {
	return strings.Contains(p, "{") || strings.Contains(p, "}") || strings.Contains(p, "/:")
}

func (o *originJudge) manifest(root map[string]any) []listed {
	if n, ok := root["x402Version"].(json.Number); !ok || string(n) != "2" {
		o.add("discovery_invalid", "manifest", -1, "x402Version")
		return nil
	}
	arr, ok := root["items"].([]any)
	if !ok {
		o.add("discovery_invalid", "manifest", -1, "items")
		return nil
	}
	var out []listed
	for i, e := range arr {
		at := "items[" + strconv.Itoa(i) + "]"
		it, ok := e.(map[string]any)
		if !ok {
			o.add("discovery_invalid", "manifest", i, at)
			continue
		}
		r, _ := it["resource"].(map[string]any)
		u, ok := r["url"].(string)
		if !ok {
			o.add("discovery_invalid", "manifest", i, at+".resource.url")
			continue
		}
		if t, ok := it["type"].(string); ok && t != "http" {
			o.add("listing_not_linted", "manifest", i, at+".type")
			continue
		}
		in, _ := it["input"].(map[string]any)
		rt, hasRT := in["routeTemplate"].(string)
		var p string
		if pu, err := url.Parse(u); err == nil {
			p = pu.Path
		}
		if hasRT && routeParam(rt) || routeParam(p) {
			o.add("listing_not_linted", "manifest", i, at+".input.routeTemplate")
			continue
		}
		l := listed{leg: "manifest", i: i, at: at, urlAt: at + ".resource.url", u: u, method: "GET"}
		if m, ok := in["method"].(string); ok {
			switch strings.ToUpper(m) {
			case "GET":
			case "POST":
				l.method = "POST"
			default:
				o.add("listing_not_linted", "manifest", i, at+".input.method")
				continue
			}
		}
		if raw, present := it["accepts"]; present {
			acc, ok := raw.([]any)
			if !ok {
				o.add("discovery_invalid", "manifest", i, at+".accepts")
				continue
			}
			l.hasAcc = true
			l.terms = [][5]string{}
			for k, a := range acc {
				m, ok := a.(map[string]any)
				if !ok {
					o.add("discovery_invalid", "manifest", i, at+".accepts["+strconv.Itoa(k)+"]")
					l.terms = append(l.terms, [5]string{})
					continue
				}
				var t [5]string
				for x, f := range []string{"scheme", "network", "amount", "asset", "payTo"} {
					t[x], _ = sget(m, f)
				}
				l.terms = append(l.terms, t)
			}
		}
		out = append(out, l)
	}
	return out
}

func (o *originJudge) openapi(root map[string]any, origin *url.URL) []listed {
	if _, ok := root["openapi"].(string); !ok {
		o.add("discovery_invalid", "openapi", -1, "openapi")
		return nil
	}
	paths, ok := root["paths"].(map[string]any)
	if !ok {
		o.add("discovery_invalid", "openapi", -1, "paths")
		return nil
	}
	b := origin
	if servers, ok := root["servers"].([]any); ok && len(servers) > 0 {
		first, _ := servers[0].(map[string]any)
		s, _ := first["url"].(string)
		su, err := url.Parse(s)
		if s == "" || err != nil || origin == nil {
			o.add("discovery_invalid", "openapi", -1, "servers[0].url")
			return nil
		}
		b = origin.ResolveReference(su)
	}
	if b == nil {
		return nil
	}
	names := make([]string, 0, len(paths))
	for k := range paths {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []listed
	n := -1
	for _, name := range names {
		item, _ := paths[name].(map[string]any)
		for _, verb := range []string{"get", "post", "put", "patch", "delete", "head", "options", "trace"} {
			op, _ := item[verb].(map[string]any)
			xp, present := op["x-payment-info"]
			if !present {
				continue
			}
			n++
			at := "paths[" + strconv.Quote(name) + "]." + verb
			info, ok := xp.(map[string]any)
			if !ok {
				o.add("discovery_invalid", "openapi", n, at+".x-payment-info")
				continue
			}
			if (verb != "get" && verb != "post") || routeParam(name) || !strings.HasPrefix(name, "/") {
				o.add("listing_not_linted", "openapi", n, at)
				continue
			}
			u := *b
			u.Path = strings.TrimSuffix(b.Path, "/") + name
			u.RawPath, u.RawQuery, u.Fragment = "", "", ""
			l := listed{leg: "openapi", i: n, at: at, urlAt: at, u: u.String(), method: strings.ToUpper(verb)}
			text, where, has := "", "", false
			if pm, _ := info["pricingMode"].(string); pm == "fixed" {
				text, _ = scalarText(info["price"])
				where, has = "price", true
			} else if po, ok := info["price"].(map[string]any); ok {
				mode, _ := po["mode"].(string)
				cur, _ := po["currency"].(string)
				if mode == "fixed" && (cur == "" || strings.EqualFold(cur, "usd")) {
					text, _ = scalarText(po["amount"])
					where, has = "price.amount", true
				}
			}
			if has {
				l.priceAt = at + ".x-payment-info." + where
				if atomic, ok := dollarsToAtomic(text); ok {
					l.price, l.priced = atomic, true
				} else {
					o.add("discovery_invalid", "openapi", n, l.priceAt)
				}
			}
			out = append(out, l)
		}
	}
	return out
}

func scalarText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return string(t), true
	}
	return "", false
}

// dollarsToAtomic: a USD decimal in units of a 6-decimal token, as a
// decimal integer without leading zeros.
func dollarsToAtomic(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if !priceRE.MatchString(s) || s == "." {
		return "", false
	}
	if whole, _, _ := strings.Cut(s, "."); len(whole) > 30 {
		return "", false
	}
	t := s
	if strings.HasPrefix(t, ".") {
		t = "0" + t
	}
	if strings.HasSuffix(t, ".") {
		t += "0"
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return "", false
	}
	r.Mul(r, big.NewRat(1000000, 1))
	if !r.IsInt() {
		return "", false
	}
	return r.Num().String(), true
}

var priceRE = regexp.MustCompile(`^[0-9]*(\.[0-9]*)?$`)

// liveOffers: the terms of the leg a client pays by (the v2 header that
// decodes with x402Version 2, else a body of x402Version 1 or 2), v1 names
// read as v2's (maxAmountRequired as amount, a known legacy network as its
// CAIP-2 id, an unknown one as "").
func liveOffers(c outCapture) ([][5]string, bool) {
	var hv string
	hasH := false
	for k, v := range c.Headers {
		if strings.EqualFold(k, "PAYMENT-REQUIRED") {
			hv, hasH = v, true
		}
	}
	var root map[string]any
	version := 0
	if h, ok := decodeHeader(hv); hasH && ok && versionOf(h) == 2 {
		root, version = h, 2
	} else if x, ok := parseOne(bodyOf(c)); ok {
		if m, isObj := x.(map[string]any); isObj && (versionOf(m) == 1 || versionOf(m) == 2) {
			root, version = m, versionOf(m)
		}
	}
	if root == nil {
		return nil, false
	}
	arr, _ := root["accepts"].([]any)
	out := make([][5]string, len(arr))
	for i, a := range arr {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		out[i][0], _ = sget(m, "scheme")
		out[i][3], _ = sget(m, "asset")
		out[i][4], _ = sget(m, "payTo")
		if version == 1 {
			out[i][2], _ = sget(m, "maxAmountRequired")
			n, _ := sget(m, "network")
			out[i][1] = legacy[n]
		} else {
			out[i][2], _ = sget(m, "amount")
			out[i][1], _ = sget(m, "network")
		}
	}
	return out, true
}

func sameNumber(a, b string) bool {
	if digitsRE.MatchString(a) && digitsRE.MatchString(b) {
		x, _ := new(big.Int).SetString(a, 10)
		y, _ := new(big.Int).SetString(b, 10)
		return x.Cmp(y) == 0
	}
	return a == b
}

func (o *originJudge) compare(l listed, c outCapture) {
	live, ok := liveOffers(c)
	if !ok {
		return
	}
	if l.hasAcc {
		if len(l.terms) != len(live) {
			o.add("listing_drift", l.leg, l.i, l.at+".accepts")
		}
		for k := 0; k < len(l.terms) && k < len(live); k++ {
			a, b := l.terms[k], live[k]
			pre := l.at + ".accepts[" + strconv.Itoa(k) + "]."
			for x, f := range []string{"scheme", "network", "", "asset", "payTo"} {
				if f == "" || a[x] == "" || b[x] == "" {
					continue
				}
				eq := a[x] == b[x]
				if x >= 3 && famOf(b[1]) == "evm" {
					eq = strings.EqualFold(a[x], b[x])
				}
				if !eq {
					o.add("listing_drift", l.leg, l.i, pre+f)
				}
			}
			if a[2] != "" && b[2] != "" && !sameNumber(a[2], b[2]) {
				o.add("listing_price_mismatch", l.leg, l.i, pre+"amount")
			}
		}
	}
	if l.priced {
		want, _ := new(big.Int).SetString(l.price, 10)
		for _, t := range live {
			if digitsRE.MatchString(t[2]) {
				got, _ := new(big.Int).SetString(t[2], 10)
				if got.Cmp(want) == 0 {
					return
				}
			}
		}
		o.add("listing_price_mismatch", l.leg, l.i, l.priceAt)
	}
}
