package chain

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exchangerebel/payability/internal/lint"
)

const (
	owner   = "5waJka9MrCgPFoLo3SQSjLDTGnkoDcwYYPnpk4YNJS6i"
	mint    = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
	ata     = "HmBpVD6N1vuGvQpS8KrwWH6Tr8rSwXQBEDKn5VXW6yyw"
	devnet  = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	genesis = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1iYhc9ngJ5xLfe"
	usdc    = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
)

// fakeNode is a loopback JSON-RPC node: accounts by address, chain id and
// eth_call answers by selector; fail makes every call a 500.
type fakeNode struct {
	accounts map[string]account
	chainID  string
	calls    map[string]string // selector -> hex result ("" -> revert)
	fail     bool
	n        atomic.Int64
}

type account struct {
	owner string
	data  []byte
}

func (f *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.n.Add(1)
	if f.fail {
		w.WriteHeader(500)
		return
	}
	var req struct {
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &req)
	result := func(v any) { json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": v}) }
	switch req.Method {
	case "getGenesisHash":
		result(genesis)
	case "getAccountInfo":
		var addr string
		json.Unmarshal(req.Params[0], &addr)
		a, ok := f.accounts[addr]
		if !ok {
			result(map[string]any{"context": map[string]any{"slot": 1}, "value": nil})
			return
		}
		result(map[string]any{"context": map[string]any{"slot": 1}, "value": map[string]any{
			"owner": a.owner, "data": []string{base64.StdEncoding.EncodeToString(a.data), "base64"}, "lamports": 1}})
	case "eth_chainId":
		result(f.chainID)
	case "eth_call":
		var call struct{ Data string }
		json.Unmarshal(req.Params[0], &call)
		res, ok := f.calls[call.Data]
		if !ok || res == "" {
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": 3, "message": "execution reverted"}})
			return
		}
		result(res)
	default:
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32601}})
	}
}

func mintData() []byte { return make([]byte, mintLen) }

func tokenAccountData(t *testing.T, m, o string) []byte {
	d := make([]byte, tokenAccountLen)
	mk, ok1 := key(m)
	ok, ok2 := key(o)
	if !ok1 || !ok2 {
		t.Fatal("bad key")
	}
	copy(d[0:32], mk[:])
	copy(d[32:64], ok[:])
	return d
}

func abi(s string) string {
	b := make([]byte, 64+((len(s)+31)/32)*32)
	b[31] = 32
	b[63] = byte(len(s))
	copy(b[64:], s)
	return "0x" + hex.EncodeToString(b)
}

func client(t *testing.T, solanaURL, evmURL string, allowPrivate bool) *Client {
	c, err := New(Options{SolanaRPC: solanaURL, EVMRPC: evmURL, AllowPrivate: allowPrivate})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func solQuery() lint.ChainQuery {
	return lint.ChainQuery{Leg: lint.LegHeader, Entry: 0, Family: lint.FamilySolana, Network: devnet, PayTo: owner, Asset: mint}
}

func TestSolanaReadiness(t *testing.T) {
	for _, tc := range []struct {
		name     string
		accounts map[string]account
		network  string
		want     lint.ChainObservation
	}{
		{"ready (Token)", map[string]account{mint: {TokenProgram, mintData()}, ata: {TokenProgram, nil}}, devnet,
			lint.ChainObservation{AssetIsMint: true, ATAExists: true, ATAIsTokenAccount: true}},
		{"no mint", map[string]account{}, devnet, lint.ChainObservation{}},
		{"asset owned by another program", map[string]account{mint: {"11111111111111111111111111111111", mintData()}}, devnet, lint.ChainObservation{}},
		{"mint of the wrong size", map[string]account{mint: {TokenProgram, make([]byte, 165)}}, devnet, lint.ChainObservation{}},
		{"ATA missing", map[string]account{mint: {TokenProgram, mintData()}}, devnet, lint.ChainObservation{AssetIsMint: true}},
		{"ATA of another mint", map[string]account{mint: {TokenProgram, mintData()}, ata: {TokenProgram, nil}}, devnet,
			lint.ChainObservation{AssetIsMint: true, ATAExists: true}},
		{"other network", map[string]account{}, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", lint.ChainObservation{OtherNetwork: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accts := tc.accounts
			if a, ok := accts[ata]; ok && a.data == nil {
				m := mint
				if tc.name == "ATA of another mint" {
					m = owner
				}
				accts[ata] = account{a.owner, tokenAccountData(t, m, owner)}
			}
			node := &fakeNode{accounts: accts}
			srv := httptest.NewServer(node)
			defer srv.Close()
			q := solQuery()
			q.Network = tc.network
			facts := client(t, srv.URL, "", true).Observe(context.Background(), []lint.ChainQuery{q})
			if len(facts.Observations) != 1 {
				t.Fatalf("observations %+v", facts)
			}
			got := facts.Observations[0]
			tc.want.Leg, tc.want.Family = lint.LegHeader, lint.FamilySolana
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestToken2022 derives the ATA under the mint's own program.
func TestToken2022(t *testing.T) {
	o, m := mustKey(t, owner), mustKey(t, mint)
	p := mustKey(t, Token2022Program)
	a, err := AssociatedTokenAddress(o, p, m)
	if err != nil {
		t.Fatal(err)
	}
	mintExt := make([]byte, 200)
	mintExt[tokenAccountLen] = accountTypeMint
	acct := tokenAccountData(t, mint, owner)
	acct = append(acct, accountTypeToken, 0, 0)
	node := &fakeNode{accounts: map[string]account{mint: {Token2022Program, mintExt}, Base58(a): {Token2022Program, acct}}}
	srv := httptest.NewServer(node)
	defer srv.Close()
	got := client(t, srv.URL, "", true).Observe(context.Background(), []lint.ChainQuery{solQuery()}).Observations[0]
	if !got.AssetIsMint || !got.ATAExists || !got.ATAIsTokenAccount {
		t.Errorf("Token-2022: %+v", got)
	}
}

func TestEVMDomain(t *testing.T) {
	q := lint.ChainQuery{Leg: lint.LegBody, Entry: 1, Family: lint.FamilyEVM, Network: "eip155:84532", PayTo: usdc, Asset: usdc}
	for _, tc := range []struct {
		name    string
		chainID string
		calls   map[string]string
		want    lint.ChainObservation
	}{
		{"both read", "0x14a34", map[string]string{selectorName: abi("USDC"), selectorVersion: abi("2")},
			lint.ChainObservation{Name: "USDC", Version: "2", NameRead: true, VersionRead: true}},
		{"version reverts", "0x14a34", map[string]string{selectorName: abi("USDC")}, lint.ChainObservation{Name: "USDC", NameRead: true}},
		{"garbage answer", "0x14a34", map[string]string{selectorName: "0x1234", selectorVersion: abi("2")}, lint.ChainObservation{Version: "2", VersionRead: true}},
		{"other chain", "0x2105", nil, lint.ChainObservation{OtherNetwork: true}},
		{"chain id not hex", "84532", nil, lint.ChainObservation{Unavailable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeNode{chainID: tc.chainID, calls: tc.calls})
			defer srv.Close()
			got := client(t, "", srv.URL, true).Observe(context.Background(), []lint.ChainQuery{q}).Observations[0]
			tc.want.Leg, tc.want.Entry, tc.want.Family = lint.LegBody, 1, lint.FamilyEVM
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNodeFailureIsUnavailable(t *testing.T) {
	node := &fakeNode{fail: true}
	srv := httptest.NewServer(node)
	defer srv.Close()
	c := client(t, srv.URL, srv.URL, true)
	facts := c.Observe(context.Background(), []lint.ChainQuery{solQuery(),
		{Family: lint.FamilyEVM, Network: "eip155:1", PayTo: usdc, Asset: usdc}})
	for _, o := range facts.Observations {
		if !o.Unavailable {
			t.Errorf("%+v", o)
		}
	}
}

// TestGuard: without AllowPrivate the loopback node is refused at dial time
// (an info finding, never an error about the seller); the guard function
// refuses private and loopback addresses.
func TestGuard(t *testing.T) {
	node := &fakeNode{accounts: map[string]account{}}
	srv := httptest.NewServer(node)
	defer srv.Close()
	o := client(t, srv.URL, "", false).Observe(context.Background(), []lint.ChainQuery{solQuery()}).Observations[0]
	if !o.Unavailable || node.n.Load() != 0 {
		t.Errorf("guarded: %+v, %d requests reached the node", o, node.n.Load())
	}
	for _, a := range []string{"127.0.0.1:8899", "10.0.0.1:443", "[::1]:80", "169.254.169.254:80"} {
		if guard("tcp4", a, nil) == nil {
			t.Errorf("guard let %s through", a)
		}
	}
	if guard("tcp4", "8.8.8.8:443", nil) != nil || guard("udp", "8.8.8.8:53", nil) == nil {
		t.Error("guard on public or non-TCP addresses")
	}
}

func TestObserveDedupesAndSkipsFamiliesWithoutRPC(t *testing.T) {
	node := &fakeNode{accounts: map[string]account{}}
	srv := httptest.NewServer(node)
	defer srv.Close()
	q1, q2 := solQuery(), solQuery()
	q2.Leg = lint.LegBody
	facts := client(t, srv.URL, "", true).Observe(context.Background(), []lint.ChainQuery{q1, q2,
		{Family: lint.FamilyEVM, Network: "eip155:1", PayTo: usdc, Asset: usdc}})
	if len(facts.Observations) != 2 || facts.Observations[1].Leg != lint.LegBody {
		t.Errorf("%+v", facts)
	}
	if node.n.Load() != 2 { // genesis + one account, once
		t.Errorf("%d calls, want 2", node.n.Load())
	}
}

func TestNewRefusesBadRPCURLs(t *testing.T) {
	for _, u := range []string{"ftp://x", "localhost:8899", "http://"} {
		if _, err := New(Options{SolanaRPC: u}); err == nil || strings.Contains(err.Error(), u) && u != "" {
			t.Errorf("%q: %v", u, err)
		}
	}
}

func TestABIString(t *testing.T) {
	if s, ok := abiString(abi("USD Coin")); !ok || s != "USD Coin" {
		t.Errorf("%q %v", s, ok)
	}
	for _, bad := range []string{"0x", "0xzz", abi("x")[:40], "0x" + strings.Repeat("ff", 64)} {
		if _, ok := abiString(bad); ok {
			t.Errorf("%s decoded", bad)
		}
	}
}

func FuzzABIString(f *testing.F) {
	f.Add(abi("USDC"))
	f.Add("0x" + strings.Repeat("00", 64))
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := abiString(s); ok && len(v) > maxDomainString {
			t.Fatalf("%d bytes", len(v))
		}
	})
}
