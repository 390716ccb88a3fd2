//go:build !quick

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/exchangerebel/payability/internal/gate"
)

// paidRPC is a Solana node that has seen one payment per registered
// signature: our token account credited 10000 USDC units with the memo.
type paidRPC struct {
	mu   sync.Mutex
	paid map[string]string
	tpl  []byte
}

func (p *paidRPC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Params []json.RawMessage `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	var sig string
	if len(req.Params) > 0 {
		json.Unmarshal(req.Params[0], &sig)
	}
	p.mu.Lock()
	memo, ok := p.paid[sig]
	p.mu.Unlock()
	if !ok {
		io.WriteString(w, `{"jsonrpc":"2.0","result":null,"id":1}`)
		return
	}
	q, _ := json.Marshal(memo)
	out := bytes.ReplaceAll(p.tpl, []byte(`"pbl1.ck.q7Rr2hV0bXo9Zl1cN4yT8wJm3Kd5HsAe"`), q)
	w.Write(bytes.ReplaceAll(out, []byte("51i4SVUrCEnHnQyXUUZJb2AZTiv49V6wvScdRVEPrRTx2zR6LPntGhFDGDjJWhZQk9fL9sTv8we19Q1p27bMwx7a"), []byte(sig)))
}

// Served with default flags, a paid op never reaches a loopback target: the
// address guard is on in the server path unless --allow-private-targets.
func TestServeRefusesPrivateTargetsByDefault(t *testing.T) {
	tpl, err := os.ReadFile("../server/testdata/paid_tx.json")
	if err != nil {
		t.Fatal(err)
	}
	rpc := &paidRPC{paid: map[string]string{}, tpl: tpl}
	node := httptest.NewServer(rpc)
	defer node.Close()
	var hits atomic.Int64
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer victim.Close()

	e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard}
	f := serveFlags{addr: "127.0.0.1:0", dataDir: t.TempDir(), service: "all", payTo: wallet, tokenAccount: account,
		solanaRPC: node.URL, network: "solana", commitment: "confirmed", maxTimeout: 120}
	srv, cleanup, err := buildServer(context.Background(), e, f)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	api := httptest.NewServer(srv)
	defer api.Close()

	body := fmt.Sprintf(`{"url":%q}`, victim.URL)
	res, err := http.Post(api.URL+"/toll/payability/check", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Memo string }
	json.NewDecoder(res.Body).Decode(&c)
	res.Body.Close()
	if res.StatusCode != http.StatusPaymentRequired || c.Memo == "" {
		t.Fatalf("challenge: %d", res.StatusCode)
	}
	sig := "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	rpc.mu.Lock()
	rpc.paid[sig] = c.Memo
	rpc.mu.Unlock()
	req, _ := http.NewRequest(http.MethodPost, api.URL+"/toll/payability/check", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(gate.HeaderPaymentTx, sig)
	req.Header.Set(gate.HeaderPaymentMemo, c.Memo)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ State string }
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	json.Unmarshal(raw, &rep)
	if res.StatusCode != http.StatusOK || rep.State != "NOT-A-402" {
		t.Errorf("paid check of a loopback target: %d %s", res.StatusCode, raw)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback target was fetched %d times", n)
	}
}

// TestServePrecheckNamesPrivateTargets: without --allow-private-targets, a
// pre-check of a loopback URL says it would be refused (in_policy false,
// the rule named) instead of counting a free call; with the flag it is in
// policy.
func TestServePrecheckNamesPrivateTargets(t *testing.T) {
	for _, allow := range []bool{false, true} {
		e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard}
		f := serveFlags{addr: "127.0.0.1:0", dataDir: t.TempDir(), service: "all", payTo: wallet, tokenAccount: account,
			solanaRPC: fakeRPC(t), network: "solana", commitment: "confirmed", maxTimeout: 120, allowPrivate: allow,
			freePerSource: 100, maxConns: 8}
		srv, cleanup, err := buildServer(context.Background(), e, f)
		if err != nil {
			t.Fatal(err)
		}
		api := httptest.NewServer(srv)
		res, err := http.Post(api.URL+"/toll/payability/precheck", "application/json", strings.NewReader(`{"url":"http://127.0.0.1:3000/paid"}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		api.Close()
		cleanup()
		want := `"in_policy":false`
		if allow {
			want = `"in_policy":true`
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(string(raw), want) || (!allow && !strings.Contains(string(raw), `"rule":"address_refused"`)) {
			t.Errorf("allow-private %v: %d %s, want %s", allow, res.StatusCode, raw, want)
		}
	}
}
