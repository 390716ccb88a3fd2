package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/chain/evmtest"
	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
	"github.com/exchangerebel/payability/internal/store/postgres/pgtest"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
)

// This file is the set-up of the multi-instance tests and the paid-call
// benchmark: a cluster of `serve` instances in one process, each with its own
// server, gate, metrics and store, as separate processes would have, sharing
// only what an operator shares between machines: the database, the signing
// key set, the memo key, the Solana RPC node and the clock of the world.

// defaultTestPG is the test database of the CI machine: local, trust auth.
const defaultTestPG = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// pgSchema gives one test (or benchmark run) an empty schema of its own.
func pgSchema(tb testing.TB) string {
	dsn, _ := pgtest.Schema(tb)
	return dsn
}

func openPG(tb testing.TB, dsn string, opts postgres.Options) *postgres.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		tb.Fatalf("postgres.Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func openSQLite(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), tb.TempDir()+"/payability.db")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// cluster is what the instances of one deployment share. It belongs to the
// test (or subtest) that made it: start and count fail that test.
type cluster struct {
	tb      testing.TB
	chain   *fakeChain
	rpcURL  string
	clock   *clock // the injected clock of the instances that use one
	key     report.Key
	memoKey []byte
	seller  string // a loopback x402 seller for the paid ops to grade
	client  *http.Client
	dsnOnce sync.Once
	dsnVal  string
}

func newCluster(tb testing.TB) *cluster {
	tb.Helper()
	c := &cluster{tb: tb, clock: &clock{t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}}
	c.chain, c.rpcURL = newFakeChain(tb)
	var err error
	if c.key, err = report.GenerateKey(rand.Reader); err != nil {
		tb.Fatal(err)
	}
	c.memoKey = randomKey(tb)
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1000"}]}`)
	}))
	tb.Cleanup(seller.Close)
	c.seller = seller.URL
	// Keep-alive connections for the concurrent presentations and the
	// benchmark: the default transport keeps two per host.
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	c.client = &http.Client{Transport: tr, Timeout: 60 * time.Second}
	tb.Cleanup(tr.CloseIdleConnections)
	return c
}

func randomKey(tb testing.TB) []byte {
	k := make([]byte, report.MemoKeySize)
	if _, err := rand.Read(k); err != nil {
		tb.Fatal(err)
	}
	return k
}

// dsn is the cluster's one PostgreSQL schema, created on first use.
func (c *cluster) dsn() string {
	c.dsnOnce.Do(func() { c.dsnVal = pgSchema(c.tb) })
	return c.dsnVal
}

// count runs a SELECT count(*) … on the cluster's schema.
func (c *cluster) count(query string, args ...any) int {
	c.tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.dsn())
	if err != nil {
		c.tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		c.tb.Fatal(err)
	}
	return n
}

// nodeOptions say how an instance differs from the cluster's defaults.
type nodeOptions struct {
	// Store is the instance's store; nil opens a PostgreSQL store of the
	// instance's own on the cluster's schema.
	Store store.Store
	// UseDBClock is the PostgreSQL store's option (serve sets it).
	UseDBClock bool
	// Now is the instance's clock; nil is the cluster's injected clock.
	Now func() time.Time
	// MemoKey and Key replace the cluster's shared keys (a misconfigured
	// instance); nil and the zero Key share them.
	MemoKey []byte
	Key     *report.Key
	// Facilitator, when set, offers the facilitator rail through it, as
	// serve --facilitator does.
	Facilitator *facilitatortest.Fake
	// ChainChecks gives the facilitator rail the cluster's RPC node, as
	// serve --facilitator --solana-rpc does.
	ChainChecks bool
	// EVMNode, when set, also offers the EVM entry on Base through the
	// facilitator, with this node's receipts checked (--evm-pay-to,
	// --evm-rpc).
	EVMNode *evmtest.Node
}

// node is one running instance.
type node struct {
	name   string
	url    string
	srv    *httptest.Server
	s      *Server
	gate   *gate.Gate
	store  store.Store
	keys   report.KeySet
	client *http.Client
}

func (c *cluster) start(name string, o nodeOptions) *node {
	tb := c.tb
	tb.Helper()
	now := o.Now
	if now == nil {
		now = c.clock.Now
	}
	st := o.Store
	if st == nil {
		st = openPG(tb, c.dsn(), postgres.Options{UseDBClock: o.UseDBClock})
	}
	key := c.key
	if o.Key != nil {
		key = *o.Key
	}
	memoKey := c.memoKey
	if o.MemoKey != nil {
		memoKey = o.MemoKey
	}
	client, err := solana.New(c.rpcURL, nil, "confirmed")
	if err != nil {
		tb.Fatal(err)
	}
	g := &gate.Gate{
		Terms:  gate.Terms{Network: gate.Mainnet, PayTo: testPayTo, TokenAccount: testTokenAccount, MaxTimeoutSeconds: 120},
		Offers: testOffers(),
		Memos:  gate.Memos{Key: memoKey, Now: now, Rand: rand.Reader},
		Direct: gate.SolanaRail{Client: client, TokenAccount: testTokenAccount, Mint: gate.Mainnet.Mint},
		Store:  st, Now: now, LeaseFor: 90 * time.Second,
	}
	if o.Facilitator != nil {
		fc, err := facilitator.NewClient(o.Facilitator.URL, nil)
		if err != nil {
			tb.Fatal(err)
		}
		sup, err := facilitator.Discover(context.Background(), fc, gate.Mainnet)
		if err != nil {
			tb.Fatal(err)
		}
		g.Terms.FeePayer = sup.FeePayer
		g.Facilitator = &facilitator.Rail{Client: fc, Terms: g.Terms, Memos: g.Memos, Versions: sup.Versions,
			Store: st, Now: now, SettleTimeout: 10 * time.Second, LookupDelay: time.Millisecond}
		if o.ChainChecks {
			g.Facilitator.(*facilitator.Rail).Chain = client
		}
		if o.EVMNode != nil {
			rail := g.Facilitator.(*facilitator.Rail)
			if rail.EVMVersions, err = facilitator.DiscoverEVM(context.Background(), fc, gate.Base); err != nil {
				tb.Fatal(err)
			}
			if rail.EVMChain, err = chain.New(chain.Options{EVMRPC: o.EVMNode.URL, AllowPrivate: true}); err != nil {
				tb.Fatal(err)
			}
			g.Terms.EVM = &gate.EVMTerms{Network: gate.Base, PayTo: testEVMPayTo}
			rail.Terms.EVM = g.Terms.EVM
		}
	}
	fetcher := target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent})
	keys := report.NewKeySet(key)
	s, err := New(Config{
		Service: ServeAll, Gate: g, Runner: ops.Runner{Fetcher: fetcher, Now: now},
		Key: key, KeySet: keys, Store: st, Registry: prometheus.NewRegistry(), Now: now,
		Logger:        newTestLogger(io.Discard),
		ClientLimiter: NewLimiter(1e6, 1e6, now),
		ReadyCorpus:   true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	return &node{name: name, url: srv.URL, srv: srv, s: s, gate: g, store: st, keys: keys, client: c.client}
}

// do sends one request; it is safe from any goroutine.
func (n *node) do(method, path, body string, hdr map[string]string) (response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.url+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := n.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}, err
}

func (n *node) mustDo(tb testing.TB, method, path, body string, hdr map[string]string) response {
	tb.Helper()
	res, err := n.do(method, path, body, hdr)
	if err != nil {
		tb.Fatalf("%s %s on %s: %v", method, path, n.name, err)
	}
	return res
}

// memo asks the instance for the challenge of a paid route bound to
// targetURL and returns its memo.
func (n *node) memo(path, targetURL string) (string, error) {
	res, err := n.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), nil)
	if err != nil {
		return "", err
	}
	if res.status != http.StatusPaymentRequired {
		return "", fmt.Errorf("challenge: status %d %s", res.status, res.body)
	}
	var c struct {
		Memo string `json:"memo"`
	}
	if err := json.Unmarshal(res.body, &c); err != nil || c.Memo == "" {
		return "", errors.New("challenge without a memo")
	}
	return c.Memo, nil
}

func (n *node) mustMemo(tb testing.TB, path, targetURL string) string {
	tb.Helper()
	m, err := n.memo(path, targetURL)
	if err != nil {
		tb.Fatalf("%s: %v", n.name, err)
	}
	return m
}

// present presents a direct-rail payment for a paid call.
func (n *node) present(path, targetURL, sig, memo string) (response, error) {
	return n.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL),
		map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
}

func (n *node) mustPresent(tb testing.TB, path, targetURL, sig, memo string) response {
	tb.Helper()
	res, err := n.present(path, targetURL, sig, memo)
	if err != nil {
		tb.Fatalf("%s: %v", n.name, err)
	}
	return res
}

// paidCall is one buyer's whole paid call: the challenge, the payment on the
// (fake) chain, and the paid POST, which must deliver a report.
func (n *node) paidCall(chain *fakeChain, path, targetURL string) error {
	memo, err := n.memo(path, targetURL)
	if err != nil {
		return err
	}
	sig := chain.pay(memo)
	res, err := n.present(path, targetURL, sig, memo)
	if err != nil {
		return err
	}
	if res.status != http.StatusOK {
		return fmt.Errorf("paid call: status %d %s", res.status, res.body)
	}
	return nil
}

// errorCode is the "error" member of a JSON answer.
func errorCode(body []byte) string {
	var p struct {
		Error string `json:"error"`
	}
	json.Unmarshal(body, &p)
	return p.Error
}
