package monitor

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// CatalogFetcher reads a catalog: the guarded target client (built with
// BodyCap MaxCatalogBytes), so a catalog is fetched under the same URL
// policy, address guard and limits as a target.
type CatalogFetcher interface {
	Get(ctx context.Context, url string) capture.Capture
}

// NewCatalogFetcher is the guarded client catalogs are read with.
func NewCatalogFetcher(allowPrivate bool, userAgent string) *target.Client {
	return target.New(target.Options{AllowPrivate: allowPrivate, UserAgent: userAgent, Timeout: 30 * time.Second, BodyCap: MaxCatalogBytes})
}

// Importer reads catalogs and writes what they list into the monitor's
// endpoint set. It never fetches a listed endpoint: the checks do.
type Importer struct {
	Monitor      *Monitor
	Fetch        CatalogFetcher
	AllowPrivate bool
	// MaxPages bounds the pages of one Bazaar read (default
	// MaxCatalogPages).
	MaxPages int
}

// ImportResult is what one read of a source gave, in closed-form numbers.
type ImportResult struct {
	Source    string
	Kind      string
	Pages     int
	Listed    int            // resources listed (imported or skipped)
	Endpoints []Endpoint     // to import (distinct ids)
	Skipped   map[string]int // by reason (Skip*)
}

// ImportSource is the source an import --from URL reads: kind given, or guessed
// from the URL (a path ending in /discovery/resources is a Bazaar list, an
// origin or a /.well-known/x402 path a manifest, anything else a list).
func ImportSource(raw, kind string, ops []string, every time.Duration) (Source, error) {
	if target.CheckURL(raw) != nil {
		return Source{}, &CatalogError{Code: CatalogRefusedURL}
	}
	if kind == "" {
		u, _ := url.Parse(raw)
		switch p := strings.TrimSuffix(u.Path, "/"); {
		case strings.HasSuffix(p, "/discovery/resources"):
			kind = KindBazaar
		case p == "" || strings.HasPrefix(p, "/.well-known/x402"):
			kind = KindWellKnown
		default:
			kind = KindList
		}
	}
	if !validKind(kind) {
		return Source{}, &CatalogError{Code: "bad_kind"}
	}
	return Source{URL: raw, Kind: kind, Every: DefaultSourceEvery, Ops: ops, CheckEvery: every}, nil
}

// Read fetches and parses a source, without writing anything.
func (im *Importer) Read(ctx context.Context, src Source) (ImportResult, error) {
	res := ImportResult{Source: src.URL, Kind: src.Kind, Skipped: map[string]int{}}
	var entries []CatalogEntry
	add := func(r CatalogRead) error {
		for k, n := range r.Skipped {
			res.Skipped[k] += n
			res.Listed += n
		}
		res.Listed += len(r.Entries)
		entries = append(entries, r.Entries...)
		if len(entries) > MaxListEntries {
			return &CatalogError{Code: CatalogTooMany}
		}
		return nil
	}
	switch src.Kind {
	case KindBazaar:
		if err := im.readBazaar(ctx, src.URL, &res, add); err != nil {
			return res, err
		}
	case KindWellKnown:
		manifest, body, err := im.readWellKnown(ctx, src.URL)
		if err != nil {
			return res, err
		}
		res.Pages = 1
		r, err := ParseWellKnown(body, manifest, im.AllowPrivate)
		if err == nil {
			err = add(r)
		}
		if err != nil {
			return res, err
		}
	case KindList:
		body, err := im.get(ctx, src.URL, 0)
		if err != nil {
			return res, err
		}
		res.Pages = 1
		r, err := ParseList(body, im.AllowPrivate)
		if err == nil {
			err = add(r)
		}
		if err != nil {
			return res, err
		}
	default:
		return res, &CatalogError{Code: "bad_kind"}
	}
	seen := map[string]bool{}
	for _, c := range entries {
		id := c.ID()
		if seen[id] {
			res.Skipped[SkipDuplicate]++
			continue
		}
		seen[id] = true
		e := Endpoint{ID: id, URL: c.URL, Method: c.Method, Ops: slices.Clone(src.Ops), Every: src.CheckEvery}
		if len(e.Ops) == 0 {
			e.Ops = slices.Clone(DefaultImportOps)
		}
		if e.Every == 0 {
			e.Every = DefaultCheckEvery
		}
		res.Endpoints = append(res.Endpoints, e)
	}
	return res, nil
}

// Import reads a source and writes it: its endpoints are listed by the
// source (seen now); an endpoint another source defined keeps its
// definition (duplicates merge: the endpoint records every source listing
// it); a retired one listed again is checked again. A read that fails
// writes nothing (the source's endpoints then age towards retirement).
func (im *Importer) Import(ctx context.Context, src Source) (ImportResult, error) {
	res, err := im.Read(ctx, src)
	if err != nil {
		return res, err
	}
	m := im.Monitor
	if m.Catalog == nil {
		return res, ErrReadOnly
	}
	recs := make([]store.EndpointRecord, 0, len(res.Endpoints))
	for _, e := range res.Endpoints {
		recs = append(recs, Record(e))
	}
	err = m.Catalog.PutEndpoints(ctx, recs, store.PutEndpoints{Source: src.URL, Seen: m.now(), Max: m.maxEndpoints(), Merge: true})
	if err == nil {
		m.log().Info("import", "kind", src.Kind, "pages", res.Pages, "listed", res.Listed, "endpoints", len(res.Endpoints))
	}
	return res, err
}

// readBazaar follows a Bazaar list's pages (limit BazaarPageSize, offset
// growing by the items each page gave) until a page is empty or short, the
// pagination's total is reached, or MaxCatalogPages (an error: the read is
// incomplete and writes nothing).
func (im *Importer) readBazaar(ctx context.Context, raw string, res *ImportResult, add func(CatalogRead) error) error {
	base, err := url.Parse(raw)
	if err != nil {
		return &CatalogError{Code: CatalogRefusedURL}
	}
	if p := strings.TrimSuffix(base.Path, "/"); p == "" {
		base.Path = "/discovery/resources"
	}
	maxPages := im.MaxPages
	if maxPages <= 0 {
		maxPages = MaxCatalogPages
	}
	offset := 0
	for page := 1; ; page++ {
		if page > maxPages {
			return &CatalogError{Code: CatalogTooManyPages}
		}
		q := base.Query()
		q.Set("type", "http")
		q.Set("limit", strconv.Itoa(BazaarPageSize))
		q.Set("offset", strconv.Itoa(offset))
		u := *base
		u.RawQuery = q.Encode()
		body, err := im.get(ctx, u.String(), page)
		if err != nil {
			return err
		}
		p, err := ParseBazaarPage(body, im.AllowPrivate)
		if err != nil {
			var ce *CatalogError
			if errors.As(err, &ce) {
				ce.Page = page
			}
			return err
		}
		res.Pages = page
		if err := add(p.CatalogRead); err != nil {
			return err
		}
		offset += p.Items
		if p.Items == 0 || (p.Total >= 0 && offset >= p.Total) || (p.Total < 0 && p.Items < BazaarPageSize) {
			return nil
		}
	}
}

// readWellKnown reads /.well-known/x402, then /.well-known/x402.json when
// the first is not found, of an origin (or the manifest URL given).
func (im *Importer) readWellKnown(ctx context.Context, raw string) (string, []byte, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, &CatalogError{Code: CatalogRefusedURL}
	}
	if strings.HasPrefix(u.Path, "/.well-known/x402") {
		body, err := im.get(ctx, raw, 0)
		return raw, body, err
	}
	u.Path, u.RawQuery = "/.well-known/x402", ""
	first := u.String()
	body, err := im.get(ctx, first, 0)
	var ce *CatalogError
	if errors.As(err, &ce) && ce.Code == CatalogStatus && ce.Status == http.StatusNotFound {
		u.Path = "/.well-known/x402.json"
		body, err = im.get(ctx, u.String(), 0)
		return u.String(), body, err
	}
	return first, body, err
}

// get fetches one catalog response through the guarded client: a 200 within
// MaxCatalogBytes, or a closed-form error.
func (im *Importer) get(ctx context.Context, raw string, page int) ([]byte, error) {
	if target.CheckURL(raw) != nil || !GuardURL(raw, im.AllowPrivate) {
		return nil, &CatalogError{Code: CatalogRefusedURL, Page: page}
	}
	c := im.Fetch.Get(ctx, raw)
	switch {
	case c.Outcome == capture.OverCap || len(c.Body) > MaxCatalogBytes:
		return nil, &CatalogError{Code: CatalogOverCap, Page: page}
	case c.Outcome != capture.OK || c.Status == 0:
		return nil, &CatalogError{Code: CatalogFetchFailed, Page: page}
	case c.Status != http.StatusOK:
		return nil, &CatalogError{Code: CatalogStatus, Status: c.Status, Page: page}
	}
	return c.Body, nil
}
