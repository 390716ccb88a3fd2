package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/gate"
)

// TestCustodyCanary serves a unique canary from targets (body, headers, a
// redirect location), runs paid and free calls and failing paths, then
// searches the SQLite files (-wal included), the log, /metrics and every
// answer: the canary, its SHA-256 and its base64 appear nowhere.
func TestCustodyCanary(t *testing.T) {
	h := newHarness(t, ServeAll)
	const canary = "CANARY-7f3e9b21-custody-payability"
	sum := sha256.Sum256([]byte(canary))
	needles := []string{canary, hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:]),
		base64.StdEncoding.EncodeToString([]byte(canary)), base64.RawURLEncoding.EncodeToString(sum[:])}

	challenge := fmt.Sprintf(`{"x402Version":1,"error":%q,"accepts":[{"scheme":"exact","network":"solana","amount":"1","payTo":%q,"resource":%q,"description":%q,"extra":{"memo":%q,"usdc_token_account":%q}}],"memo":%q}`,
		canary, canary, canary, canary, canary, canary, canary)
	mux := http.NewServeMux()
	mux.HandleFunc("/paid", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(`{"accepts":[{"extra":{"memo":"`+canary+`"}}]}`)))
		w.Header().Set("X-Canary", canary)
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, challenge)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/"+canary, http.StatusFound)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, canary+strings.Repeat("x", 70000))
	})
	mux.HandleFunc("/open", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"result":"`+canary+`"}`)
	})
	seller := httptest.NewServer(mux)
	defer seller.Close()

	var answers []string
	record := func(r response) {
		answers = append(answers, string(r.body))
		for k, vs := range r.header {
			answers = append(answers, k+": "+strings.Join(vs, ","))
		}
	}
	for _, path := range []string{"/paid", "/redirect", "/error", "/open"} {
		for _, route := range allPaidRoutes {
			res, _, _ := h.payAndPost(route, seller.URL+path)
			if res.status != http.StatusOK {
				t.Fatalf("%s %s: %d %s", route, path, res.status, res.body)
			}
			record(res)
		}
		record(h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":%q,"caller":"c-%s"}`, seller.URL+path, path), nil))
		record(h.do(http.MethodPost, "/toll/rail-probe/precheck", fmt.Sprintf(`{"url":%q,"caller":"c-%s"}`, seller.URL+path, path), nil))
		record(h.do(http.MethodPost, "/toll/x402/precheck", fmt.Sprintf(`{"url":%q,"op":"preflight"}`, seller.URL+path), nil))
	}
	// Failing paths: refusals, a forged payment, malformed input.
	record(h.do(http.MethodPost, "/toll/payability/check", fmt.Sprintf(`{"url":%q}`, seller.URL+"/paid"),
		map[string]string{gate.HeaderPaymentTx: h.chain.payNothing(), gate.HeaderPaymentMemo: canary}))
	record(h.do(http.MethodPost, "/toll/payability/check", `{"url":"`+canary, nil))
	record(h.do(http.MethodGet, "/metrics", "", nil))

	var searched []string
	for _, a := range answers {
		searched = append(searched, reportsWithoutURL(a, seller.URL))
	}
	searched = append(searched, h.logs.String())
	searched = append(searched, h.databaseFiles()...)
	for _, s := range searched {
		for _, n := range needles {
			if strings.Contains(s, n) {
				t.Errorf("custody: %q found in %.120q", n, s)
			}
		}
	}
}

// reportsWithoutURL removes the called URL, which reports carry by design
// (the criteria allow it), before the search.
func reportsWithoutURL(s, base string) string {
	return strings.ReplaceAll(s, base, "<called-url>")
}

// databaseFiles closes the store (a flush) and returns the contents of its
// files, the -wal file included, for a custody search.
func (h *harness) databaseFiles() []string {
	h.t.Helper()
	h.store.Close()
	files, _ := filepath.Glob(h.dbPath + "*")
	if len(files) == 0 {
		h.t.Fatal("no database files to search")
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}
