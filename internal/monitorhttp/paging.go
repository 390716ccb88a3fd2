package monitorhttp

import (
	"net/http"
	"strconv"

	"github.com/exchangerebel/payability/internal/monitor"
)

// Pagination of the endpoint lists (/status, /api/v1/endpoints): at most
// MaxPerPage endpoints per request, so that a request's cost is bounded by
// the endpoints it shows.
const (
	DefaultPerPage = 100
	MaxPerPage     = 100
)

// paging is one page of the configured endpoints.
type paging struct {
	Page, PerPage, Total, Pages int
	Prev, Next                  string // links, "" at an end
}

// pageOf reads ?page= (from 1) and ?per_page= (1 to MaxPerPage); ok is false
// for a value out of range or not a decimal integer. A page beyond the last
// is empty, not an error.
func pageOf(r *http.Request, eps []monitor.Endpoint, path string) ([]monitor.Endpoint, paging, bool) {
	p := paging{Page: 1, PerPage: DefaultPerPage, Total: len(eps)}
	for name, dst := range map[string]*int{"page": &p.Page, "per_page": &p.PerPage} {
		v := r.URL.Query()[name]
		if len(v) == 0 {
			continue
		}
		n, err := strconv.Atoi(v[0])
		if len(v) > 1 || err != nil || n < 1 || len(v[0]) > 9 || v[0][0] == '+' {
			return nil, p, false
		}
		*dst = n
	}
	if p.PerPage > MaxPerPage {
		return nil, p, false
	}
	p.Pages = max(1, (len(eps)+p.PerPage-1)/p.PerPage)
	link := func(n int) string {
		return path + "?page=" + strconv.Itoa(n) + "&per_page=" + strconv.Itoa(p.PerPage)
	}
	if p.Page > 1 {
		p.Prev = link(min(p.Page-1, p.Pages))
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	start := min((p.Page-1)*p.PerPage, len(eps))
	return eps[start:min(start+p.PerPage, len(eps))], p, true
}
