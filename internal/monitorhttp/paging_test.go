package monitorhttp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
)

// TestStatusAndAPIArePaginated: beyond 100 endpoints the page and the list
// are paginated (?page=, ?per_page= at most 100); a bad value is a 400, a
// page past the end is empty.
func TestStatusAndAPIArePaginated(t *testing.T) {
	s := newSeller(t)
	var eps []monitor.Endpoint
	for i := range 205 {
		eps = append(eps, monitor.Endpoint{ID: fmt.Sprintf("e%03d", i), URL: s.URL + "/paid", Ops: []string{"check"}})
	}
	h := newHarness(t, endpointsConfig(time.Minute, eps...))
	sections := func(path string) (int, string) {
		code, _, body := h.get(path)
		return strings.Count(string(body), `<section class="endpoint"`), fmt.Sprint(code) + string(body)
	}
	for _, tc := range []struct {
		path        string
		n           int
		first, last string
		next, prev  bool
	}{
		{"/status", 100, "e000", "e099", true, false},
		{"/status?page=2", 100, "e100", "e199", true, true},
		{"/status?page=3", 5, "e200", "e204", false, true},
		{"/status?page=2&per_page=50", 50, "e050", "e099", true, true},
		{"/status?per_page=100&page=3", 5, "e200", "e204", false, true},
	} {
		n, body := sections(tc.path)
		if !strings.HasPrefix(body, "200") || n != tc.n || !strings.Contains(body, `id="ep-`+tc.first+`"`) || !strings.Contains(body, `id="ep-`+tc.last+`"`) ||
			strings.Contains(body, `rel="next"`) != tc.next || strings.Contains(body, `rel="prev"`) != tc.prev || !strings.Contains(body, "205 monitored endpoints") {
			t.Errorf("GET %s: %d sections (want %d, %s…%s, next %v prev %v)", tc.path, n, tc.n, tc.first, tc.last, tc.next, tc.prev)
		}
	}
	if n, body := sections("/status?page=9"); n != 0 || !strings.HasPrefix(body, "200") {
		t.Errorf("a page past the end: %d sections, %.3s", n, body)
	}
	for _, bad := range []string{"page=0", "page=-1", "page=x", "page=+2", "per_page=101", "per_page=0", "page=1&page=2", "page=1e3"} {
		for _, p := range []string{"/status?", "/api/v1/endpoints?"} {
			var v map[string]any
			if code := h.getJSON(p+bad, &v); code != 400 || v["error"] != "bad_page" {
				t.Errorf("GET %s%s: %d %v, want 400 bad_page", p, bad, code, v)
			}
		}
	}
	var list struct {
		Endpoints            []struct{ ID string }
		Page, PerPage, Total int
	}
	if code := h.getJSON("/api/v1/endpoints?page=3", &list); code != 200 || len(list.Endpoints) != 5 || list.Endpoints[0].ID != "e200" || list.Page != 3 || list.Total != 205 {
		t.Errorf("API page 3: %d %+v", code, list)
	}
	list.Endpoints = nil
	if h.getJSON("/api/v1/endpoints", &list); len(list.Endpoints) != 100 {
		t.Errorf("API default page: %d endpoints, want 100", len(list.Endpoints))
	}
}
