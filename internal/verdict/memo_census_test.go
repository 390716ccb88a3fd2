package verdict

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// canaryKey is a 10 kB key name of the seller's choosing.
var canaryKey = "canary-" + strings.Repeat("K", 10<<10)

// TestMemoCensusNeverCarriesASellerName: R24 (issue 20). A key name outside
// CensusNames, on either leg, in accepts[0] or in its extra, is counted and
// never reported; the JSON of the result does not contain it.
func TestMemoCensusNeverCarriesASellerName(t *testing.T) {
	a0 := fmt.Sprintf(`{"payTo":"P","%s":1,"extra":{"memo":"%%s","%s":2,"nonce":"n"}}`, canaryKey, canaryKey)
	h := func(memo string) *string { return rvB64(`{"accepts":[` + fmt.Sprintf(a0, memo) + `]}`) }
	b := func(memo string) string { return `{"accepts":[` + fmt.Sprintf(a0, memo) + `]}` }
	r := Memo(rvCap(402, h("pv-aaaa-0001"), b("pv-aaaa-0001")), rvCap(402, h("pv-aaaa-0002"), b("pv-aaaa-0002")))
	if r.State != Bound {
		t.Fatalf("state %s, want BOUND", r.State)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "KKKK") || strings.Contains(string(raw), "nonce") {
		t.Fatalf("the result carries a seller-chosen name: %.200s", raw)
	}
	for _, l := range []*LegCensus{r.Factors.CorrelationCensus.Fetch1.Body, r.Factors.CorrelationCensus.Fetch1.Header,
		r.Factors.CorrelationCensus.Fetch2.Body, r.Factors.CorrelationCensus.Fetch2.Header} {
		// The canary once (accepts[0] and extra are one union) and nonce.
		if l == nil || !slices.Equal(l.Names, []string{"extra", "memo", "payTo"}) || l.Unlisted != 2 {
			t.Fatalf("leg census %+v, want [extra memo payTo]+2", l)
		}
	}
}

// TestMemoCensusListsEveryPublishedName: each name of CensusNames is reported
// by name, in byte order, wherever it sits (accepts[0] or extra); the same
// name in another case is unlisted.
func TestMemoCensusListsEveryPublishedName(t *testing.T) {
	var names []string
	for n := range CensusNames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			for _, where := range []string{`{"%s":1}`, `{"extra":{"%s":1}}`} {
				body := `{"accepts":[` + fmt.Sprintf(where, n) + `],"memo":"pv-aaaa-0001"}`
				upper := `{"accepts":[` + fmt.Sprintf(where, strings.ToUpper(n[:1])+n[1:]) + `],"memo":"pv-aaaa-0002"}`
				r := Memo(rvCap(402, nil, body), rvCap(402, nil, upper))
				got, other := r.Factors.CorrelationCensus.Fetch1.Body, r.Factors.CorrelationCensus.Fetch2.Body
				if got == nil || !slices.Contains(got.Names, n) || got.Unlisted != 0 || !slices.IsSorted(got.Names) {
					t.Errorf("%s: census %+v, want %s listed", where, got, n)
				}
				if other == nil || slices.Contains(other.Names, strings.ToUpper(n[:1])+n[1:]) || other.Unlisted != 1 {
					t.Errorf("%s: capitalised census %+v, want it unlisted", where, other)
				}
			}
		})
	}
}

// TestMemoCensusNullAndEmpty: R24 — a leg not read is null; a leg read with
// no object accepts[0] is names [] and unlisted 0.
func TestMemoCensusNullAndEmpty(t *testing.T) {
	r := Memo(rvCap(402, nil, `{"accepts":[],"memo":"pv-aaaa-0001"}`), rvCap(402, rvB64(`[1]`), `{"accepts":[],"memo":"pv-aaaa-0002"}`))
	c := r.Factors.CorrelationCensus
	if c.Fetch1.Header != nil || c.Fetch2.Header != nil {
		t.Fatalf("unread header legs: %+v %+v", c.Fetch1.Header, c.Fetch2.Header)
	}
	raw, _ := json.Marshal(c)
	if want := `{"fetch1":{"body":{"names":[],"unlisted":0},"header":null},"fetch2":{"body":{"names":[],"unlisted":0},"header":null}}`; string(raw) != want {
		t.Fatalf("census\n got %s\nwant %s", raw, want)
	}
}
