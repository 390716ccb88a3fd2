package lint

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/exchangerebel/payability/internal/x402"
)

// The discovery documents an origin lint reads, each its own leg: where its
// findings were read.
const (
	// LegWellKnown is /.well-known/x402: x402scan's fan-out list
	// ({"version": 1, "resources": [URL, ...]}, x402scan docs/DISCOVERY.md B).
	LegWellKnown Leg = "well-known"
	// LegManifest is /.well-known/x402.json: the x402 discovery manifest
	// ({"x402Version": 2, "items": [...]}, specs/extensions/well-known-discovery.md).
	LegManifest Leg = "manifest"
	// LegOpenAPI is the OpenAPI document named by --openapi, its paid
	// operations those with x-payment-info (x402scan docs/DISCOVERY.md C).
	LegOpenAPI Leg = "openapi"
	// LegOrigin is the origin as a whole (no document could be read).
	LegOrigin Leg = "origin"
)

// WellKnownPaths are the discovery documents an origin lint always reads,
// in this order.
var WellKnownPaths = []struct {
	Leg  Leg
	Path string
}{{LegWellKnown, "/.well-known/x402"}, {LegManifest, "/.well-known/x402.json"}}

// MaxOriginResources bounds the resources one origin lint fetches: the
// first this many distinct (URL, method) pairs in document order
// (well-known, manifest, openapi; each in its own order). The documents
// decide how many resources there are, never how much work a lint does.
const MaxOriginResources = 32

// MethodFallback is a listing's method when the document names none
// (/.well-known/x402): GET, then POST of {} when GET answers 404 or 405,
// as x402scan's method-aware probing does (docs/DISCOVERY.md, How x402scan
// Registers).
const MethodFallback = ""

// Listing is one resource a discovery document names. It holds fetched
// values (the URL, listed terms, the example body) in memory only: a report
// names a listing by its leg, index and field path; only the URL of a
// listing that is on the origin reaches a report, as the endpoint linted.
type Listing struct {
	Leg   Leg
	Index int    // position in the document's own list (resources, items, paid operations)
	Path  string // field path of the listing: resources[2], items[0], paths["/a"].post
	URL   string
	// Method is GET or POST, or MethodFallback when the document names none.
	Method string
	Body   []byte // the POST body to send (the document's example, or {})
	// Accepts are the listed payment requirements (manifest items), nil when
	// the document lists none.
	Accepts []Terms
	// Price is a listed fixed USD price in atomic units of a 6-decimal
	// stablecoin (OpenAPI x-payment-info); PriceOK says one was listed.
	Price     string
	PriceOK   bool
	PricePath string
}

// Document limits: an example body sent to a listed resource is at most
// this long (like lint's --body).
const maxListingBody = 65536

// ParseDiscovery reads one discovery document of leg (its body, already
// fetched within the fetch limits) for origin. It returns the listings it
// names and the document's own findings (discovery_invalid at the first
// shape violation of a listing or of the document). It never fails.
func ParseDiscovery(leg Leg, origin string, body []byte) ([]Listing, []Finding) {
	g := &grader{}
	base, _ := url.Parse(origin)
	var ls []Listing
	v, ok := x402.DecodeJSON(body)
	root, isObj := v.(map[string]any)
	if !ok || !isObj {
		g.add(ruleDiscoveryInvalid, leg, nil, "")
		return nil, g.findings
	}
	switch leg {
	case LegWellKnown:
		ls = parseWellKnown(g, root)
	case LegManifest:
		ls = parseManifest(g, root)
	case LegOpenAPI:
		ls = parseOpenAPI(g, root, base)
	}
	return ls, g.findings
}

func parseWellKnown(g *grader, root map[string]any) []Listing {
	arr, ok := root["resources"].([]any)
	if !ok {
		g.add(ruleDiscoveryInvalid, LegWellKnown, nil, "resources")
		return nil
	}
	var ls []Listing
	for i, e := range arr {
		p := "resources[" + strconv.Itoa(i) + "]"
		s, ok := e.(string)
		if !ok {
			g.add(ruleDiscoveryInvalid, LegWellKnown, idx(i), p)
			continue
		}
		ls = append(ls, Listing{Leg: LegWellKnown, Index: i, Path: p, URL: s, Method: MethodFallback, Body: DefaultBody()})
	}
	return ls
}

func parseManifest(g *grader, root map[string]any) []Listing {
	if n, ok := root["x402Version"].(json.Number); !ok || n.String() != "2" {
		g.add(ruleDiscoveryInvalid, LegManifest, nil, "x402Version")
		return nil
	}
	arr, ok := root["items"].([]any)
	if !ok {
		g.add(ruleDiscoveryInvalid, LegManifest, nil, "items")
		return nil
	}
	var ls []Listing
	for i, e := range arr {
		p := "items[" + strconv.Itoa(i) + "]"
		item, ok := e.(map[string]any)
		if !ok {
			g.add(ruleDiscoveryInvalid, LegManifest, idx(i), p)
			continue
		}
		res, _ := item["resource"].(map[string]any)
		u, ok := res["url"].(string)
		if !ok {
			g.add(ruleDiscoveryInvalid, LegManifest, idx(i), p+".resource.url")
			continue
		}
		l := Listing{Leg: LegManifest, Index: i, Path: p, URL: u, Method: "GET", Body: DefaultBody()}
		if t, ok := item["type"].(string); ok && t != "http" {
			g.add(ruleListingNotLinted, LegManifest, idx(i), p+".type")
			continue
		}
		in, _ := item["input"].(map[string]any)
		if rt, ok := in["routeTemplate"].(string); ok && templated(rt) || templated(rawPath(u)) {
			g.add(ruleListingNotLinted, LegManifest, idx(i), p+".input.routeTemplate")
			continue
		}
		if m, ok := in["method"].(string); ok {
			switch strings.ToUpper(m) {
			case "GET":
			case "POST":
				l.Method = "POST"
				if b, ok := exampleBody(in["body"]); ok {
					l.Body = b
				}
			default:
				g.add(ruleListingNotLinted, LegManifest, idx(i), p+".input.method")
				continue
			}
		}
		if raw, present := item["accepts"]; present {
			acc, ok := raw.([]any)
			if !ok {
				g.add(ruleDiscoveryInvalid, LegManifest, idx(i), p+".accepts")
				continue
			}
			l.Accepts = []Terms{}
			for j := range acc {
				d := &Document{Accepts: acc}
				t, ok := d.EntryTerms(j, 2)
				if !ok {
					g.add(ruleDiscoveryInvalid, LegManifest, idx(i), p+".accepts["+strconv.Itoa(j)+"]")
				}
				l.Accepts = append(l.Accepts, t)
			}
		}
		ls = append(ls, l)
	}
	return ls
}

// openAPIMethods are the operations of a path item, in the order they are
// listed; lint sends GET and POST only.
var openAPIMethods = []string{"get", "post", "put", "patch", "delete", "head", "options", "trace"}

func parseOpenAPI(g *grader, root map[string]any, origin *url.URL) []Listing {
	if _, ok := root["openapi"].(string); !ok {
		g.add(ruleDiscoveryInvalid, LegOpenAPI, nil, "openapi")
		return nil
	}
	paths, ok := root["paths"].(map[string]any)
	if !ok {
		g.add(ruleDiscoveryInvalid, LegOpenAPI, nil, "paths")
		return nil
	}
	base := origin
	if srv, ok := root["servers"].([]any); ok && len(srv) > 0 {
		s, _ := srv[0].(map[string]any)
		su, _ := s["url"].(string)
		u, err := url.Parse(su)
		if err != nil || su == "" || origin == nil {
			g.add(ruleDiscoveryInvalid, LegOpenAPI, nil, "servers[0].url")
			return nil
		}
		base = origin.ResolveReference(u)
	}
	if base == nil {
		return nil
	}
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ls []Listing
	n := 0
	for _, k := range keys {
		item, _ := paths[k].(map[string]any)
		for _, m := range openAPIMethods {
			op, _ := item[m].(map[string]any)
			raw, present := op["x-payment-info"]
			if !present {
				continue
			}
			i := n
			n++
			p := "paths[" + strconv.Quote(k) + "]." + m
			pi, ok := raw.(map[string]any)
			if !ok {
				g.add(ruleDiscoveryInvalid, LegOpenAPI, idx(i), p+".x-payment-info")
				continue
			}
			if m != "get" && m != "post" || templated(k) || !strings.HasPrefix(k, "/") {
				g.add(ruleListingNotLinted, LegOpenAPI, idx(i), p)
				continue
			}
			u := *base
			u.Path = strings.TrimSuffix(base.Path, "/") + k
			u.RawPath, u.RawQuery, u.Fragment = "", "", ""
			l := Listing{Leg: LegOpenAPI, Index: i, Path: p, URL: u.String(), Method: strings.ToUpper(m), Body: DefaultBody()}
			if m == "post" {
				rb, _ := op["requestBody"].(map[string]any)
				ct, _ := rb["content"].(map[string]any)
				js, _ := ct["application/json"].(map[string]any)
				if b, ok := exampleBody(js["example"]); ok {
					l.Body = b
				}
			}
			if price, path, ok := listedPrice(pi); ok {
				l.PricePath = p + ".x-payment-info." + path
				l.Price, l.PriceOK = usdAtomic(price)
				if !l.PriceOK {
					g.add(ruleDiscoveryInvalid, LegOpenAPI, idx(i), l.PricePath)
				}
			}
			ls = append(ls, l)
		}
	}
	return ls
}

// DefaultBody is what a POST listing sends when its document gives no
// example body: {} (as lint --method POST does).
func DefaultBody() []byte { return []byte("{}") }

// exampleBody is a listed example body as JSON to send: an object, at most
// maxListingBody bytes.
func exampleBody(v any) ([]byte, bool) {
	if _, ok := v.(map[string]any); !ok {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxListingBody {
		return nil, false
	}
	return b, true
}

// templated reports whether a path has route parameters (:name or {name}):
// such a resource cannot be called without values the document does not give.
func templated(p string) bool {
	return strings.ContainsAny(p, "{}") || strings.Contains(p, "/:")
}

// rawPath is the path of a listed URL ("" when it does not parse).
func rawPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// listedPrice reads a fixed USD price from x-payment-info: the flat form
// (pricingMode "fixed" with price, x402scan docs/DISCOVERY.md C) or the
// object form (price {mode "fixed", currency "USD", amount}). Other modes
// (range, quote) list no single price.
func listedPrice(pi map[string]any) (string, string, bool) {
	if mode, _ := pi["pricingMode"].(string); mode == "fixed" {
		if s, ok := scalar(pi["price"]); ok {
			return s, "price", true
		}
		return "", "price", true
	}
	if p, ok := pi["price"].(map[string]any); ok {
		mode, _ := p["mode"].(string)
		cur, _ := p["currency"].(string)
		if mode == "fixed" && (cur == "" || strings.EqualFold(cur, "USD")) {
			s, _ := scalar(p["amount"])
			return s, "price.amount", true
		}
	}
	return "", "", false
}

func scalar(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	}
	return "", false
}

// usdAtomic converts a USD decimal price ("0.01", "$0.01", 0.01) to atomic
// units of a 6-decimal stablecoin ("10000"), as x402's reference
// middleware converts a "$0.01" price to USDC. ok is false for a price that
// is not a non-negative decimal with at most 6 fractional digits.
func usdAtomic(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || !digitsOrEmpty(whole) || !digitsOrEmpty(frac) || len(whole) > 30 {
		return "", false
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 6 {
		return "", false
	}
	return trimZeros(whole + frac + strings.Repeat("0", 6-len(frac))), true
}

func digitsOrEmpty(s string) bool { return s == "" || digits(s) }
