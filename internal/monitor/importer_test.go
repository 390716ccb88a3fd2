package monitor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

const canary = "CANARY-c4t4l0g-9d2a"

// bazaar is a loopback fake of a facilitator's discovery API: items listed
// in order, served a page at a time by limit and offset, every item with a
// description and metadata carrying the canary.
type bazaar struct {
	*httptest.Server
	items    []map[string]any
	requests atomic.Int64
	noTotal  bool
}

func newBazaar(t *testing.T, urls ...string) *bazaar {
	b := &bazaar{}
	for _, u := range urls {
		b.items = append(b.items, bazaarItem(u, "GET"))
	}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		if r.URL.Path != "/discovery/resources" || r.URL.Query().Get("type") != "http" {
			http.NotFound(w, r)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		limit = min(limit, 100) // as real facilitators cap it
		end := min(offset+limit, len(b.items))
		page := b.items[min(offset, end):end]
		doc := map[string]any{"x402Version": 2, "items": page}
		if !b.noTotal {
			doc["pagination"] = map[string]any{"limit": limit, "offset": offset, "total": len(b.items)}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(b.Close)
	return b
}

func bazaarItem(u, method string) map[string]any {
	return map[string]any{
		"resource": u, "type": "http", "x402Version": 1, "lastUpdated": "2026-01-01T00:00:00Z",
		"accepts": []any{map[string]any{
			"scheme": "exact", "network": "base", "maxAmountRequired": "10000", "resource": u,
			"description": "paid " + canary, "payTo": "0x" + canary,
			"outputSchema": map[string]any{"input": map[string]any{"type": "http", "method": method}, "output": map[string]any{"example": canary}},
		}},
		"metadata": map[string]any{"provider": canary, "tags": []string{canary}},
	}
}

type fixture struct {
	m    *monitor.Monitor
	st   *sqlite.Store
	path string
	now  time.Time
	imp  *monitor.Importer
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	f.path = filepath.Join(t.TempDir(), "payability.db")
	st, err := sqlite.Open(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	f.m = &monitor.Monitor{Config: &monitor.Config{RetireAfter: 24 * time.Hour, Retention: monitor.DefaultRetention}, History: st, Catalog: st,
		Now: func() time.Time { return f.now }}
	f.imp = &monitor.Importer{Monitor: f.m, Fetch: monitor.NewCatalogFetcher(true, "payability-test"), AllowPrivate: true}
	return f
}

func (f *fixture) active(t *testing.T) []monitor.Endpoint {
	t.Helper()
	eps, _, err := f.m.Endpoints(context.Background(), monitor.Query{})
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func src(u, kind string) monitor.Source {
	return monitor.Source{URL: u, Kind: kind, Ops: []string{"preflight"}, CheckEvery: time.Hour}
}

// TestImportPagesThroughABazaar: 250 resources on a fake discovery API that
// serves 100 a page are read in 3 pages, a duplicate and the resources the
// monitor cannot check are counted and skipped, and what is stored is the
// URL and method only: the catalog's canary is nowhere in the store.
func TestImportPagesThroughABazaar(t *testing.T) {
	var urls []string
	for i := range 250 {
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:9/r/%03d", i))
	}
	b := newBazaar(t, urls...)
	b.items = append(b.items, bazaarItem("http://127.0.0.1:9/r/000", "GET"), // a duplicate
		bazaarItem("http://127.0.0.1:9/mcp", "GET"), bazaarItem("ftp://127.0.0.1/x", "GET"), bazaarItem("http://127.0.0.1:9/put", "PUT"),
		bazaarItem("http://127.0.0.1:9/users/:id", "GET"), bazaarItem("http://127.0.0.1:9/search", "POST"))
	b.items[251]["type"] = "mcp"
	f := newFixture(t)
	res, err := f.imp.Import(context.Background(), src(b.URL+"/discovery/resources", monitor.KindBazaar))
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 3 || b.requests.Load() != 3 || res.Listed != 256 || len(res.Endpoints) != 251 {
		t.Errorf("pages %d (requests %d), listed %d, endpoints %d; want 3, 256, 251", res.Pages, b.requests.Load(), res.Listed, len(res.Endpoints))
	}
	want := map[string]int{monitor.SkipDuplicate: 1, monitor.SkipType: 1, monitor.SkipPolicy: 1, monitor.SkipMethod: 1, monitor.SkipTemplate: 1}
	for k, n := range want {
		if res.Skipped[k] != n {
			t.Errorf("skipped %s = %d, want %d (all: %v)", k, res.Skipped[k], n, res.Skipped)
		}
	}
	eps := f.active(t)
	if len(eps) != 251 {
		t.Fatalf("%d endpoints stored, want 251", len(eps))
	}
	post, ok, _ := f.m.Endpoint(context.Background(), monitor.DeriveID("POST", "http://127.0.0.1:9/search"))
	if !ok || post.Method != "POST" || post.Body != "" || !slices.Equal(post.Ops, []string{"preflight"}) || post.Every != time.Hour ||
		!slices.Equal(post.Sources, []string{b.URL + "/discovery/resources"}) || post.Network != "" || post.MaxAmount != "" {
		t.Errorf("the POST resource: %v %+v", ok, post)
	}
	// Custody: nothing of the catalog but URLs and methods reached the
	// store (the database and its write-ahead log).
	f.st.Close()
	for _, p := range []string{f.path, f.path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(canary)) {
			t.Errorf("%s holds the catalog's canary", filepath.Base(p))
		}
	}
	if s := fmt.Sprintf("%+v", res); strings.Contains(s, canary) {
		t.Error("the import's result holds the canary")
	}
}

// TestImportBazaarWithoutTotal: a page shorter than the limit ends a list
// that gives no total; a list that never ends is refused at MaxPages and
// writes nothing.
func TestImportBazaarWithoutTotal(t *testing.T) {
	var urls []string
	for i := range 130 {
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:9/n/%d", i))
	}
	b := newBazaar(t, urls...)
	b.noTotal = true
	f := newFixture(t)
	res, err := f.imp.Import(context.Background(), src(b.URL+"/discovery/resources", monitor.KindBazaar))
	if err != nil || res.Pages != 2 || len(res.Endpoints) != 130 {
		t.Fatalf("no total: %d pages, %d endpoints, %v", res.Pages, len(res.Endpoints), err)
	}
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off := r.URL.Query().Get("offset")
		var items []map[string]any
		for i := range 100 {
			items = append(items, bazaarItem("http://127.0.0.1:9/e/"+off+"/"+strconv.Itoa(i), "GET"))
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	}))
	defer endless.Close()
	f.imp.MaxPages = 3
	_, err = f.imp.Import(context.Background(), src(endless.URL+"/discovery/resources", monitor.KindBazaar))
	var ce *monitor.CatalogError
	if !errors.As(err, &ce) || ce.Code != monitor.CatalogTooManyPages {
		t.Errorf("endless list: %v, want too_many_pages", err)
	}
	if n := len(f.active(t)); n != 130 {
		t.Errorf("%d endpoints after the refused read, want 130", n)
	}
}

// TestImportMergesSourcesAndRetiresAfterGrace: a resource listed by two
// sources is one endpoint listing both; one no source lists any more is
// retired once the grace has passed since it was last listed (kept, not
// checked), and listed again it is checked again. The clock is injected.
func TestImportMergesSourcesAndRetiresAfterGrace(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	b := newBazaar(t, "http://127.0.0.1:9/a", "http://127.0.0.1:9/b")
	lst := "http://127.0.0.1:9/a\n# a comment\nHTTP://127.0.0.1:9/c\n"
	list := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, lst) }))
	defer list.Close()
	bz, ls := src(b.URL+"/discovery/resources", monitor.KindBazaar), src(list.URL+"/urls.txt", monitor.KindList)
	for _, s := range []monitor.Source{bz, ls} {
		if _, err := f.imp.Import(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	idA, idB, idC := monitor.DeriveID("GET", "http://127.0.0.1:9/a"), monitor.DeriveID("GET", "http://127.0.0.1:9/b"), monitor.DeriveID("GET", "http://127.0.0.1:9/c")
	a, _, _ := f.m.Endpoint(ctx, idA)
	want := []string{bz.URL, ls.URL}
	slices.Sort(want) // sources are sorted
	if !slices.Equal(a.Sources, want) {
		t.Errorf("a's sources %v, want %v", a.Sources, want)
	}
	if len(f.active(t)) != 3 {
		t.Fatalf("active %d, want 3 (a, b, c)", len(f.active(t)))
	}
	// Twelve hours on the bazaar drops b, the list drops a: a is still in
	// the bazaar, b in no source since t0.
	t0 := f.now
	f.now = t0.Add(12 * time.Hour)
	b.items = b.items[:1]
	lst = "http://127.0.0.1:9/c\n"
	for _, s := range []monitor.Source{bz, ls} {
		if _, err := f.imp.Import(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// At exactly the grace since b was last listed, it stays.
	f.now = t0.Add(24 * time.Hour)
	if n, err := f.m.Retire(ctx); err != nil || n != 0 {
		t.Fatalf("retire at the edge = %d, %v; want 0", n, err)
	}
	f.now = t0.Add(24*time.Hour + time.Millisecond)
	if n, err := f.m.Retire(ctx); err != nil || n != 1 {
		t.Fatalf("retire past the edge = %d, %v; want 1", n, err)
	}
	gone, _, _ := f.m.Endpoint(ctx, idB)
	if gone.Retired != f.now {
		t.Errorf("b retired at %v, want %v", gone.Retired, f.now)
	}
	if _, _, err := f.m.Check(ctx, idB, "preflight", 1); err != monitor.ErrUnknownEndpoint {
		t.Errorf("a retired endpoint is checked: %v", err)
	}
	retired, _, _ := f.m.Endpoints(ctx, monitor.Query{Status: monitor.Retired})
	if len(retired) != 1 || retired[0].ID != idB {
		t.Errorf("retired %v, want [b]", retired)
	}
	// Listed again: active again.
	b.items = append(b.items, bazaarItem("http://127.0.0.1:9/b", "GET"))
	if _, err := f.imp.Import(ctx, bz); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := f.m.Endpoint(ctx, idB); !again.Retired.IsZero() {
		t.Errorf("b listed again is still retired")
	}
	if c, _, _ := f.m.Endpoint(ctx, idC); c.URL != "http://127.0.0.1:9/c" {
		t.Errorf("c's URL %q: the scheme and host are kept in lower case", c.URL)
	}
}

// TestImportKeepsAConfiguredDefinition: an endpoint the file defines keeps
// its definition when a catalog lists it too (the catalog's source is
// added).
func TestImportKeepsAConfiguredDefinition(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := monitor.DeriveID("GET", "http://127.0.0.1:9/a")
	f.m.Config.Endpoints = []monitor.Endpoint{{ID: id, URL: "http://127.0.0.1:9/a", Method: "GET", Ops: []string{"lint"}, Every: time.Minute}}
	if err := f.m.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBazaar(t, "http://127.0.0.1:9/a")
	if _, err := f.imp.Import(ctx, src(b.URL+"/discovery/resources", monitor.KindBazaar)); err != nil {
		t.Fatal(err)
	}
	e, _, _ := f.m.Endpoint(ctx, id)
	if !slices.Equal(e.Ops, []string{"lint"}) || e.Every != time.Minute || len(e.Sources) != 2 {
		t.Errorf("after the import: %+v", e)
	}
}

// TestImportWellKnown: /.well-known/x402 is read, then x402.json when the
// first is not found; entries off the manifest's host are skipped.
func TestImportWellKnown(t *testing.T) {
	var origin string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/x402.json" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"x402Version":2,"description":%q,"resources":[{"url":%q,"method":"POST","description":%q},%q,"http://other.example/x"],
"items":[{"resource":{"url":%q,"description":%q},"type":"http","input":{"method":"GET"}}]}`,
			canary, origin+"/paid", canary, origin+"/free", origin+"/item", canary)
	}))
	defer srv.Close()
	origin = srv.URL
	f := newFixture(t)
	res, err := f.imp.Import(context.Background(), src(srv.URL, monitor.KindWellKnown))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Endpoints {
		got = append(got, e.Method+" "+strings.TrimPrefix(e.URL, origin))
	}
	if want := []string{"POST /paid", "GET /free", "GET /item"}; !slices.Equal(got, want) || res.Skipped[monitor.SkipOffOrigin] != 1 {
		t.Errorf("endpoints %v (skipped %v), want %v and one off_origin", got, res.Skipped, want)
	}
}

// countingFetcher records the URLs it is asked for and answers nothing.
type countingFetcher struct{ urls []string }

func (c *countingFetcher) Get(_ context.Context, u string) capture.Capture {
	c.urls = append(c.urls, u)
	return capture.Capture{Outcome: capture.Failed}
}

// TestImportGuardRefusesBeforeFetching: without --allow-private a catalog on
// a literal private or loopback address is refused before any request, and
// so is one the URL policy refuses; the guarded client itself refuses at
// dial. Tested as functions: no packet goes to a non-loopback address.
func TestImportGuardRefusesBeforeFetching(t *testing.T) {
	f := newFixture(t)
	cf := &countingFetcher{}
	im := &monitor.Importer{Monitor: f.m, Fetch: cf}
	for _, u := range []string{"http://10.1.2.3/discovery/resources", "http://169.254.169.254/latest", "http://[fd00::1]/x", "http://127.0.0.1:9/l", "http://localhost/l"} {
		for _, kind := range []string{monitor.KindBazaar, monitor.KindList, monitor.KindWellKnown} {
			_, err := im.Import(context.Background(), src(u, kind))
			var ce *monitor.CatalogError
			if !errors.As(err, &ce) || ce.Code != monitor.CatalogRefusedURL {
				t.Errorf("%s (%s): %v, want refused_url", u, kind, err)
			}
		}
	}
	if len(cf.urls) != 0 {
		t.Errorf("refused catalogs were fetched: %v", cf.urls)
	}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://pay.example/x", true}, {"http://8.8.8.8/x", true}, {"http://10.0.0.1/x", false}, {"http://192.168.1.1/x", false},
		{"http://127.0.0.1/x", false}, {"http://[::1]/x", false}, {"http://169.254.169.254/x", false}, {"http://LOCALHOST./x", false},
		{"http://a.localhost/x", false}, {"http://[::ffff:10.0.0.1]/x", false},
	} {
		if got := monitor.GuardURL(tc.url, false); got != tc.want {
			t.Errorf("GuardURL(%s) = %v, want %v", tc.url, got, tc.want)
		}
		if !monitor.GuardURL(tc.url, true) {
			t.Errorf("GuardURL(%s, allowPrivate) refused", tc.url)
		}
	}
	// Listed resources on such addresses are skipped, never fetched.
	page, err := monitor.ParseBazaarPage([]byte(`{"items":[{"resource":"http://10.0.0.7/paid","type":"http"},{"resource":"https://pay.example/ok","type":"http"}]}`), false)
	if err != nil || len(page.Entries) != 1 || page.Skipped[monitor.SkipGuard] != 1 {
		t.Errorf("page: %+v, %v", page, err)
	}
}

// TestImportOverCapAndBadStatus: a catalog response over MaxCatalogBytes
// or not a 200 is a closed-form error that writes nothing.
func TestImportOverCapAndBadStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			fmt.Fprint(w, `["http://127.0.0.1:9/a"`+strings.Repeat(" ", monitor.MaxCatalogBytes)+`]`)
		case "/edge":
			body := `["http://127.0.0.1:9/a"]`
			fmt.Fprint(w, body+strings.Repeat(" ", monitor.MaxCatalogBytes-len(body)))
		default:
			http.Error(w, canary, http.StatusTeapot)
		}
	}))
	defer srv.Close()
	f := newFixture(t)
	for path, code := range map[string]string{"/big": monitor.CatalogOverCap, "/gone": monitor.CatalogStatus} {
		_, err := f.imp.Import(context.Background(), src(srv.URL+path, monitor.KindList))
		var ce *monitor.CatalogError
		if !errors.As(err, &ce) || ce.Code != code || strings.Contains(err.Error(), canary) {
			t.Errorf("%s: %v, want %s", path, err, code)
		}
	}
	if _, err := f.imp.Import(context.Background(), src(srv.URL+"/edge", monitor.KindList)); err != nil {
		t.Errorf("a catalog of exactly MaxCatalogBytes: %v", err)
	}
	if n := len(f.active(t)); n != 1 {
		t.Errorf("%d endpoints, want 1 (from /edge)", n)
	}
}

// TestDeriveIDIsStable: the id is a valid store id, the same for the same
// method and URL on every call, different for another method or URL.
func TestDeriveIDIsStable(t *testing.T) {
	a := monitor.DeriveID("GET", "https://api.pay.example/v1/x?q=1")
	if a != "api.pay.example-"+a[len(a)-12:] || !store.ValidID(a) {
		t.Errorf("id %q", a)
	}
	if monitor.DeriveID("GET", "https://api.pay.example/v1/x?q=1") != a || monitor.DeriveID("POST", "https://api.pay.example/v1/x?q=1") == a ||
		monitor.DeriveID("GET", "https://api.pay.example/v1/x?q=2") == a {
		t.Error("not stable, or not distinct")
	}
	// A pinned value: the derivation never changes meaning.
	if got := monitor.DeriveID("GET", "https://pay.example/paid"); got != "pay.example-"+pinnedHash {
		t.Errorf("DeriveID changed: %s", got)
	}
	for _, u := range []string{"http://[::1]:8080/x", "http://" + strings.Repeat("a", 80) + ".example/x", "http://-x.example/"} {
		if id := monitor.DeriveID("GET", u); !store.ValidID(id) {
			t.Errorf("DeriveID(%s) = %q, not a valid id", u, id)
		}
	}
}

const pinnedHash = "a5e196c65d65"
