package monitorhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/store"
)

// send makes one request to the harness's API with a JSON body and the
// given Authorization header ("" none); it returns the status and the body.
func (h *harness) send(method, path, auth, body string) (int, http.Header, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.api.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

const bearer = "Bearer " + opsToken

func TestEndpointsAPINeedsTheToken(t *testing.T) {
	s := newSeller(t)
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "a", URL: s.URL + "/paid", Ops: []string{"check"}}))
	add := `{"id":"b","url":"` + s.URL + `/b","ops":["check"],"every":"1m"}`
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "bearer " + opsToken, "Basic " + opsToken, bearer + "x", "Bearer " + opsToken[:len(opsToken)-1]} {
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/api/v1/endpoints", add}, {"PATCH", "/api/v1/endpoints/a", `{"every":"2m"}`}, {"DELETE", "/api/v1/endpoints/a", ""},
		} {
			code, hdr, body := h.send(r.method, r.path, auth, r.body)
			if code != http.StatusUnauthorized || body != `{"error":"unauthorized"}`+"\n" || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %q: %d %s, want 401 unauthorized", r.method, r.path, auth, code, body)
			}
		}
	}
	if eps, total, _ := h.m.Endpoints(context.Background(), monitor.Query{}); total != 1 || eps[0].Every != time.Minute {
		t.Errorf("refused requests changed the set: %+v", eps)
	}
	// Without a token configured the API is read-only, whatever is sent.
	ro := httptest.NewServer(monitorhttp.New(monitorhttp.Config{Monitor: h.m}))
	defer ro.Close()
	req, _ := http.NewRequest("POST", ro.URL+"/api/v1/endpoints", strings.NewReader(add))
	req.Header.Set("Authorization", bearer)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || string(b) != `{"error":"read_only"}`+"\n" {
		t.Errorf("read-only POST: %d %s, want 403 read_only", res.StatusCode, b)
	}
	if res, err := http.Get(ro.URL + "/api/v1/endpoints/a"); err != nil || res.StatusCode != 200 {
		t.Errorf("read-only GET: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

func TestEndpointsAPIAddPatchDelete(t *testing.T) {
	s := newSeller(t)
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "a", URL: s.URL + "/paid", Ops: []string{"check"}}))
	one := `{"id":"b","url":"` + s.URL + `/b","ops":["check","lint"],"every":"90s","network":"eip155:8453"}`
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, one); code != 201 || body != `{"added":1,"ids":["b"]}`+"\n" {
		t.Fatalf("POST one: %d %s", code, body)
	}
	batch := `{"endpoints":[{"id":"c","url":"` + s.URL + `/c","ops":["check"],"every":"1m"},{"id":"d","url":"` + s.URL + `/d","method":"POST","body":"{}","ops":["check"],"every":"1m"}]}`
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, batch); code != 201 || body != `{"added":2,"ids":["c","d"]}`+"\n" {
		t.Fatalf("POST batch: %d %s", code, body)
	}
	var v monitorhttp.EndpointView
	if code := h.getJSON("/api/v1/endpoints/b", &v); code != 200 || v.EverySeconds != 90 || !slices.Equal(v.Ops, []string{"check", "lint"}) ||
		!slices.Equal(v.Sources, []string{store.SourceAPI}) || v.StatusSource == nil || *v.StatusSource != "lint" {
		t.Errorf("GET b: %d %+v", code, v)
	}
	// An added endpoint is checked like a configured one.
	if o := h.check("b", "check"); !o.Passing {
		t.Errorf("b's check: %+v", o)
	}
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, one); code != 409 || body != `{"error":"exists"}`+"\n" {
		t.Errorf("POST an existing id: %d %s", code, body)
	}
	// A configured id is taken too, and a batch is all or none.
	if code, _, _ := h.send("POST", "/api/v1/endpoints", bearer, `{"endpoints":[{"id":"e","url":"`+s.URL+`/e","ops":["check"],"every":"1m"},{"id":"a","url":"`+s.URL+`/a","ops":["check"],"every":"1m"}]}`); code != 409 {
		t.Errorf("POST a batch with a taken id: %d", code)
	}
	if code, _, _ := h.send("GET", "/api/v1/endpoints/e", "", ""); code != 404 {
		t.Errorf("e of a refused batch: %d, want 404", code)
	}
	if code, _, body := h.send("PATCH", "/api/v1/endpoints/b", bearer, `{"every":"2m","network":"solana"}`); code != 400 || !strings.Contains(body, `"field":"network"`) {
		t.Errorf("PATCH with a bad network: %d %s", code, body)
	}
	if code, _, body := h.send("PATCH", "/api/v1/endpoints/b", bearer, `{"every":"2m","ops":["lint"]}`); code != 200 || !strings.Contains(body, `"every_seconds":120`) || !strings.Contains(body, `"ops":["lint"]`) {
		t.Errorf("PATCH b: %d %s", code, body)
	}
	if e, _, _ := h.m.Endpoint(context.Background(), "b"); e.Every != 2*time.Minute || e.Network != "eip155:8453" || !slices.Equal(e.Sources, []string{store.SourceAPI}) {
		t.Errorf("b after PATCH: %+v", e)
	}
	if code, _, _ := h.send("PATCH", "/api/v1/endpoints/nope", bearer, `{"every":"2m"}`); code != 404 {
		t.Errorf("PATCH nope: %d", code)
	}
	if code, _, _ := h.send("DELETE", "/api/v1/endpoints/c", bearer, ""); code != 204 {
		t.Errorf("DELETE c: %d", code)
	}
	if code, _, _ := h.send("DELETE", "/api/v1/endpoints/c", bearer, ""); code != 404 {
		t.Errorf("DELETE c again: %d", code)
	}
	if got := h.changes.Load(); got != 4 {
		t.Errorf("the API told %d changes, want 4 (two POSTs, a PATCH, a DELETE)", got)
	}
	var list struct{ Endpoints []monitorhttp.EndpointView }
	h.getJSON("/api/v1/endpoints", &list)
	var ids []string
	for _, e := range list.Endpoints {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "d"}) {
		t.Errorf("endpoints %v, want [a b d]", ids)
	}
}

// TestEndpointsAPIStrictBodies: every refusal names the field and a static
// reason, never a value of the body, and changes nothing.
func TestEndpointsAPIStrictBodies(t *testing.T) {
	const canary = "CANARY-7f3e"
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "a", URL: "http://127.0.0.1:9/paid", Ops: []string{"check"}}))
	ep := func(extra string) string {
		return `{"id":"x","url":"http://127.0.0.1:9/x","ops":["check"],"every":"1m"` + extra + `}`
	}
	var many []string
	for i := range monitor.MaxBatch + 1 {
		many = append(many, fmt.Sprintf(`{"id":"m%d","url":"http://127.0.0.1:9/m","ops":["check"],"every":"1m"}`, i))
	}
	for _, tc := range []struct {
		name, body, field string
		code              int
	}{
		{"unknown key", ep(`,"` + canary + `":1`), canary, 400},
		{"repeated key", ep(`,"every":"2m"`), "every", 400},
		{"bad id", strings.Replace(ep(""), `"x"`, `"X`+canary+`"`, 1), "id", 400},
		{"url refused by the policy", strings.Replace(ep(""), "http://127.0.0.1:9/x", "ftp://"+canary+"/x", 1), "url", 400},
		{"bad op", strings.Replace(ep(""), `"check"`, `"`+canary+`"`, 1), "ops[0]", 400},
		{"every too short", strings.Replace(ep(""), `"1m"`, `"10ms"`, 1), "every", 400},
		{"body without POST", ep(`,"body":"` + canary + `"`), "body", 400},
		{"wrong type", ep(`,"network":5`), "network", 400},
		{"two documents", ep("") + ep(""), "", 400},
		{"empty batch", `{"endpoints":[]}`, "endpoints", 400},
		{"repeated id in a batch", `{"endpoints":[` + ep("") + `,` + ep("") + `]}`, "endpoints[1].id", 400},
		{"batch over its limit", `{"endpoints":[` + strings.Join(many, ",") + `]}`, "endpoints", 400},
		{"not JSON", canary, "", 400},
	} {
		code, _, body := h.send("POST", "/api/v1/endpoints", bearer, tc.body)
		var got map[string]string
		if err := json.Unmarshal([]byte(body), &got); err != nil || code != tc.code || got["error"] != "bad_endpoint" ||
			(tc.field != canary && got["field"] != tc.field) || got["reason"] == "" {
			t.Errorf("%s: %d %s, want %d bad_endpoint at %q", tc.name, code, body, tc.code, tc.field)
		}
		if tc.field != canary && strings.Contains(body, canary) {
			t.Errorf("%s: the answer echoes the body: %s", tc.name, body)
		}
	}
	// The size cap, at its edge: one byte over is refused before parsing.
	over := `{"id":"x","url":"http://127.0.0.1:9/x","ops":["check"],"every":"1m","body":"` + strings.Repeat(" ", monitor.MaxRequestBytes) + `"}`
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, over); code != 413 || !strings.Contains(body, "body_too_large") {
		t.Errorf("over the cap: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", h.api.URL+"/api/v1/endpoints", strings.NewReader(ep("")))
	req.Header.Set("Authorization", bearer)
	req.Header.Set("Content-Type", "text/plain")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 415 {
		t.Errorf("text/plain: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if code, _, body := h.send("PATCH", "/api/v1/endpoints/a", bearer, `{"id":"b"}`); code != 400 || !strings.Contains(body, `"field":"id"`) {
		t.Errorf("PATCH of the id: %d %s", code, body)
	}
	// The address guard, as a function of the URL: without AllowPrivate a
	// literal private or loopback address is refused (nothing is dialled).
	h.m.AllowPrivate = false
	for _, u := range []string{"http://10.0.0.1/x", "http://169.254.169.254/x", "http://[::1]:9/x", "http://localhost/x"} {
		code, _, body := h.send("POST", "/api/v1/endpoints", bearer, `{"endpoints":[{"id":"g","url":"`+u+`","ops":["check"],"every":"1m"}]}`)
		if code != 400 || !strings.Contains(body, `"field":"endpoints[0].url","reason":"refused by the address guard"`) {
			t.Errorf("POST %s: %d %s", u, code, body)
		}
	}
	if code, _, body := h.send("PATCH", "/api/v1/endpoints/a", bearer, `{"url":"http://192.168.0.1/"}`); code != 400 || !strings.Contains(body, "address guard") {
		t.Errorf("PATCH to a private address: %d %s", code, body)
	}
	h.m.AllowPrivate = true
	if _, total, _ := h.m.Endpoints(context.Background(), monitor.Query{}); total != 1 {
		t.Errorf("%d endpoints after refused bodies, want 1", total)
	}
}

// TestEndpointsAPILimitAtItsEdge: the store's limit of active endpoints
// (store.MaxEndpoints, here the monitor's MaxEndpoints lowered to 3) admits
// the last one and refuses one more, writing nothing of its batch.
func TestEndpointsAPILimitAtItsEdge(t *testing.T) {
	if store.MaxEndpoints != 100000 {
		t.Fatalf("store.MaxEndpoints = %d, documented 100,000", store.MaxEndpoints)
	}
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "a", URL: "http://127.0.0.1:9/a", Ops: []string{"check"}}))
	h.m.MaxEndpoints = 3
	mk := func(ids ...string) string {
		var eps []string
		for _, id := range ids {
			eps = append(eps, `{"id":"`+id+`","url":"http://127.0.0.1:9/`+id+`","ops":["check"],"every":"1m"}`)
		}
		return `{"endpoints":[` + strings.Join(eps, ",") + `]}`
	}
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, mk("b", "c")); code != 201 {
		t.Fatalf("up to the limit: %d %s", code, body)
	}
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, mk("d")); code != 409 || body != `{"error":"too_many_endpoints"}`+"\n" {
		t.Errorf("one over the limit: %d %s", code, body)
	}
	if _, total, _ := h.m.Endpoints(context.Background(), monitor.Query{}); total != 3 {
		t.Errorf("%d endpoints, want 3", total)
	}
	// Deleting one makes room for one.
	h.send("DELETE", "/api/v1/endpoints/b", bearer, "")
	if code, _, _ := h.send("POST", "/api/v1/endpoints", bearer, mk("d")); code != 201 {
		t.Errorf("after a delete: %d", code)
	}
}

// TestEndpointsFiltered: ?status=, ?network= and ?source= select in the
// store from the summary of the newest observations, on /status and the
// API alike, and the page links keep the filters.
func TestEndpointsFiltered(t *testing.T) {
	var eps []monitor.Endpoint
	for i := range 6 {
		eps = append(eps, monitor.Endpoint{ID: fmt.Sprintf("e%d", i), URL: fmt.Sprintf("http://127.0.0.1:9/%d", i), Ops: []string{"preflight"}})
	}
	h := newHarness(t, endpointsConfig(time.Hour, eps...))
	ctx := context.Background()
	now := h.clock()
	for i, st := range []string{"GO", "STOP", "STOP", "HOLD"} { // e4, e5: never observed
		o := store.Observation{Endpoint: fmt.Sprintf("e%d", i), Op: "preflight", Slot: 1, At: now.Add(-time.Minute), Passing: st == "GO", State: st}
		if i == 2 {
			o.Network = "eip155:8453"
		}
		if _, err := h.m.History.AddObservation(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, body := h.send("POST", "/api/v1/endpoints", bearer, `{"id":"z","url":"http://127.0.0.1:9/z","ops":["lint"],"every":"1h"}`); code != 201 {
		t.Fatalf("POST z: %d %s", code, body)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"status=critical", []string{"e1", "e2"}},
		{"status=operational", []string{"e0"}},
		{"status=degraded", []string{"e3"}},
		{"status=unknown", []string{"e4", "e5", "z"}},
		{"network=eip155:8453", []string{"e2"}},
		{"source=api", []string{"z"}},
		{"source=config&status=critical", []string{"e1", "e2"}},
		{"status=critical&per_page=1&page=2", []string{"e2"}},
		{"status=retired", []string{}},
	} {
		var list struct {
			Endpoints []monitorhttp.EndpointView
			Total     int
			Next      *string
		}
		if code := h.getJSON("/api/v1/endpoints?"+tc.q, &list); code != 200 {
			t.Fatalf("%s: %d", tc.q, code)
		}
		got := []string{}
		for _, e := range list.Endpoints {
			got = append(got, e.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("API ?%s = %v, want %v", tc.q, got, tc.want)
		}
		code, _, body := h.get("/status?" + tc.q)
		n := strings.Count(string(body), `<section class="endpoint"`)
		if code != 200 || n != len(tc.want) {
			t.Errorf("/status?%s: %d, %d sections, want %d", tc.q, code, n, len(tc.want))
		}
	}
	// Two hours on, every observation is stale: all are unknown.
	h.advance(2 * time.Hour)
	var list struct{ Total int }
	if h.getJSON("/api/v1/endpoints?status=unknown", &list); list.Total != 7 {
		t.Errorf("stale: %d unknown, want 7", list.Total)
	}
	var paged struct{ Next *string }
	if h.getJSON("/api/v1/endpoints?status=unknown&per_page=2", &paged); paged.Next == nil || !strings.Contains(*paged.Next, "status=unknown") || !strings.Contains(*paged.Next, "page=2") {
		t.Errorf("next link %v does not keep the filter", paged.Next)
	}
}
