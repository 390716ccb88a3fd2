package monitorhttp

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzPageOf: any query is either refused or gives a page of at most
// MaxPerPage endpoints within the list, and links that parse; never a
// panic.
func FuzzPageOf(f *testing.F) {
	for _, q := range []string{"", "page=2", "page=3&per_page=100", "per_page=101", "page=0", "page=999999999", "page=1&page=2", "per_page=%2B5",
		"status=critical", "status=nope", "network=eip155:8453&source=config", "source=a&source=b", "status=retired&page=2"} {
		f.Add(q, 250)
	}
	f.Fuzz(func(t *testing.T, q string, n int) {
		n = min(max(n, 0), 2000)
		r := httptest.NewRequest("GET", "/status", nil)
		r.URL.RawQuery = q
		mq, pg, ok := pageOf(r)
		if !ok {
			return
		}
		pg.finish(n, "/status")
		if mq.Limit > MaxPerPage || mq.Limit != pg.PerPage || mq.Offset != (pg.Page-1)*pg.PerPage || pg.Total != n || pg.Page < 1 {
			t.Fatalf("%q over %d: %+v, %+v", q, n, mq, pg)
		}
		for _, l := range []string{pg.Next, pg.Prev} {
			u, err := url.Parse(l)
			if err != nil {
				t.Fatalf("link %q", l)
			}
			if l != "" {
				r2 := httptest.NewRequest("GET", "/status", nil)
				r2.URL.RawQuery = u.RawQuery
				if mq2, _, ok := pageOf(r2); !ok || mq2.Status != mq.Status || mq2.Network != mq.Network || mq2.Source != mq.Source {
					t.Fatalf("link %q does not keep the filters of %q", l, q)
				}
			}
		}
	})
}
