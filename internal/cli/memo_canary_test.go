package cli

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// keyCanary is a 10 kB key name of the seller's choosing (issue 20).
var keyCanary = "KEYCANARY" + strings.Repeat("k", 10<<10)

// keyCanarySeller answers a fleet-shaped challenge whose accepts[0] and
// accepts[0].extra, on both legs, carry seller-chosen key names (keyCanary
// and a short one); memos change per request, so memo grades BOUND.
func keyCanarySeller(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		url := srv.URL + "/paid"
		memo := fmt.Sprintf("pv-%010d", n.Add(1))
		body := fmt.Sprintf(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","amount":"10000","maxAmountRequired":"10000","payTo":"Wallet111","resource":%q,"description":"one call",%q:1,"extra":{"usdc_token_account":"Token111","memo":%q,%q:2,"KEYCANARY-short":3}}]}`,
			url, keyCanary, memo, keyCanary)
		hdr := fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"amount":"10000","payTo":"Wallet111",%q:1,"extra":{"memo":%q,"KEYCANARY-short":3}}]}`, url, keyCanary, memo)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(hdr)))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMemoOutputCarriesNoKeyName: memo's text, --json and every --format
// carry no key name the seller chose; the census counts them (issue 20).
func TestMemoOutputCarriesNoKeyName(t *testing.T) {
	url := keyCanarySeller(t).URL + "/paid"
	dir := t.TempDir()
	for _, mode := range [][]string{nil, {"--json"}} {
		args := append([]string{"memo", "--allow-private", "--fail-on", "never"}, mode...)
		for _, f := range machineFormats {
			args = append(args, "--format", f+"="+filepath.Join(dir, "memo."+f))
		}
		stdout, stderr, code := runReal(t, append(args, url)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", mode, code, stderr)
		}
		outputs := map[string]string{"stdout": stdout, "stderr": stderr}
		for _, f := range machineFormats {
			b, err := os.ReadFile(filepath.Join(dir, "memo."+f))
			if err != nil {
				t.Fatal(err)
			}
			outputs[f] = string(b)
		}
		if !strings.Contains(stdout, "BOUND") {
			t.Fatalf("%v: not BOUND:\n%.2000s", mode, stdout)
		}
		wantUnlisted := "correlation_census.fetch1.body.unlisted    2"
		if mode != nil {
			wantUnlisted = `"unlisted": 2`
		}
		if !strings.Contains(stdout, wantUnlisted) {
			t.Errorf("%v: the census does not count the unlisted names:\n%.3000s", mode, stdout)
		}
		for name, s := range outputs {
			if strings.Contains(s, "KEYCANARY") {
				t.Errorf("%v %s output carries a seller-chosen key name (%d bytes)", mode, name, len(s))
			}
		}
		rendered, _, code := runReal(t, "render", "--format", "markdown", filepath.Join(dir, "memo.json"))
		if code != ExitOK || strings.Contains(rendered, "KEYCANARY") {
			t.Errorf("render: exit %d, carries a key name: %v", code, strings.Contains(rendered, "KEYCANARY"))
		}
	}
}
