package monitor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/exchangerebel/payability/internal/target"
)

// The discovery catalogs a monitor imports endpoints from, read by pure
// parsers: a facilitator's Bazaar discovery list (x402 specs/extensions/
// bazaar.md, "Optional Discovery Endpoints": GET /discovery/resources with
// type, limit and offset), an origin's manifest (specs/extensions/
// discovery.md and well-known-discovery.md: /.well-known/x402 and
// /.well-known/x402.json) and a plain list of URLs. An import keeps of a
// listed resource its URL and method only: descriptions, prices, schemas and
// every other field of a catalog are never decoded into what is stored.

// Source kinds.
const (
	KindBazaar    = "bazaar"
	KindWellKnown = "wellknown"
	KindList      = "list"
)

func validKind(k string) bool { return k == KindBazaar || k == KindWellKnown || k == KindList }

// Limits of a catalog read.
const (
	// MaxCatalogBytes bounds one catalog response (a page, a manifest, a
	// list); one byte more is a refused read.
	MaxCatalogBytes = 4 << 20
	// BazaarPageSize is the limit each page asks for, MaxPageItems the most
	// items a page may carry, MaxCatalogPages the most pages one read
	// follows.
	BazaarPageSize  = 100
	MaxPageItems    = 1000
	MaxCatalogPages = 2000
)

// Why a listed resource is not imported: a closed set (counted per read).
const (
	SkipPolicy    = "url_policy"     // refused by the target URL policy
	SkipGuard     = "address_guard"  // a literal address the guard refuses
	SkipMethod    = "method"         // not GET or POST
	SkipType      = "type"           // not an HTTP resource (an MCP tool)
	SkipTemplate  = "route_template" // a path with :param segments
	SkipOffOrigin = "off_origin"     // a manifest entry off the manifest's domain
	SkipDuplicate = "duplicate"      // listed twice in one read
)

// CatalogEntry is what an import keeps of a listed resource.
type CatalogEntry struct {
	URL    string // as CanonicalURL writes it
	Method string // GET or POST
}

// ID is the entry's endpoint id: derived from its method and URL alone, so
// every source and every instance derives the same one (see DeriveID).
func (c CatalogEntry) ID() string { return DeriveID(c.Method, c.URL) }

// DeriveID is the id of an imported endpoint: its host (lower case, other
// characters as '-', at most 40) and the first 12 hex digits of SHA-256 over
// "METHOD URL". It is a valid store id.
func DeriveID(method, rawURL string) string {
	host := "x"
	if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	var b strings.Builder
	for _, c := range []byte(strings.ToLower(host)) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
		}
	}
	h := strings.TrimLeft(b.String(), ".-")
	if len(h) > 40 {
		h = h[:40]
	}
	if h == "" {
		h = "x"
	}
	sum := sha256.Sum256([]byte(method + " " + rawURL))
	return h + "-" + hex.EncodeToString(sum[:6])
}

// CanonicalURL is a listed URL as it is kept and hashed: the scheme and host
// in lower case, no fragment; ok is false when it does not parse.
func CanonicalURL(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// GuardURL applies to a URL what can be known of the address guard without
// resolving or dialling it: a literal address the guard refuses (and the
// localhost names) is refused unless allowPrivate. A name that resolves to
// such an address is refused at dial time by the guarded client.
func GuardURL(raw string, allowPrivate bool) bool {
	if allowPrivate {
		return true
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return target.AddressAllowed(ip)
	}
	return true
}

// entryOf checks one listed resource: its URL by the policy and the guard,
// its method and type. skip is "" when it is imported.
func entryOf(rawURL, method, typ string, allowPrivate bool) (CatalogEntry, string) {
	if typ != "" && typ != "http" {
		return CatalogEntry{}, SkipType
	}
	m := strings.ToUpper(method)
	if m == "" {
		m = "GET"
	}
	if m != "GET" && m != "POST" {
		return CatalogEntry{}, SkipMethod
	}
	u, ok := CanonicalURL(rawURL)
	if !ok || target.CheckURL(u) != nil {
		return CatalogEntry{}, SkipPolicy
	}
	if !GuardURL(u, allowPrivate) {
		return CatalogEntry{}, SkipGuard
	}
	if p, err := url.Parse(u); err == nil {
		for _, seg := range strings.Split(p.Path, "/") {
			if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "[") {
				return CatalogEntry{}, SkipTemplate
			}
		}
	}
	return CatalogEntry{URL: u, Method: m}, ""
}

// CatalogRead is what one catalog response gave: the entries to import and
// how many were skipped, by reason.
type CatalogRead struct {
	Entries []CatalogEntry
	Skipped map[string]int
}

func (r *CatalogRead) add(e CatalogEntry, skip string) {
	if skip == "" {
		r.Entries = append(r.Entries, e)
		return
	}
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Skipped[skip]++
}

// CatalogError is a catalog response refused: a code from a closed set
// (and, for a bad status, the status). It never quotes the response.
type CatalogError struct {
	Code   string
	Status int
	Page   int
}

func (e *CatalogError) Error() string {
	s := "catalog: " + e.Code
	if e.Status != 0 {
		s += " (status " + strconv.Itoa(e.Status) + ")"
	}
	if e.Page != 0 {
		s += " (page " + strconv.Itoa(e.Page) + ")"
	}
	return s
}

// Catalog error codes.
const (
	CatalogNotJSON      = "not_json"
	CatalogTooManyItems = "too_many_items"
	CatalogFetchFailed  = "fetch_failed"
	CatalogStatus       = "bad_status"
	CatalogOverCap      = "over_cap"
	CatalogTooManyPages = "too_many_pages"
	CatalogTooMany      = "too_many_entries"
	CatalogRefusedURL   = "refused_url"
)

// A resource's URL is a string or an object with a url (the manifest's
// items); its method may be in the item, its input, the bazaar extension's
// info, or a v1 entry's outputSchema.
type resourceRef struct{ URL string }

func (r *resourceRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.URL)
	}
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		r.URL = o.URL
	}
	return nil // null or another type: no URL
}

type methodInput struct {
	Type   string `json:"type"`
	Method string `json:"method"`
}

type catalogItem struct {
	Resource resourceRef  `json:"resource"`
	URL      string       `json:"url"`
	Type     string       `json:"type"`
	Method   string       `json:"method"`
	Input    *methodInput `json:"input"`
	Accepts  []struct {
		OutputSchema *struct {
			Input *methodInput `json:"input"`
		} `json:"outputSchema"`
	} `json:"accepts"`
	Extensions *struct {
		Bazaar *struct {
			Info *struct {
				Input *methodInput `json:"input"`
			} `json:"info"`
		} `json:"bazaar"`
	} `json:"extensions"`
}

// urlMethodType reads the item's URL, method and type.
func (it catalogItem) urlMethodType() (string, string, string) {
	u := it.Resource.URL
	if u == "" {
		u = it.URL
	}
	method, typ := it.Method, it.Type
	inputs := []*methodInput{it.Input}
	if it.Extensions != nil && it.Extensions.Bazaar != nil && it.Extensions.Bazaar.Info != nil {
		inputs = append(inputs, it.Extensions.Bazaar.Info.Input)
	}
	for _, a := range it.Accepts {
		if a.OutputSchema != nil {
			inputs = append(inputs, a.OutputSchema.Input)
		}
	}
	for _, in := range inputs {
		if in == nil {
			continue
		}
		if method == "" {
			method = in.Method
		}
		if typ == "" && in.Type != "" && in.Type != "http" {
			typ = in.Type
		}
	}
	return u, method, typ
}

// BazaarPage is one page of a Bazaar discovery list.
type BazaarPage struct {
	CatalogRead
	Items int // items on the page, imported or not
	// Total is the pagination's total when the page gives one (-1 not).
	Total int
}

// ParseBazaarPage reads one page of GET /discovery/resources: {"items":
// [...], "pagination": {"limit", "offset", "total"}} as facilitators answer
// (the spec leaves the shape to them; the search endpoint's "resources" is
// read too).
func ParseBazaarPage(body []byte, allowPrivate bool) (BazaarPage, error) {
	var doc struct {
		Items      []json.RawMessage `json:"items"`
		Resources  []json.RawMessage `json:"resources"`
		Pagination *struct {
			Total *int `json:"total"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return BazaarPage{}, &CatalogError{Code: CatalogNotJSON}
	}
	items := doc.Items
	if items == nil {
		items = doc.Resources
	}
	if len(items) > MaxPageItems {
		return BazaarPage{}, &CatalogError{Code: CatalogTooManyItems}
	}
	p := BazaarPage{Items: len(items), Total: -1}
	if doc.Pagination != nil && doc.Pagination.Total != nil && *doc.Pagination.Total >= 0 {
		p.Total = *doc.Pagination.Total
	}
	for _, raw := range items {
		var it catalogItem
		if json.Unmarshal(raw, &it) != nil {
			p.add(CatalogEntry{}, SkipPolicy)
			continue
		}
		u, m, typ := it.urlMethodType()
		p.add(entryOf(u, m, typ, allowPrivate))
	}
	return p, nil
}

// ParseWellKnown reads an origin's manifest (manifest is its own URL): the
// discovery extension's "resources" (bare pointers, {url, method}) and the
// well-known manifest's "items". An entry off the manifest's domain (not the
// host or a subdomain of it), or not https when the manifest is, is skipped:
// the discovery extension forbids dereferencing it.
func ParseWellKnown(body []byte, manifest string, allowPrivate bool) (CatalogRead, error) {
	var doc struct {
		Resources []json.RawMessage `json:"resources"`
		Items     []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return CatalogRead{}, &CatalogError{Code: CatalogNotJSON}
	}
	if len(doc.Resources)+len(doc.Items) > MaxPageItems {
		return CatalogRead{}, &CatalogError{Code: CatalogTooManyItems}
	}
	mu, _ := url.Parse(manifest)
	var r CatalogRead
	for _, raw := range append(doc.Resources, doc.Items...) {
		var it catalogItem
		if err := json.Unmarshal(raw, &it); err != nil {
			// A bare string pointer.
			var s string
			if json.Unmarshal(raw, &s) != nil {
				r.add(CatalogEntry{}, SkipPolicy)
				continue
			}
			it = catalogItem{URL: s}
		}
		u, m, typ := it.urlMethodType()
		e, skip := entryOf(u, m, typ, allowPrivate)
		if skip == "" && !sameSite(mu, e.URL) {
			skip = SkipOffOrigin
		}
		r.add(e, skip)
	}
	return r, nil
}

// sameSite reports whether u is on manifest's host or a subdomain of it,
// over https or the manifest's own scheme.
func sameSite(manifest *url.URL, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || manifest == nil {
		return false
	}
	if u.Scheme != "https" && u.Scheme != manifest.Scheme {
		return false
	}
	h, mh := u.Hostname(), strings.ToLower(manifest.Hostname())
	return h == mh || strings.HasSuffix(h, "."+mh)
}

// ParseList reads a list of URLs: a JSON array of URLs or of {url, method}
// objects, or text with one URL a line (blank lines and lines starting
// with # are ignored).
func ParseList(body []byte, allowPrivate bool) (CatalogRead, error) {
	var r CatalogRead
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return r, &CatalogError{Code: CatalogNotJSON}
		}
		if len(items) > MaxListEntries {
			return r, &CatalogError{Code: CatalogTooManyItems}
		}
		for _, raw := range items {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				r.add(entryOf(s, "", "", allowPrivate))
				continue
			}
			var it catalogItem
			if json.Unmarshal(raw, &it) != nil {
				r.add(CatalogEntry{}, SkipPolicy)
				continue
			}
			u, m, typ := it.urlMethodType()
			r.add(entryOf(u, m, typ, allowPrivate))
		}
		return r, nil
	}
	n := 0
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if n++; n > MaxListEntries {
			return CatalogRead{}, &CatalogError{Code: CatalogTooManyItems}
		}
		r.add(entryOf(line, "", "", allowPrivate))
	}
	return r, nil
}

// MaxListEntries bounds a list (and so an import from it).
const MaxListEntries = 100000
