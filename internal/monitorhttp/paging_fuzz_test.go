package monitorhttp

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/exchangerebel/payability/internal/monitor"
)

// FuzzPageOf: any query is either refused or gives a page of at most
// MaxPerPage endpoints, in order, within the list; never a panic.
func FuzzPageOf(f *testing.F) {
	for _, q := range []string{"", "page=2", "page=3&per_page=100", "per_page=101", "page=0", "page=999999999", "page=1&page=2", "per_page=%2B5"} {
		f.Add(q, 250)
	}
	f.Fuzz(func(t *testing.T, q string, n int) {
		n = min(max(n, 0), 2000)
		var eps []monitor.Endpoint
		for i := range n {
			eps = append(eps, monitor.Endpoint{ID: fmt.Sprint(i)})
		}
		r := httptest.NewRequest("GET", "/status", nil)
		r.URL.RawQuery = q
		got, pg, ok := pageOf(r, eps, "/status")
		if !ok {
			return
		}
		if len(got) > MaxPerPage || len(got) > pg.PerPage || pg.Total != n || pg.Page < 1 {
			t.Fatalf("%q over %d: %d endpoints, %+v", q, n, len(got), pg)
		}
		if len(got) > 0 && got[0].ID != fmt.Sprint((pg.Page-1)*pg.PerPage) {
			t.Fatalf("%q: the page starts at %s", q, got[0].ID)
		}
		if _, err := url.Parse(pg.Next); err != nil {
			t.Fatalf("next link %q", pg.Next)
		}
	})
}
