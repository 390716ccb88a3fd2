package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSoldMemoCarriesNoKeyName: the signed memo report sold by serve, the
// log and the database carry no key name the seller chose, even a 10 kB one;
// the census counts it (issue 20).
func TestSoldMemoCarriesNoKeyName(t *testing.T) {
	h := newHarness(t, ServeAll)
	canary := "KEYCANARY" + strings.Repeat("k", 10<<10)
	var n atomic.Int64
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		memo := fmt.Sprintf("pv-%010d", n.Add(1))
		a0 := fmt.Sprintf(`{"scheme":"exact","network":"solana","amount":"1","payTo":"Wallet111",%q:1,"extra":{"memo":%q,%q:2}}`, canary, memo, canary)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[`+a0+`]}`)))
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprintf(w, `{"x402Version":1,"accepts":[%s]}`, a0)
	}))
	defer seller.Close()

	res, _, _ := h.payAndPost("/toll/payability/memo", seller.URL+"/paid")
	if res.status != http.StatusOK {
		t.Fatalf("memo: %d %.300s", res.status, res.body)
	}
	var rep struct {
		State   string `json:"state"`
		Factors struct {
			Census map[string]map[string]*struct {
				Names    []string `json:"names"`
				Unlisted int      `json:"unlisted"`
			} `json:"correlation_census"`
		} `json:"factors"`
	}
	if err := json.Unmarshal(res.body, &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	if l := rep.Factors.Census["fetch2"]["header"]; rep.State != "BOUND" || l == nil || l.Unlisted != 1 {
		t.Fatalf("state %s, fetch2 header census %+v", rep.State, l)
	}
	searched := []string{string(res.body), h.logs.String()}
	for k, vs := range res.header {
		searched = append(searched, k+": "+strings.Join(vs, ","))
	}
	searched = append(searched, h.databaseFiles()...)
	for _, s := range searched {
		if strings.Contains(s, "KEYCANARY") {
			t.Errorf("a seller-chosen key name in %.120q", s)
		}
	}
}
