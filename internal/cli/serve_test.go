//go:build !quick

package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRPC answers every getTransaction with "not found", like a node that
// has not seen the transaction.
func fakeRPC(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","result":null,"id":1}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const (
	wallet  = "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV"
	account = "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK"
)

// TestServeRefusesToStartWithoutAWorkingRail: flags that cannot make a rail
// are bad usage (exit 2); a rail whose node does not answer is a failure to
// start (exit 1). Either way nothing is served.
// evmPayee is an EIP-55 EVM address for --evm-pay-to.
const evmPayee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

func TestServeRefusesToStartWithoutAWorkingRail(t *testing.T) {
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer dead.Close()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"no rail", nil, exitUsage, "no working payment rail"},
		{"incomplete direct rail", []string{"--pay-to", wallet}, exitUsage, "needs all of"},
		{"bad wallet", []string{"--pay-to", "nope", "--token-account", account, "--solana-rpc", fakeRPC(t)}, exitUsage, "--pay-to"},
		{"bad service", []string{"--service", "both"}, exitUsage, "--service"},
		{"bad store", []string{"--store", "mysql://db"}, exitUsage, "--store"},
		{"an argument", []string{"now"}, exitUsage, "takes no arguments"},
		{"RPC down", []string{"--pay-to", wallet, "--token-account", account, "--solana-rpc", dead.URL}, ExitInternal, "does not answer"},
		{"facilitator without payee", []string{"--facilitator", "http://127.0.0.1:1/"}, exitUsage, "--facilitator"},
		{"zero free per source", []string{"--free-per-source", "0"}, exitUsage, "--free-per-source"},
		{"zero max conns", []string{"--max-conns", "0"}, exitUsage, "--max-conns"},
		{"an EVM network we do not sell on", []string{"--evm-pay-to", evmPayee, "--evm-network", "eip155:1"}, exitUsage, "--evm-network must be eip155:8453"},
		{"an EVM network by another name", []string{"--evm-network", "ethereum"}, exitUsage, "--evm-network must be"},
		{"an EVM payee without a facilitator", []string{"--evm-pay-to", evmPayee, "--pay-to", wallet, "--token-account", account, "--solana-rpc", fakeRPC(t)}, exitUsage, "--evm-pay-to needs --facilitator"},
		{"an EVM payee that is no address", []string{"--evm-pay-to", "0x1234", "--facilitator", "http://127.0.0.1:1/"}, exitUsage, "--evm-pay-to is not an EVM address"},
		{"an EVM payee with a bad checksum", []string{"--evm-pay-to", "0x209693bc6afc0C5328bA36FaF03C514EF312287C", "--facilitator", "http://127.0.0.1:1/"}, exitUsage, "EIP-55"},
		{"the zero address", []string{"--evm-pay-to", "0x0000000000000000000000000000000000000000", "--facilitator", "http://127.0.0.1:1/"}, exitUsage, "zero address"},
		{"an EVM node without an EVM payee", []string{"--evm-rpc", "http://127.0.0.1:1/"}, exitUsage, "--evm-rpc needs --evm-pay-to"},
		{"an EVM node URL that is no URL", []string{"--evm-pay-to", evmPayee, "--facilitator", "http://127.0.0.1:1/", "--evm-rpc", "ftp://x"}, exitUsage, "--evm-rpc must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb}
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, tt.args...)
			if code := e.Run(context.Background(), args); code != tt.wantCode || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tt.wantCode, tt.want)
			}
		})
	}
}

func TestServeEnvironmentFlags(t *testing.T) {
	var errb bytes.Buffer
	env := map[string]string{"PAYABILITY_PAY_TO": wallet, "PAYABILITY_TOKEN_ACCOUNT": account}
	e := Env{Getenv: func(k string) string { return env[k] }, Stdout: io.Discard, Stderr: &errb}
	// The RPC flag is missing: the error proves the other two were read.
	if code := e.Run(context.Background(), []string{"serve", "--data-dir", t.TempDir()}); code != exitUsage || !strings.Contains(errb.String(), "needs all of") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestServeEndToEnd starts the real server on loopback with an embedded
// store, answers a challenge and a pre-check, verifies the pre-check against
// the served JWKS, and shuts down gracefully.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var errb bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &syncWriter{w: &errb}}
	f := serveFlags{addr: "127.0.0.1:0", dataDir: dir, service: "all", payTo: wallet, tokenAccount: account,
		solanaRPC: fakeRPC(t), network: "solana", commitment: "confirmed", maxTimeout: 120}
	srv, cleanup, err := buildServer(context.Background(), e, f)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- serveUntilDone(ctx, e, ln, srv, daemon{name: "serve"}) }()
	base := "http://" + ln.Addr().String()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	res, err := hc.Get(base + "/toll/payability/check")
	if err != nil || res.StatusCode != http.StatusPaymentRequired || res.Header.Get("PAYMENT-REQUIRED") == "" {
		t.Fatalf("challenge: %v %v", err, res)
	}
	res.Body.Close()
	res, err = hc.Post(base+"/toll/rail-probe/precheck", "application/json", strings.NewReader(`{"url":"https://seller.example/api"}`))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("precheck: %v %v", err, res)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	path := filepath.Join(t.TempDir(), "precheck.json")
	os.WriteFile(path, body, 0o600)
	var out bytes.Buffer
	ve := Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: io.Discard}
	if code := ve.Run(context.Background(), []string{"verify", path, "--jwks", base + "/.well-known/jwks.json"}); code != ExitOK || !strings.Contains(out.String(), "VERIFIED") {
		t.Errorf("verify: exit %d %s", code, out.String())
	}
	// A verified document whose answer cannot be written is exit 1.
	var verr bytes.Buffer
	fe := Env{Getenv: func(string) string { return "" }, Stdout: fullWriter{}, Stderr: &verr}
	if code := fe.Run(context.Background(), []string{"verify", path, "--jwks", base + "/.well-known/jwks.json"}); code != ExitInternal {
		t.Errorf("verify to a full disk: exit %d (%s)", code, verr.String())
	}
	body[len(body)/2] ^= 1
	os.WriteFile(path, body, 0o600)
	out.Reset()
	if code := ve.Run(context.Background(), []string{"verify", path, "--jwks", base + "/.well-known/jwks.json"}); code == ExitOK {
		t.Errorf("a tampered document verified: %s", out.String())
	}
	for _, name := range []string{"signing-key.pem", "memo-key"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v mode %v", name, err, st)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("shutdown exit %d", code)
		}
	case <-time.After(time.Minute): // turns a hang into a failure only
		t.Fatal("no graceful shutdown")
	}
}

// TestServeSaysWhatItSells: the start line names the services, the rails,
// the store and the backfill, and never an RPC, facilitator or store URL.
func TestServeSaysWhatItSells(t *testing.T) {
	tests := []struct {
		f    serveFlags
		want string
	}{
		{serveFlags{service: "all", solanaRPC: "https://rpc.example/?api-key=SECRET", network: "solana", commitment: "confirmed",
			dataDir: "payability-data", ratesURL: "https://www.bankofcanada.ca/valet"},
			"payability-verdict, rail-probe and x402-preflight; rails: direct (solana, confirmed); store: sqlite payability-data/payability.db; " +
				"CAD backfill hourly: contacts the Bank of Canada Valet API (www.bankofcanada.ca) every hour; --rates-url= turns it off"},
		{serveFlags{service: "rail-probe", facilitator: "https://fac.example/SECRET", storeDSN: "postgres://u:SECRET@db/p", allowPrivate: true},
			"rail-probe; rails: facilitator; store: postgres; CAD backfill off (no rates source is contacted); private targets allowed"},
		{serveFlags{service: "all", facilitator: "https://fac.example/", storeDSN: "sqlite:p.db", ratesURL: "https://rates.example/SECRET"},
			"payability-verdict, rail-probe and x402-preflight; rails: facilitator; store: sqlite p.db; CAD backfill hourly: contacts the --rates-url source every hour; --rates-url= turns it off"},
	}
	for _, tt := range tests {
		got := describeServe(tt.f)
		if got != tt.want || strings.Contains(got, "SECRET") {
			t.Errorf("describeServe = %q, want %q", got, tt.want)
		}
	}
}

func TestPlainHTTPOffLoopback(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8899": false, "http://[::1]:8899/": false, "http://localhost:8899": false,
		"https://rpc.example": false, "http://rpc.example": true, "http://10.0.0.5:8899": true, "": false,
	} {
		if got := plainHTTPOffLoopback(raw); got != want {
			t.Errorf("%q: %v, want %v", raw, got, want)
		}
	}
}

// TestServeBadAddrIsUsageAndCreatesNothing: an --addr that cannot be
// listened on is refused before anything is written: no data directory, no
// keys, no store file. A malformed one is bad usage (exit 2); a port in use
// is a failure to start (exit 1).
func TestServeBadAddrIsUsageAndCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tt := range []struct {
		addr string
		code int
		want string
	}{
		{"nonsense", exitUsage, "--addr must be HOST:PORT"},
		{"127.0.0.1", exitUsage, "--addr must be HOST:PORT"},
		{"127.0.0.1:99999", exitUsage, "port must be a number"},
		{"127.0.0.1:http", exitUsage, "port must be a number"},
		{"127.0.0.1:-1", exitUsage, "port must be a number"},
		{"http://127.0.0.1:8402", exitUsage, "--addr"},
		{"[::1:8402", exitUsage, "--addr must be HOST:PORT"},
		{"192.0.2.1:8402", exitUsage, "not an address of this machine"},
		{busy.Addr().String(), ExitInternal, "the port is in use"},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			var errb bytes.Buffer
			e := Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &errb}
			code := e.Run(context.Background(), []string{"serve", "--addr", tt.addr, "--data-dir", dir,
				"--pay-to", wallet, "--token-account", account, "--solana-rpc", fakeRPC(t)})
			if code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), tt.code, tt.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the data directory was created (%v)", err)
			}
		})
	}
}
