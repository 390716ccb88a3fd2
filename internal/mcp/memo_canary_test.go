package mcp

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

// TestMemoToolCarriesNoKeyName: the x402_memo result (structured content and
// text) carries no key name the seller chose, even a 10 kB one; the census
// counts it (issue 20).
func TestMemoToolCarriesNoKeyName(t *testing.T) {
	canary := "KEYCANARY" + strings.Repeat("k", 10<<10)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		memo := fmt.Sprintf("pv-%010d", n.Add(1))
		a0 := fmt.Sprintf(`{"scheme":"exact","network":"solana","amount":"1","payTo":"Wallet111",%q:1,"extra":{"memo":%q,%q:2}}`, canary, memo, canary)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[`+a0+`]}`)))
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprintf(w, `{"x402Version":1,"accepts":[%s]}`, a0)
	}))
	t.Cleanup(srv.Close)
	res := call(t, connect(t, loopbackConfig()), ToolMemo, map[string]any{"url": srv.URL + "/paid"})
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "KEYCANARY") {
		t.Fatalf("x402_memo carries a seller-chosen key name (%d bytes)", len(raw))
	}
	m := structured(t, res)
	if m["state"] != "BOUND" {
		t.Fatalf("state %v", m["state"])
	}
	census := m["factors"].(map[string]any)["correlation_census"].(map[string]any)
	body := census["fetch1"].(map[string]any)["body"].(map[string]any)
	if body["unlisted"] != float64(1) {
		t.Errorf("fetch1 body census %v, want the one canary name counted", body)
	}
}
