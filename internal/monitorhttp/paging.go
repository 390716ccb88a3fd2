package monitorhttp

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
)

// Pagination of the endpoint lists (/status, /api/v1/endpoints): at most
// MaxPerPage endpoints per request, so that a request's cost is bounded by
// the endpoints it shows; the filters (?status=, ?network=, ?source=) run in
// the store, on the summary kept as observations land.
const (
	DefaultPerPage = 100
	MaxPerPage     = 100
)

// paging is one page of the selected endpoints.
type paging struct {
	Page, PerPage, Total, Pages int
	Prev, Next                  string // links, "" at an end
	filters                     url.Values
}

// filterNames are the list filters, each given at most once.
var filterNames = []string{"status", "network", "source"}

// pageOf reads ?page= (from 1), ?per_page= (1 to MaxPerPage) and the filters;
// ok is false for a value out of range or not a decimal integer, a filter
// given twice, or a status that is not a status word (or retired). A page
// beyond the last is empty, not an error.
func pageOf(r *http.Request) (monitor.Query, paging, bool) {
	p := paging{Page: 1, PerPage: DefaultPerPage, filters: url.Values{}}
	q := r.URL.Query()
	for name, dst := range map[string]*int{"page": &p.Page, "per_page": &p.PerPage} {
		v := q[name]
		if len(v) == 0 {
			continue
		}
		n, err := strconv.Atoi(v[0])
		if len(v) > 1 || err != nil || n < 1 || len(v[0]) > 9 || v[0][0] == '+' {
			return monitor.Query{}, p, false
		}
		*dst = n
	}
	if p.PerPage > MaxPerPage {
		return monitor.Query{}, p, false
	}
	mq := monitor.Query{Offset: (p.Page - 1) * p.PerPage, Limit: p.PerPage}
	for _, name := range filterNames {
		v := q[name]
		if len(v) == 0 {
			continue
		}
		if len(v) > 1 || v[0] == "" || !store.ValidSource(v[0]) {
			return monitor.Query{}, p, false
		}
		p.filters.Set(name, v[0])
	}
	mq.Network, mq.Source = p.filters.Get("network"), p.filters.Get("source")
	switch st := monitor.Status(p.filters.Get("status")); st {
	case "", monitor.Operational, monitor.Degraded, monitor.Critical, monitor.Unknown, monitor.Retired:
		mq.Status = st
	default:
		return monitor.Query{}, p, false
	}
	return mq, p, true
}

// finish sets the page count and the links (which keep the filters) once
// the total is known.
func (p *paging) finish(total int, path string) {
	p.Total = total
	p.Pages = max(1, (total+p.PerPage-1)/p.PerPage)
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range p.filters {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		v.Set("per_page", strconv.Itoa(p.PerPage))
		return path + "?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(min(p.Page-1, p.Pages))
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
}
