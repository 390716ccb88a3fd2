package lint

import (
	"net/url"
	"strconv"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
)

// DocumentCapture is one discovery document as fetched: its leg, the URL it
// was read from (the origin's well-known path, or the --openapi URL the user
// named) and the response.
type DocumentCapture struct {
	Leg     Leg
	URL     string
	Capture capture.Capture
	// Named: the user named this document (--openapi); when it cannot be
	// read that is discovery_missing on its own leg.
	Named bool
}

// Target is one request an origin lint makes: a listed resource and its
// method (MethodFallback: GET, then POST when GET answers 404 or 405) and
// the body a POST sends (the first listing's, when several documents list
// the same URL and method). A target is named by its URL and method.
type Target struct {
	URL    string
	Method string
	Body   []byte
}

// LiveCapture is the response a Target got; Method is the method whose
// answer it is (GET or POST).
type LiveCapture struct {
	Target  Target
	Method  string
	Capture capture.Capture
}

// OriginInput is what an origin lint grades: the origin the user named, the
// documents fetched from it, the listed resources' responses and the check
// time.
type OriginInput struct {
	Origin    string
	Documents []DocumentCapture
	Live      []LiveCapture
	Now       time.Time
}

// DocumentSummary says what became of one discovery document: whether it
// answered 200 and was read, and how many resources it lists.
type DocumentSummary struct {
	Leg      Leg    `json:"leg"`
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Read     bool   `json:"read"`
	Listings int    `json:"listings"`
}

// ListingRef names one listing of a resource: its document and index.
type ListingRef struct {
	Leg   Leg    `json:"leg"`
	Entry int    `json:"entry"`
	Field string `json:"field"`
}

// ResourceResult is one listed resource linted as `lint URL` does, with the
// listings that name it.
type ResourceResult struct {
	URL    string       `json:"url"`
	Method string       `json:"method"`
	Listed []ListingRef `json:"listed"`
	Result Result       `json:"result"`
}

// OriginResult is what an origin lint decided: the documents, the document
// findings (legs origin, well-known, manifest, openapi) and every linted
// resource. Conforms is true when no finding of either is an error.
type OriginResult struct {
	Documents []DocumentSummary `json:"documents"`
	Findings  []Finding         `json:"findings"`
	Resources []ResourceResult  `json:"resources"`
	Conforms  bool              `json:"conforms"`
}

// OriginPlan is the documents read and the requests to make.
type OriginPlan struct {
	Documents []DocumentSummary
	Listings  []Listing
	Targets   []Target
	findings  []Finding
	// linted maps a listing (by leg and index) to its target's index; a
	// listing that is not fetched is absent.
	linted map[ListingRef]int
}

// PlanOrigin reads the fetched documents and decides which listed resources
// to request: each distinct (URL, method) on the origin once, the first
// MaxOriginResources of them in document order. It is pure.
func PlanOrigin(origin string, docs []DocumentCapture) OriginPlan {
	g := &grader{}
	p := OriginPlan{Documents: []DocumentSummary{}, linted: map[ListingRef]int{}}
	o, _ := url.Parse(origin)
	read := 0
	for _, d := range docs {
		s := DocumentSummary{Leg: d.Leg, URL: d.URL, Status: d.Capture.Status}
		if !d.Capture.Usable() || d.Capture.Status != 200 {
			if d.Named {
				g.add(ruleDiscoveryMissing, d.Leg, nil, "")
			}
			p.Documents = append(p.Documents, s)
			continue
		}
		read++
		s.Read = true
		ls, fs := ParseDiscovery(d.Leg, origin, d.Capture.Body)
		g.findings = append(g.findings, fs...)
		s.Listings = len(ls)
		p.Documents = append(p.Documents, s)
		seen := map[string]bool{}
		for _, l := range ls {
			ref := ListingRef{Leg: l.Leg, Entry: l.Index, Field: l.Path}
			field := l.Path
			if l.Leg == LegManifest {
				field += ".resource.url"
			}
			u, ok := listedURL(l.URL)
			if !ok {
				g.add(ruleDiscoveryInvalid, l.Leg, idx(l.Index), field)
				continue
			}
			if o == nil || !sameOrigin(o, u) {
				g.add(ruleListingOffOrigin, l.Leg, idx(l.Index), field)
				continue
			}
			key := l.Method + " " + u.String()
			if seen[key] {
				g.add(ruleDiscoveryDuplicate, l.Leg, idx(l.Index), field)
				continue
			}
			seen[key] = true
			l.URL = u.String()
			p.Listings = append(p.Listings, l)
			ti := -1
			for i, t := range p.Targets {
				if t.URL == l.URL && t.Method == l.Method {
					ti = i
				}
			}
			if ti < 0 {
				if len(p.Targets) == MaxOriginResources {
					if !hasRule(g.findings, ruleResourcesCapped) {
						g.add(ruleResourcesCapped, l.Leg, idx(l.Index), l.Path)
					}
					continue
				}
				ti = len(p.Targets)
				p.Targets = append(p.Targets, Target{URL: l.URL, Method: l.Method, Body: l.Body})
			}
			p.linted[ref] = ti
		}
	}
	if read == 0 && !hasRule(g.findings, ruleDiscoveryMissing) {
		g.add(ruleDiscoveryMissing, LegOrigin, nil, "")
	}
	p.findings = g.findings
	return p
}

func hasRule(fs []Finding, id string) bool {
	for _, f := range fs {
		if f.Rule == id {
			return true
		}
	}
	return false
}

// listedURL parses a listed resource URL: absolute http or https with a
// host and no userinfo.
func listedURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, false
	}
	u.Fragment = ""
	return u, true
}

// LintOrigin grades an origin: the plan's document findings, each listed
// resource's response linted as Lint does, and the listing rules (a listed
// resource answers 402; its listed terms and price are the live ones). It
// is pure.
func LintOrigin(in OriginInput) OriginResult {
	plan := PlanOrigin(in.Origin, in.Documents)
	g := &grader{findings: append([]Finding{}, plan.findings...)}
	res := OriginResult{Documents: plan.Documents, Resources: []ResourceResult{}}
	live := make([]*LiveCapture, len(plan.Targets))
	for i := range in.Live {
		for ti, t := range plan.Targets {
			if live[ti] == nil && in.Live[i].Target.URL == t.URL && in.Live[i].Target.Method == t.Method {
				live[ti] = &in.Live[i]
			}
		}
	}
	results := make([]Result, len(plan.Targets))
	for ti, t := range plan.Targets {
		rr := ResourceResult{URL: t.URL, Method: t.Method, Listed: []ListingRef{}}
		var c capture.Capture
		if live[ti] != nil {
			c = live[ti].Capture
			rr.Method = live[ti].Method
		}
		if rr.Method == MethodFallback {
			rr.Method = "GET"
		}
		results[ti] = Lint(Input{URL: t.URL, Method: rr.Method, Capture: c, Now: in.Now})
		rr.Result = results[ti]
		res.Resources = append(res.Resources, rr)
	}
	for _, l := range plan.Listings {
		ref := ListingRef{Leg: l.Leg, Entry: l.Index, Field: l.Path}
		ti, ok := plan.linted[ref]
		if !ok {
			continue
		}
		res.Resources[ti].Listed = append(res.Resources[ti].Listed, ref)
		var c capture.Capture
		if live[ti] != nil {
			c = live[ti].Capture
		}
		if !c.Usable() || c.Status != 402 {
			g.add(ruleListedNot402, l.Leg, idx(l.Index), l.Path)
			continue
		}
		g.drift(l, c)
	}
	res.Findings = orderedDocs(g.findings)
	res.Conforms = true
	for _, f := range res.Findings {
		if f.Severity == Error {
			res.Conforms = false
		}
	}
	for _, r := range res.Resources {
		if !r.Result.Conforms {
			res.Conforms = false
		}
	}
	return res
}

// liveTerms returns the entries of the leg a standard client pays by: the
// v2 header when it decodes with x402Version 2, else a body with
// x402Version 1 or 2.
func liveTerms(c capture.Capture) ([]Terms, bool) {
	ch := Decode(c)
	var d *Document
	switch {
	case ch.Header != nil && ch.HeaderDecodable && ch.Header.Version == 2:
		d = ch.Header
	case ch.Body != nil && (ch.Body.Version == 1 || ch.Body.Version == 2):
		d = ch.Body
	default:
		return nil, false
	}
	ts := make([]Terms, len(d.Accepts))
	for i := range d.Accepts {
		ts[i], _ = d.EntryTerms(i, d.Version)
	}
	return ts, true
}

// drift compares a listing with the live challenge of its resource: the
// listed accepts entry by entry (count, scheme, network, asset, payTo as
// listing_drift; amount as listing_price_mismatch), and a listed USD price
// with the live amounts (listing_price_mismatch when no entry charges it).
// Values are compared, never reported: findings carry field paths only.
func (g *grader) drift(l Listing, c capture.Capture) {
	live, ok := liveTerms(c)
	if !ok {
		return
	}
	if l.Accepts != nil {
		if len(l.Accepts) != len(live) {
			g.add(ruleListingDrift, l.Leg, idx(l.Index), l.Path+".accepts")
		}
		for j := 0; j < min(len(l.Accepts), len(live)); j++ {
			a, b := l.Accepts[j], live[j]
			p := l.Path + ".accepts[" + strconv.Itoa(j) + "]."
			fam := FamilyOf(b.Network)
			for _, t := range []struct {
				field string
				a, b  string
				same  func(a, b string) bool
			}{
				{"scheme", a.Scheme, b.Scheme, func(a, b string) bool { return a == b }},
				{"network", a.Network, b.Network, func(a, b string) bool { return a == b }},
				{"asset", a.Asset, b.Asset, func(a, b string) bool { return sameAddress(fam, a, b) }},
				{"payTo", a.PayTo, b.PayTo, func(a, b string) bool { return sameAddress(fam, a, b) }},
			} {
				if t.a != "" && t.b != "" && !t.same(t.a, t.b) {
					g.add(ruleListingDrift, l.Leg, idx(l.Index), p+t.field)
				}
			}
			if a.Amount != "" && b.Amount != "" && !sameAmount(a.Amount, b.Amount) {
				g.add(rulePriceMismatch, l.Leg, idx(l.Index), p+"amount")
			}
		}
	}
	if l.PriceOK {
		for _, t := range live {
			if digits(t.Amount) && trimZeros(t.Amount) == l.Price {
				return
			}
		}
		g.add(rulePriceMismatch, l.Leg, idx(l.Index), l.PricePath)
	}
}

var docLegOrder = map[Leg]int{LegOrigin: 0, LegWellKnown: 1, LegManifest: 2, LegOpenAPI: 3}

// orderedDocs sorts document findings by leg (origin, well-known, manifest,
// openapi), then by listing; within that, in the order the rules ran.
func orderedDocs(fs []Finding) []Finding { return orderedBy(fs, docLegOrder) }
