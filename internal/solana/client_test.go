package solana

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mr-tron/base58"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Signatures the fake node knows no transaction for: rpcErrorSig is
// answered with testdata/rpc_error.json, unknownSig with a null result.
var (
	rpcErrorSig = base58.Encode(bytes.Repeat([]byte{0xe7}, 64))
	unknownSig  = base58.Encode(bytes.Repeat([]byte{0x42}, 64))
)

// fakeNode is a local JSON-RPC server answering getTransaction from
// testdata: each fixture under the signature it holds, rpcErrorSig with an
// RPC error, any other signature with a null result.
type fakeNode struct {
	t        *testing.T
	srv      *httptest.Server
	answers  map[string][]byte
	requests atomic.Int32
	mu       sync.Mutex
	bodies   [][]byte
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	n := &fakeNode{t: t, answers: map[string][]byte{}}
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Result *struct {
				Transaction struct{ Signatures []string }
			}
		}
		if err := json.Unmarshal(data, &env); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		switch {
		case filepath.Base(p) == "rpc_error.json":
			n.answers[rpcErrorSig] = data
		case env.Result != nil:
			n.answers[env.Result.Transaction.Signatures[0]] = data
		}
	}
	notFound, err := os.ReadFile(filepath.Join("testdata", "not_found.json"))
	if err != nil {
		t.Fatal(err)
	}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.bodies = append(n.bodies, body)
		n.mu.Unlock()
		var req struct {
			Method string
			Params []json.RawMessage
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(body, &req) != nil || req.Method != "getTransaction" || len(req.Params) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var sig string
		_ = json.Unmarshal(req.Params[0], &sig)
		w.Header().Set("Content-Type", "application/json")
		if a, ok := n.answers[sig]; ok {
			w.Write(a)
			return
		}
		w.Write(notFound)
	}))
	assertLoopback(t, n.srv.URL)
	t.Cleanup(n.srv.Close)
	return n
}

// assertLoopback stops a test whose server is anywhere but this machine.
func assertLoopback(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("test server at %s is not on loopback", u.Host)
	}
}

func newTestClient(t *testing.T, rpcURL, commitment string) *Client {
	t.Helper()
	assertLoopback(t, rpcURL)
	c, err := New(rpcURL, nil, commitment)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serve answers every request with one status and body.
func serve(t *testing.T, status int, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	assertLoopback(t, srv.URL)
	return srv.URL
}

func TestGetTransactionRequest(t *testing.T) {
	node := newFakeNode(t)
	sig := fixtureSig(t, "transfer_checked_memo.json")
	for _, commitment := range []string{"", CommitmentConfirmed, CommitmentFinalized} {
		c := newTestClient(t, node.srv.URL, commitment)
		if _, err := c.GetTransaction(context.Background(), sig); err != nil {
			t.Fatal(err)
		}
		wantCommitment := commitment
		if wantCommitment == "" {
			wantCommitment = CommitmentConfirmed
		}
		if c.Commitment() != wantCommitment {
			t.Errorf("Commitment() %q, want %q", c.Commitment(), wantCommitment)
		}
		node.mu.Lock()
		got := node.bodies[len(node.bodies)-1]
		node.mu.Unlock()
		want := `{"jsonrpc":"2.0","id":1,"method":"getTransaction","params":["` + sig +
			`",{"encoding":"jsonParsed","maxSupportedTransactionVersion":0,"commitment":"` + wantCommitment + `"}]}`
		if string(got) != want {
			t.Errorf("request\ngot  %s\nwant %s", got, want)
		}
	}
}

func TestGetTransactionAnswers(t *testing.T) {
	node := newFakeNode(t)
	c := newTestClient(t, node.srv.URL, "")
	ctx := context.Background()

	t.Run("a fixture decodes", func(t *testing.T) {
		tx, err := c.GetTransaction(ctx, fixtureSig(t, "transfer_checked_memo.json"))
		if err != nil {
			t.Fatal(err)
		}
		if tx.Slot != 383912447 || tx.Meta == nil || tx.Meta.Fee != 5001 || len(tx.Transaction.Message.Instructions) != 4 {
			t.Errorf("decoded %+v", tx)
		}
	})
	t.Run("null result is ErrNotFound", func(t *testing.T) {
		_, err := c.GetTransaction(ctx, unknownSig)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("got %v, want ErrNotFound", err)
		}
	})
	t.Run("an RPC error keeps its code, not its message", func(t *testing.T) {
		_, err := c.GetTransaction(ctx, rpcErrorSig)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRPCError || e.RPCCode != -32602 {
			t.Fatalf("got %#v", err)
		}
		if err.Error() != "solana: rpc_error -32602" {
			t.Errorf("message %q", err.Error())
		}
	})
	t.Run("an invalid signature is never sent", func(t *testing.T) {
		before := node.requests.Load()
		for _, sig := range []string{"", "abc", "0OIl", strings.Repeat("1", 64) + "x", fixtureSig(t, "no_memo.json") + " "} {
			if _, err := c.GetTransaction(ctx, sig); !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("%q: got %v", sig, err)
			}
		}
		if node.requests.Load() != before {
			t.Error("a request went out")
		}
	})
}

func TestGetTransactionFailures(t *testing.T) {
	const canary = "CANARY-b81f0c"
	sig := fixtureSig(t, "transfer_checked_memo.json")
	good, err := os.ReadFile(filepath.Join("testdata", "transfer_checked_memo.json"))
	if err != nil {
		t.Fatal(err)
	}
	otherTx := bytes.Replace(good, []byte(sig), []byte(fixtureSig(t, "no_memo.json")), 1)
	cases := []struct {
		name   string
		status int
		body   string
		code   string
		http   int
	}{
		{"HTTP 500", 500, `{"error":"` + canary + `"}`, CodeTransport, 500},
		{"HTTP 429", 429, `{"jsonrpc":"2.0","error":{"code":429,"message":"` + canary + `"},"id":1}`, CodeTransport, 429},
		{"not JSON", 200, `<html>` + canary + `</html>`, CodeMalformed, 0},
		{"empty body", 200, ``, CodeMalformed, 0},
		{"no jsonrpc member", 200, `{"result":null,"id":1}`, CodeMalformed, 0},
		{"wrong id", 200, `{"jsonrpc":"2.0","result":null,"id":2}`, CodeMalformed, 0},
		{"neither result nor error", 200, `{"jsonrpc":"2.0","id":1}`, CodeMalformed, 0},
		{"error code not a number", 200, `{"jsonrpc":"2.0","error":{"code":"` + canary + `"},"id":1}`, CodeMalformed, 0},
		{"result of the wrong type", 200, `{"jsonrpc":"2.0","result":"` + canary + `","id":1}`, CodeMalformed, 0},
		{"result for another transaction", 200, string(otherTx), CodeMalformed, 0},
		{"result without signatures", 200, `{"jsonrpc":"2.0","result":{"slot":1,"meta":null,"transaction":{"signatures":[]}},"id":1}`, CodeMalformed, 0},
		{"RPC error with data", 200, `{"jsonrpc":"2.0","error":{"code":-32009,"message":"` + canary + `","data":{"x":"` + canary + `"}},"id":1}`, CodeRPCError, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := newTestClient(t, serve(t, c.status, []byte(c.body)), "")
			_, err := client.GetTransaction(context.Background(), sig)
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code || e.HTTPStatus != c.http {
				t.Fatalf("got %#v, want code %s status %d", err, c.code, c.http)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q quotes the answer", err)
			}
		})
	}
	t.Run("an oversized answer", func(t *testing.T) {
		huge := append([]byte(`{"jsonrpc":"2.0","id":1,"result":"`), bytes.Repeat([]byte("a"), maxResponse)...)
		client := newTestClient(t, serve(t, 200, append(huge, `"}`...)), "")
		_, err := client.GetTransaction(context.Background(), sig)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeMalformed {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a redirect is not followed", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		}))
		t.Cleanup(srv.Close)
		_, err := newTestClient(t, srv.URL, "").GetTransaction(context.Background(), sig)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeTransport || e.HTTPStatus != http.StatusTemporaryRedirect {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a node that is down; the URL's secret stays out of the error", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		rpcURL := srv.URL + "/?api-key=" + canary
		srv.Close()
		_, err := newTestClient(t, rpcURL, "").GetTransaction(context.Background(), sig)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeTransport || e.HTTPStatus != 0 {
			t.Fatalf("got %v", err)
		}
		if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("error %q names the endpoint", err)
		}
	})
	t.Run("a deadline ends the call", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := newTestClient(t, srv.URL, "").GetTransaction(ctx, sig)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeTransport || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v", err)
		}
	})
}

func TestNew(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8899", "ftp://127.0.0.1/", "http://", "/rpc", "http://[::1"} {
		if _, err := New(u, nil, ""); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
	for _, c := range []string{"processed", "Confirmed", "max"} {
		if _, err := New("http://127.0.0.1:8899", nil, c); err == nil {
			t.Errorf("commitment %q accepted", c)
		}
	}
	hc := &http.Client{}
	c, err := New("https://127.0.0.1:8899/rpc", hc, CommitmentFinalized)
	if err != nil || c.http != hc || c.Commitment() != CommitmentFinalized {
		t.Errorf("client %+v err %v", c, err)
	}
}
