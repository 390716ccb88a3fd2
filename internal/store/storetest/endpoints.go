package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// Catalog is what the endpoint suite needs of a backend: the endpoints and
// the history whose observations keep them current.
type Catalog interface {
	store.History
	store.EndpointCatalog
}

// RunEndpoints runs the conformance suite of store.EndpointCatalog: open
// returns a store on an empty database of its own (it registers its own
// cleanup).
func RunEndpoints(t *testing.T, open func(t *testing.T) Catalog) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, c Catalog)
	}{
		{"endpoints/round_trip_keeps_every_field_and_sources_merge", testEndpointsRoundTrip},
		{"endpoints/create_refuses_a_known_id_and_writes_nothing", testEndpointsCreate},
		{"endpoints/limit_at_its_edge_writes_nothing_over_it", testEndpointsLimit},
		{"endpoints/status_follows_the_status_op_observations", testEndpointsStatus},
		{"endpoints/filters_and_pages", testEndpointsFilters},
		{"endpoints/retired_when_no_source_lists_them_after_grace", testEndpointsRetire},
		{"endpoints/release_source_then_retire_keeps_other_sources", testEndpointsRelease},
		{"endpoints/update_delete_and_version", testEndpointsUpdateDelete},
		{"endpoints/invalid_refused", testEndpointsInvalid},
		{"endpoints/merge_keeps_the_known_definition", testEndpointsMerge},
		{"endpoints/latest_observations_of_a_page", testEndpointsLatest},
		{"endpoints/whole_set_reads_sources_across_batches", testEndpointsSourcesBatches},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func rec(id string, ops ...string) store.EndpointRecord {
	if len(ops) == 0 {
		ops = []string{"preflight"}
	}
	status := ""
	if slices.Contains(ops, "preflight") {
		status = "preflight"
	} else if slices.Contains(ops, "lint") {
		status = "lint"
	}
	return store.EndpointRecord{ID: id, URL: "https://" + id + ".example/pay", Method: "GET", Ops: ops, Every: time.Hour, StatusOp: status}
}

func put(t *testing.T, c Catalog, source string, seen time.Time, eps ...store.EndpointRecord) {
	t.Helper()
	if err := c.PutEndpoints(context.Background(), eps, store.PutEndpoints{Source: source, Seen: seen, Max: store.MaxEndpoints}); err != nil {
		t.Fatalf("PutEndpoints(%s): %v", source, err)
	}
}

func list(t *testing.T, c Catalog, q store.EndpointQuery) ([]string, int) {
	t.Helper()
	eps, total, err := c.ListEndpoints(context.Background(), q)
	if err != nil {
		t.Fatalf("ListEndpoints(%+v): %v", q, err)
	}
	ids := []string{}
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	return ids, total
}

func get(t *testing.T, c Catalog, id string) store.EndpointRecord {
	t.Helper()
	e, ok, err := c.Endpoint(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Endpoint(%s) = %v, %v", id, ok, err)
	}
	return e
}

func testEndpointsRoundTrip(t *testing.T, c Catalog) {
	want := store.EndpointRecord{ID: "seller.a", URL: "https://a.example/pay?x=1", Method: "POST", Body: `{"q":1}`,
		Ops: []string{"lint", "preflight"}, Every: 90 * time.Second, Network: "eip155:8453", MaxAmount: "10000", StatusOp: "preflight"}
	put(t, c, "https://catalog.example/discovery/resources", t0, want)
	put(t, c, store.SourceConfig, t0, want)
	got := get(t, c, "seller.a")
	want.Sources = []string{store.SourceConfig, "https://catalog.example/discovery/resources"}
	if !equalRecord(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, ok, err := c.Endpoint(context.Background(), "nope"); ok || err != nil {
		t.Errorf("Endpoint(nope) = %v, %v; want absent", ok, err)
	}
}

func equalRecord(a, b store.EndpointRecord) bool {
	return a.ID == b.ID && a.URL == b.URL && a.Method == b.Method && a.Body == b.Body && slices.Equal(a.Ops, b.Ops) &&
		a.Every == b.Every && a.Network == b.Network && a.MaxAmount == b.MaxAmount && a.StatusOp == b.StatusOp &&
		slices.Equal(a.Sources, b.Sources) && a.Retired.Equal(b.Retired) && a.StatusState == b.StatusState &&
		a.StatusAt.Equal(b.StatusAt) && a.ObservedNetwork == b.ObservedNetwork
}

func testEndpointsCreate(t *testing.T, c Catalog) {
	ctx := context.Background()
	put(t, c, store.SourceAPI, t0, rec("a"))
	err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("b"), rec("a")}, store.PutEndpoints{Source: store.SourceAPI, Seen: t0, Max: 10, Create: true})
	if !errors.Is(err, store.ErrEndpointExists) {
		t.Fatalf("create of a known id: %v, want ErrEndpointExists", err)
	}
	if ids, _ := list(t, c, store.EndpointQuery{}); !slices.Equal(ids, []string{"a"}) {
		t.Errorf("after a refused create: %v, want [a]", ids)
	}
}

func testEndpointsLimit(t *testing.T, c Catalog) {
	ctx := context.Background()
	p := store.PutEndpoints{Source: store.SourceAPI, Seen: t0, Max: 3}
	if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("a"), rec("b"), rec("c")}, p); err != nil {
		t.Fatalf("3 of at most 3: %v", err)
	}
	v0, _ := c.EndpointsVersion(ctx)
	if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("c"), rec("d")}, p); !errors.Is(err, store.ErrTooManyEndpoints) {
		t.Fatalf("4 of at most 3: %v, want ErrTooManyEndpoints", err)
	}
	if ids, total := list(t, c, store.EndpointQuery{}); total != 3 || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("after the refusal: %v (%d), want [a b c]", ids, total)
	}
	if v1, _ := c.EndpointsVersion(ctx); v1 != v0 {
		t.Errorf("version changed by a refused put: %d → %d", v0, v1)
	}
	// A retired endpoint does not count.
	if _, err := c.DeleteEndpoint(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	put(t, c, "https://list.example/l", t0, rec("x"))
	if _, err := c.RetireEndpoints(ctx, t0.Add(time.Hour), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("d")}, p); err != nil {
		t.Errorf("3 active and 1 retired, at most 3: %v", err)
	}
}

func testEndpointsStatus(t *testing.T, c Catalog) {
	// History taken before the endpoint was put is read when it is put.
	o := obs("s1", "preflight", 100, t0)
	o.State, o.Passing, o.Network = "STOP", false, "eip155:8453"
	add(t, c, o)
	put(t, c, store.SourceAPI, t0, rec("s1"), rec("s2", "lint"), rec("s3", "check"))
	got := get(t, c, "s1")
	if got.StatusState != "STOP" || !got.StatusAt.Equal(t0) {
		t.Errorf("s1 from the history before it: %q at %v, want STOP at %v", got.StatusState, got.StatusAt, t0)
	}
	// A newer observation of the status op replaces it; an older slot and
	// another op do not.
	n := obs("s1", "preflight", 200, t0.Add(time.Hour))
	n.State, n.Network = "GO", "eip155:8453"
	add(t, c, n)
	late := obs("s1", "preflight", 150, t0.Add(2*time.Hour))
	late.State = "HOLD"
	add(t, c, late)
	other := obs("s1", "check", 300, t0.Add(3*time.Hour))
	other.State = "MISSING"
	add(t, c, other)
	got = get(t, c, "s1")
	if got.StatusState != "GO" || !got.StatusAt.Equal(t0.Add(time.Hour)) || got.ObservedNetwork != "eip155:8453" {
		t.Errorf("s1 = %q at %v (network %q), want GO at %v (eip155:8453)", got.StatusState, got.StatusAt, got.ObservedNetwork, t0.Add(time.Hour))
	}
	l := obs("s2", "lint", 100, t0)
	l.State = "errors"
	add(t, c, l)
	now := t0.Add(90 * time.Minute)
	if ids, _ := list(t, c, store.EndpointQuery{States: []string{"STOP", "errors"}, Now: now}); !slices.Equal(ids, []string{"s2"}) {
		t.Errorf("critical at +90m = %v, want [s2]", ids)
	}
	// Fresh means at or after now minus two intervals: s2's (at t0, every
	// 1h) is fresh at t0+2h and not a millisecond later.
	if ids, _ := list(t, c, store.EndpointQuery{States: []string{"errors"}, Now: t0.Add(2 * time.Hour)}); !slices.Equal(ids, []string{"s2"}) {
		t.Errorf("at the freshness edge = %v, want [s2]", ids)
	}
	if ids, _ := list(t, c, store.EndpointQuery{States: []string{"errors"}, Now: t0.Add(2*time.Hour + time.Millisecond)}); len(ids) != 0 {
		t.Errorf("past the freshness edge = %v, want none", ids)
	}
	six := []string{"GO", "HOLD", "STOP", "conforms", "warnings", "errors"}
	if ids, _ := list(t, c, store.EndpointQuery{States: six, NotStates: true, Now: now}); !slices.Equal(ids, []string{"s3"}) {
		t.Errorf("unknown = %v, want [s3]", ids)
	}
	// Changing the ops moves the status to the new status op's history.
	put(t, c, store.SourceAPI, t0, rec("s1", "lint"))
	if got := get(t, c, "s1"); got.StatusState != "" || !got.StatusAt.IsZero() {
		t.Errorf("s1 after its status op changed = %q at %v, want none", got.StatusState, got.StatusAt)
	}
}

func testEndpointsFilters(t *testing.T, c Catalog) {
	ctx := context.Background()
	a := rec("a")
	a.Network = "eip155:8453"
	put(t, c, store.SourceConfig, t0, a, rec("b"), rec("c"))
	put(t, c, "https://bazaar.example/discovery/resources", t0, rec("c"), rec("d"), rec("e"))
	o := obs("d", "preflight", 100, t0)
	o.State, o.Network = "GO", "eip155:8453"
	add(t, c, o)
	for _, tc := range []struct {
		q         store.EndpointQuery
		ids       []string
		wantTotal int
	}{
		{store.EndpointQuery{}, []string{"a", "b", "c", "d", "e"}, 5},
		{store.EndpointQuery{Limit: 2}, []string{"a", "b"}, 5},
		{store.EndpointQuery{Limit: 2, Offset: 4}, []string{"e"}, 5},
		{store.EndpointQuery{Limit: 2, Offset: 6}, []string{}, 5},
		{store.EndpointQuery{Network: "eip155:8453"}, []string{"a", "d"}, 2},
		{store.EndpointQuery{Source: store.SourceConfig}, []string{"a", "b", "c"}, 3},
		{store.EndpointQuery{Source: "https://bazaar.example/discovery/resources", Limit: 1, Offset: 1}, []string{"d"}, 3},
		{store.EndpointQuery{Source: "https://other.example/"}, []string{}, 0},
		{store.EndpointQuery{Network: "eip155:8453", Source: "https://bazaar.example/discovery/resources"}, []string{"d"}, 1},
		{store.EndpointQuery{States: []string{"GO"}, Now: t0}, []string{"d"}, 1},
		{store.EndpointQuery{Retired: true}, []string{}, 0},
	} {
		ids, total := list(t, c, tc.q)
		if !slices.Equal(ids, tc.ids) || total != tc.wantTotal {
			t.Errorf("%+v = %v (%d), want %v (%d)", tc.q, ids, total, tc.ids, tc.wantTotal)
		}
	}
	eps, _, err := c.ListEndpoints(ctx, store.EndpointQuery{Source: store.SourceConfig})
	if err != nil || len(eps) != 3 || !slices.Equal(eps[2].Sources, []string{store.SourceConfig, "https://bazaar.example/discovery/resources"}) {
		t.Errorf("c's sources: %+v, %v", eps, err)
	}
}

func testEndpointsRetire(t *testing.T, c Catalog) {
	ctx := context.Background()
	const s1, s2 = "https://one.example/list", "https://two.example/list"
	grace := 24 * time.Hour
	put(t, c, s1, t0, rec("both"), rec("one"), rec("gone"))
	put(t, c, s2, t0, rec("both"))
	put(t, c, store.SourceAPI, t0, rec("api"))
	// A day later s1 lists "one" again, s2 lists "both"; "gone" is in no
	// list since t0.
	t1 := t0.Add(grace)
	put(t, c, s1, t1, rec("one"))
	put(t, c, s2, t1, rec("both"))
	// At the edge of the grace (last seen exactly cutoff) nothing goes.
	if n, err := c.RetireEndpoints(ctx, t0, t1); err != nil || n != 0 {
		t.Fatalf("retire at the grace edge = %d, %v; want 0", n, err)
	}
	t2 := t1.Add(time.Millisecond)
	if n, err := c.RetireEndpoints(ctx, t2.Add(-grace), t2); err != nil || n != 1 {
		t.Fatalf("retire past the grace = %d, %v; want 1", n, err)
	}
	if ids, _ := list(t, c, store.EndpointQuery{}); !slices.Equal(ids, []string{"api", "both", "one"}) {
		t.Errorf("active = %v", ids)
	}
	g := get(t, c, "gone")
	if !g.Retired.Equal(t2) || !slices.Equal(g.Sources, []string{s1}) {
		t.Errorf("gone = retired %v, sources %v; want retired %v, sources [%s]", g.Retired, g.Sources, t2, s1)
	}
	if ids, _ := list(t, c, store.EndpointQuery{Retired: true}); !slices.Equal(ids, []string{"gone"}) {
		t.Errorf("retired = %v", ids)
	}
	// Listed again: active again.
	put(t, c, s2, t2, rec("gone"))
	if g := get(t, c, "gone"); !g.Retired.IsZero() {
		t.Errorf("gone listed again is still retired at %v", g.Retired)
	}
	// The API's never go stale.
	if n, err := c.RetireEndpoints(ctx, t2.Add(1000*grace), t2.Add(1000*grace)); err != nil || n != 3 {
		t.Errorf("retire far later = %d, %v; want 3 (all but api)", n, err)
	}
	if ids, _ := list(t, c, store.EndpointQuery{}); !slices.Equal(ids, []string{"api"}) {
		t.Errorf("active far later = %v, want [api]", ids)
	}
}

func testEndpointsRelease(t *testing.T, c Catalog) {
	ctx := context.Background()
	put(t, c, store.SourceConfig, t0, rec("a"), rec("b"), rec("c"))
	put(t, c, "https://list.example/l", t0, rec("c"))
	put(t, c, store.SourceAPI, t0, rec("api"))
	// The file now lists a only: b is in no source, c is still in a list.
	if err := c.ReleaseSource(ctx, store.SourceConfig, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.RetireEndpoints(ctx, t0.Add(-time.Hour), t0.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("retire = %d, %v; want 1", n, err)
	}
	if ids, _ := list(t, c, store.EndpointQuery{}); !slices.Equal(ids, []string{"a", "api", "c"}) {
		t.Errorf("active = %v, want [a api c]", ids)
	}
	if ids, _ := list(t, c, store.EndpointQuery{Source: store.SourceConfig}); !slices.Equal(ids, []string{"a"}) {
		t.Errorf("config lists %v, want [a]", ids)
	}
}

func testEndpointsUpdateDelete(t *testing.T, c Catalog) {
	ctx := context.Background()
	v0, err := c.EndpointsVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put(t, c, store.SourceAPI, t0, rec("a"))
	v1, _ := c.EndpointsVersion(ctx)
	u := rec("a", "lint", "check")
	u.Every = time.Minute
	if err := c.UpdateEndpoint(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, "a"); !slices.Equal(got.Ops, []string{"lint", "check"}) || got.Every != time.Minute || got.StatusOp != "lint" ||
		!slices.Equal(got.Sources, []string{store.SourceAPI}) {
		t.Errorf("after update: %+v", got)
	}
	if err := c.UpdateEndpoint(ctx, rec("b")); !errors.Is(err, store.ErrNoEndpoint) {
		t.Errorf("update of none: %v, want ErrNoEndpoint", err)
	}
	v2, _ := c.EndpointsVersion(ctx)
	if ok, err := c.DeleteEndpoint(ctx, "a"); !ok || err != nil {
		t.Errorf("delete = %v, %v", ok, err)
	}
	if ok, err := c.DeleteEndpoint(ctx, "a"); ok || err != nil {
		t.Errorf("delete again = %v, %v; want false", ok, err)
	}
	v3, _ := c.EndpointsVersion(ctx)
	if !(v0 < v1 && v1 < v2 && v2 < v3) {
		t.Errorf("versions %d %d %d %d do not grow with each change", v0, v1, v2, v3)
	}
	if _, ok, _ := c.Endpoint(ctx, "a"); ok {
		t.Error("deleted endpoint still there")
	}
}

func testEndpointsInvalid(t *testing.T, c Catalog) {
	ctx := context.Background()
	bad := []store.EndpointRecord{
		{ID: "Bad", URL: "https://x.example/", Method: "GET", Ops: []string{"lint"}, Every: time.Hour},
		{ID: "a", URL: "", Method: "GET", Ops: []string{"lint"}, Every: time.Hour},
		{ID: "a", URL: "https://x.example/", Method: "PUT", Ops: []string{"lint"}, Every: time.Hour},
		{ID: "a", URL: "https://x.example/", Method: "GET", Ops: []string{"nope"}, Every: time.Hour},
		{ID: "a", URL: "https://x.example/", Method: "GET", Ops: []string{"lint"}, Every: 0},
	}
	for _, e := range bad {
		if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("ok"), e}, store.PutEndpoints{Source: store.SourceAPI, Seen: t0, Max: 10}); !errors.Is(err, store.ErrInvalidEndpoint) {
			t.Errorf("put %+v: %v, want ErrInvalidEndpoint", e, err)
		}
	}
	if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("ok")}, store.PutEndpoints{Source: "has space", Seen: t0, Max: 10}); !errors.Is(err, store.ErrInvalidEndpoint) {
		t.Errorf("bad source: %v", err)
	}
	if _, total := list(t, c, store.EndpointQuery{}); total != 0 {
		t.Errorf("%d endpoints written by refused puts", total)
	}
}

func testEndpointsMerge(t *testing.T, c Catalog) {
	ctx := context.Background()
	mine := rec("a", "lint")
	mine.Every = time.Minute
	put(t, c, store.SourceConfig, t0, mine)
	const src = "https://bazaar.example/discovery/resources"
	if err := c.PutEndpoints(ctx, []store.EndpointRecord{rec("a"), rec("b")}, store.PutEndpoints{Source: src, Seen: t0, Max: 10, Merge: true}); err != nil {
		t.Fatal(err)
	}
	got := get(t, c, "a")
	if !slices.Equal(got.Ops, []string{"lint"}) || got.Every != time.Minute || !slices.Equal(got.Sources, []string{store.SourceConfig, src}) {
		t.Errorf("merged a = %+v, want the config's definition listed by both", got)
	}
	if got := get(t, c, "b"); !slices.Equal(got.Ops, []string{"preflight"}) {
		t.Errorf("merged new b = %+v", got)
	}
}

func testEndpointsLatest(t *testing.T, c Catalog) {
	ctx := context.Background()
	for _, o := range []store.Observation{obs("a", "check", 1, t0), obs("a", "check", 2, t0.Add(time.Hour)), obs("a", "lint", 1, t0), obs("b", "check", 5, t0), obs("c", "check", 1, t0)} {
		add(t, c, o)
	}
	got, err := c.LatestObservations(ctx, []string{"b", "a", "none"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range got {
		keys = append(keys, o.Endpoint+"/"+o.Op+"/"+strconv.FormatInt(o.Slot, 10))
	}
	if want := []string{"a/check/2", "a/lint/1", "b/check/5"}; !slices.Equal(keys, want) {
		t.Errorf("latest = %v, want %v", keys, want)
	}
	if got, err := c.LatestObservations(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("latest of none = %v, %v", got, err)
	}
}

// testEndpointsSourcesBatches: a read of more endpoints than one sources
// query takes (2,345: three batches) gives every endpoint its own sources.
func testEndpointsSourcesBatches(t *testing.T, c Catalog) {
	seen := time.Unix(1_800_000_000, 0)
	var a, b []store.EndpointRecord
	for i := range 2345 {
		e := rec("e" + strconv.Itoa(100000+i))
		a = append(a, e)
		if i%3 == 0 {
			b = append(b, e)
		}
	}
	put(t, c, "https://a.example/", seen, a...)
	put(t, c, "https://b.example/", seen, b...)
	eps, total, err := c.ListEndpoints(context.Background(), store.EndpointQuery{})
	if err != nil || total != 2345 || len(eps) != 2345 {
		t.Fatalf("ListEndpoints: %d of %d, %v", len(eps), total, err)
	}
	for i, e := range eps {
		want := []string{"https://a.example/"}
		if i%3 == 0 {
			want = append(want, "https://b.example/")
		}
		if !slices.Equal(e.Sources, want) {
			t.Fatalf("%s: sources %v, want %v", e.ID, e.Sources, want)
		}
	}
}
