package server

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/corpus"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/verdict"
)

const (
	testPayTo        = "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV"
	testTokenAccount = "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK"
	templateMemo     = "pbl1.ck.q7Rr2hV0bXo9Zl1cN4yT8wJm3Kd5HsAe"
	templateSig      = "51i4SVUrCEnHnQyXUUZJb2AZTiv49V6wvScdRVEPrRTx2zR6LPntGhFDGDjJWhZQk9fL9sTv8we19Q1p27bMwx7a"
)

// clock is an injectable clock safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeChain is a local Solana JSON-RPC node: getTransaction answers, shaped
// like a real jsonParsed answer (testdata/paid_tx.json), for the signatures
// the test paid, with the memo the test attached.
type fakeChain struct {
	mu       sync.Mutex
	paid     map[string]string // signature -> memo
	template []byte
	calls    atomic.Int64
}

func newFakeChain(tb testing.TB) (*fakeChain, string) {
	tb.Helper()
	tpl, err := os.ReadFile("testdata/paid_tx.json")
	if err != nil {
		tb.Fatal(err)
	}
	fc := &fakeChain{paid: map[string]string{}, template: tpl}
	srv := httptest.NewServer(http.HandlerFunc(fc.serveRPC))
	tb.Cleanup(srv.Close)
	return fc, srv.URL
}

func (fc *fakeChain) serveRPC(w http.ResponseWriter, r *http.Request) {
	fc.calls.Add(1)
	var req struct {
		Params []json.RawMessage `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	var sig string
	if len(req.Params) > 0 {
		json.Unmarshal(req.Params[0], &sig)
	}
	fc.mu.Lock()
	memo, ok := fc.paid[sig]
	fc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		io.WriteString(w, `{"jsonrpc":"2.0","result":null,"id":1}`)
		return
	}
	q, _ := json.Marshal(memo)
	answer := bytes.ReplaceAll(fc.template, []byte(`"`+templateMemo+`"`), q)
	w.Write(bytes.ReplaceAll(answer, []byte(templateSig), []byte(sig)))
}

// pay records a transaction on the fake chain and returns its signature.
func (fc *fakeChain) pay(memo string) string {
	sig := make([]byte, 64)
	rand.Read(sig)
	s := base58Encode(sig)
	fc.mu.Lock()
	fc.paid[s] = memo
	fc.mu.Unlock()
	return s
}

type harness struct {
	t      *testing.T
	srv    *httptest.Server
	s      *Server
	gate   *gate.Gate
	store  store.Store
	chain  *fakeChain
	clock  *clock
	keys   report.KeySet
	logs   *syncBuffer
	dbPath string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newHarness(t *testing.T, service string) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}}
	var rpcURL string
	h.chain, rpcURL = newFakeChain(t)
	client, err := solana.New(rpcURL, nil, "confirmed")
	if err != nil {
		t.Fatal(err)
	}
	h.dbPath = t.TempDir() + "/payability.db"
	st, err := sqlite.Open(context.Background(), h.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.store = st
	key, err := report.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h.keys = report.NewKeySet(key)
	offers := testOffers()
	h.gate = &gate.Gate{
		Terms:  gate.Terms{Network: gate.Mainnet, PayTo: testPayTo, TokenAccount: testTokenAccount, MaxTimeoutSeconds: 120},
		Offers: offers,
		Memos:  gate.Memos{Key: bytes.Repeat([]byte{9}, 32), Now: h.clock.Now, Rand: rand.Reader},
		Direct: gate.SolanaRail{Client: client, TokenAccount: testTokenAccount, Mint: gate.Mainnet.Mint},
		Store:  st, Now: h.clock.Now, LeaseFor: 90 * time.Second,
	}
	h.s, err = New(Config{
		Service: service, Gate: h.gate,
		Runner: ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: h.clock.Now},
		Key:    key, KeySet: h.keys, Store: st, Registry: prometheus.NewRegistry(), Now: h.clock.Now,
		Logger:        newTestLogger(h.logs),
		ClientLimiter: NewLimiter(1000, 1000, h.clock.Now),
		ReadyCorpus:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(h.s)
	t.Cleanup(h.srv.Close)
	return h
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) do(method, path string, body string, hdr map[string]string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// challengeMemo asks a paid route for its challenge and returns the memo.
func (h *harness) challengeMemo(path, targetURL string) string {
	h.t.Helper()
	body := ""
	method := http.MethodGet
	if targetURL != "" {
		method, body = http.MethodPost, fmt.Sprintf(`{"url":%q}`, targetURL)
	}
	res := h.do(method, path, body, nil)
	if res.status != http.StatusPaymentRequired {
		h.t.Fatalf("challenge: status %d %s", res.status, res.body)
	}
	var c struct {
		Memo string `json:"memo"`
	}
	json.Unmarshal(res.body, &c)
	return c.Memo
}

func (h *harness) payAndPost(path, targetURL string) (response, string, string) {
	memo := h.challengeMemo(path, targetURL)
	sig := h.chain.pay(memo)
	res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL),
		map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
	return res, sig, memo
}

// sellerTarget is a plain x402 seller on loopback, for paid ops to grade.
func sellerTarget(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		io.WriteString(w, `{"x402Version":1,"accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"1000"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Our own challenge must grade POPULATED, BOUND, and both rails
// PRESENT-FAIL-CLOSED with no exposures, under our own ops.
func TestOwnGatePassesOwnChecks(t *testing.T) {
	assertOwnGatePassesOwnChecks(t, newHarness(t, ServeAll))
}

// assertOwnGatePassesOwnChecks runs our own check, memo and probe ops against
// every paid route of a running server.
func assertOwnGatePassesOwnChecks(t *testing.T, h *harness) {
	t.Helper()
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: time.Now}
	ctx := context.Background()
	for _, path := range allPaidRoutes {
		url := h.srv.URL + path
		c, err := runner.Check(ctx, url)
		if err != nil || c.State != verdict.Populated {
			t.Errorf("%s: check = %s, want POPULATED (%+v)", path, c.State, c.Factors)
		}
		m, _ := runner.Memo(ctx, url)
		if m.State != verdict.Bound {
			t.Errorf("%s: memo = %s, want BOUND", path, m.State)
		}
		p, _ := runner.Probe(ctx, url)
		if !p.Closed() {
			t.Errorf("%s: probe grades %+v exposures %v, want both PRESENT-FAIL-CLOSED and none", path, p.Grades, p.Exposures)
		}
		if p.Methods.POST.Status == nil || *p.Methods.POST.Status != http.StatusBadRequest {
			t.Errorf("%s: unpaid POST {} answered %v, want a free 400", path, p.Methods.POST.Status)
		}
	}
}

func TestPaidCheckDeliversASignedReportOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	res, sig, _ := h.payAndPost("/toll/payability/check", seller.URL)
	if res.status != http.StatusOK {
		t.Fatalf("paid check: %d %s", res.status, res.body)
	}
	kid, err := report.Verify(res.body, h.keys)
	if err != nil || kid == "" {
		t.Fatalf("report does not verify: %v", err)
	}
	var rep struct {
		State   string `json:"state"`
		URL     string `json:"url"`
		Payment struct{ Rail, Tx string }
		Price   struct {
			USDCUnits string `json:"usdc_units"`
		}
	}
	json.Unmarshal(res.body, &rep)
	if rep.State != "HEADER-MISSING" || rep.URL != seller.URL || rep.Payment.Tx != sig || rep.Payment.Rail != "direct" || rep.Price.USDCUnits != "10000" {
		t.Errorf("report %+v", rep)
	}
	entries, _ := h.store.Entries(context.Background(), store.OpCheck, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 || entries[0].PaymentTx != sig || entries[0].Check.PayabilityState != "HEADER-MISSING" {
		t.Fatalf("ledger %+v", entries)
	}
	// The same payment again: refused, with a reason, and our challenge.
	memo := h.challengeMemo("/toll/payability/check", seller.URL)
	_ = memo
	again := h.do(http.MethodPost, "/toll/payability/check", fmt.Sprintf(`{"url":%q}`, seller.URL),
		map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: entriesMemo(t, h, sig)})
	if again.status != http.StatusPaymentRequired || !strings.Contains(string(again.body), `"payment_already_used"`) {
		t.Errorf("replay: %d %s", again.status, again.body)
	}
}

// entriesMemo returns the memo the fake chain recorded for sig.
func entriesMemo(t *testing.T, h *harness, sig string) string {
	h.chain.mu.Lock()
	defer h.chain.mu.Unlock()
	return h.chain.paid[sig]
}

func TestFiftyConcurrentPresentationsDeliverOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	path := "/toll/payability/memo"
	memo := h.challengeMemo(path, seller.URL)
	sig := h.chain.pay(memo)
	var ok, other atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, seller.URL),
				map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
			switch res.status {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusConflict, http.StatusPaymentRequired:
				other.Add(1)
			default:
				t.Errorf("status %d %s", res.status, res.body)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Errorf("%d reports delivered, want exactly 1", ok.Load())
	}
	entries, _ := h.store.Entries(context.Background(), store.OpMemo, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 {
		t.Errorf("%d ledger entries, want 1", len(entries))
	}
}

// A process killed between verification and delivery: the claim holds a
// lease nobody will release. After it expires the same request resumes
// exactly once, with one ledger entry.
func TestKilledAfterVerificationResumesOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	path := "/toll/rail-probe/probe"
	memo := h.challengeMemo(path, seller.URL)
	sig := h.chain.pay(memo)
	hdr := http.Header{}
	hdr.Set(gate.HeaderPaymentTx, sig)
	hdr.Set(gate.HeaderPaymentMemo, memo)
	d, err := h.gate.Admit(context.Background(), gate.Request{Op: ops.OpProbe, Resource: h.srv.URL + path, TargetURL: seller.URL, Header: hdr})
	if err != nil || d.Kind != gate.Paid {
		t.Fatalf("admit: %v %+v", err, d)
	}
	// ... and the process dies here. While the lease runs, the payer is told to wait.
	post := func() response {
		return h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, seller.URL),
			map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo})
	}
	if res := post(); res.status != http.StatusConflict || res.header.Get("Retry-After") == "" {
		t.Fatalf("during the lease: %d %s", res.status, res.body)
	}
	h.clock.Add(91 * time.Second)
	res := post()
	if res.status != http.StatusOK {
		t.Fatalf("resume: %d %s", res.status, res.body)
	}
	if !strings.Contains(string(res.body), `"resumed":true`) {
		t.Errorf("the resumed report does not say so: %s", res.body)
	}
	if res := post(); res.status != http.StatusPaymentRequired {
		t.Errorf("second resume: %d", res.status)
	}
	entries, _ := h.store.Entries(context.Background(), store.OpProbe, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 {
		t.Errorf("%d ledger entries, want 1", len(entries))
	}
}

func TestPaymentFormRefusalsAreFreeAndReasoned(t *testing.T) {
	h := newHarness(t, ServeAll)
	seller := sellerTarget(t)
	path := "/toll/payability/check"
	memo := h.challengeMemo(path, seller.URL)
	sig := h.chain.pay(memo)
	otherMemo := h.challengeMemo(path, seller.URL+"/other")
	tests := []struct {
		name string
		body string
		hdr  map[string]string
		want int
		code string
	}{
		{"malformed signature", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: "PROBE-INVALID", gate.HeaderPaymentMemo: memo}, 402, "payment_malformed"},
		{"memo missing", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: sig}, 402, "memo_missing"},
		{"memo bound to another URL", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: otherMemo}, 402, "memo_invalid"},
		{"memo of another op", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: h.challengeMemo("/toll/payability/memo", seller.URL)}, 402, "memo_wrong_op"},
		{"not on chain", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: h.chain.payNothing(), gate.HeaderPaymentMemo: memo}, 402, "payment_not_found"},
		{"URL refused after a well-formed payment", `{"url":"ftp://x/"}`, map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo}, 402, "memo_invalid"},
		{"no URL", `{}`, nil, 400, "url_missing"},
		{"unknown field", `{"url":"https://a.example/","x":1}`, nil, 400, "request_malformed"},
		{"bad JSON", `{"url":`, nil, 400, "request_malformed"},
		{"URL policy", `{"url":"https://u@a.example/"}`, nil, 400, "url_userinfo"},
		{"facilitator rail not offered", fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentSignature: "e30="}, 402, "rail_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.do(http.MethodPost, path, tt.body, tt.hdr)
			if res.status != tt.want || !strings.Contains(string(res.body), `"`+tt.code+`"`) {
				t.Errorf("got %d %s, want %d %s", res.status, res.body, tt.want, tt.code)
			}
		})
	}
	if res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, seller.URL), map[string]string{gate.HeaderPaymentTx: sig, gate.HeaderPaymentMemo: memo}); res.status != http.StatusOK {
		t.Errorf("the refusals consumed the payment: %d %s", res.status, res.body)
	}
}

func (fc *fakeChain) payNothing() string {
	sig := make([]byte, 64)
	rand.Read(sig)
	return base58Encode(sig)
}

func TestRequestBodyCapIsThePublishedOne(t *testing.T) {
	for _, svc := range []string{criteria.ServicePayability, criteria.ServiceRailProbe} {
		doc, _ := criteria.ForService(svc)
		if got := doc.InputContract.Caps.BodyBytes; got != RequestBodyCap {
			t.Errorf("%s publishes a body cap of %d, the server enforces %d", svc, got, RequestBodyCap)
		}
	}
}

func TestRequestBodyCap(t *testing.T) {
	h := newHarness(t, ServeAll)
	pad := func(n int) string {
		prefix := `{"url":"https://a.example/","caller":"`
		return prefix + strings.Repeat("a", n-len(prefix)-2) + `"}`
	}
	if res := h.do(http.MethodPost, "/toll/payability/precheck", pad(RequestBodyCap+1), nil); res.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(res.body), "262,144") {
		t.Errorf("over cap: %d %s", res.status, res.body)
	}
	if res := h.do(http.MethodPost, "/toll/payability/precheck", pad(RequestBodyCap), nil); res.status == http.StatusRequestEntityTooLarge {
		t.Errorf("at the cap: %d", res.status)
	}
}

func TestFreeTierBurstAllowsOne(t *testing.T) {
	h := newHarness(t, ServeAll)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://a.example/","caller":"`+testWallet("wallet-1")+`"}`, nil)
			switch res.status {
			case 200:
				ok.Add(1)
			case 402:
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 19 {
		t.Errorf("%d allowed, %d refused; want 1 and 19", ok.Load(), refused.Load())
	}
}

func TestFreeTierDailyLimit(t *testing.T) {
	h := newHarness(t, criteria.ServicePayability)
	for i := range 100 {
		res := h.do(http.MethodPost, "/precheck", `{"url":"https://a.example/","caller":"`+testWallet("w")+`","op":"memo"}`, nil)
		if res.status != 200 {
			t.Fatalf("call %d: %d %s", i+1, res.status, res.body)
		}
		if i == 0 {
			if _, err := report.Verify(res.body, h.keys); err != nil {
				t.Fatalf("pre-check not signed: %v", err)
			}
			for _, forbidden := range []string{`"state"`, `"factors"`, `"verdict_line"`} {
				if strings.Contains(string(res.body), forbidden) {
					t.Errorf("pre-check carries %s", forbidden)
				}
			}
		}
		h.clock.Add(5 * time.Second)
	}
	res := h.do(http.MethodPost, "/precheck", `{"url":"https://a.example/","caller":"`+testWallet("w")+`","op":"memo"}`, nil)
	if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"free_daily_limit"`) {
		t.Fatalf("101st: %d %s", res.status, res.body)
	}
	var c struct {
		Accepts []struct{ Resource string }
	}
	json.Unmarshal(res.body, &c)
	if len(c.Accepts) != 1 || !strings.HasSuffix(c.Accepts[0].Resource, "/memo") {
		t.Errorf("exhaustion challenge is not the /memo challenge: %s", res.body)
	}
}

func TestFreeRoutes(t *testing.T) {
	h := newHarness(t, ServeAll)
	for svc, path := range map[string]string{criteria.ServicePayability: "/toll/payability/criteria", criteria.ServiceRailProbe: "/toll/rail-probe/criteria"} {
		res := h.do(http.MethodGet, path, "", nil)
		want, _ := corpus.Criteria(svc)
		if res.status != 200 || !bytes.Equal(res.body, want) || res.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d, %d bytes", path, res.status, len(res.body))
		}
	}
	res := h.do(http.MethodGet, "/.well-known/jwks.json", "", nil)
	if ks, err := report.ParseJWKS(res.body); err != nil || len(ks.Keys()) != 1 {
		t.Errorf("jwks: %v", err)
	}
	res = h.do(http.MethodPost, "/toll/payability/refund", "{}", nil)
	if res.status != 404 || !strings.Contains(string(res.body), "NOT COVERED") {
		t.Errorf("not covered: %d %s", res.status, res.body)
	}
	res = h.do(http.MethodGet, "/toll/payability/nothing-here", "", nil)
	if res.status != 404 || !strings.Contains(string(res.body), `"not_found"`) {
		t.Errorf("GET of an unknown path: %d %s", res.status, res.body)
	}
	res = h.do(http.MethodHead, "/toll/rail-probe/probe", "", nil)
	if res.status != 402 || res.header.Get("PAYMENT-REQUIRED") == "" {
		t.Errorf("HEAD: %d", res.status)
	}
	res = h.do(http.MethodGet, "/metrics", "", nil)
	if res.status != 200 || !strings.Contains(string(res.body), "payability_requests_total") {
		t.Errorf("metrics: %d", res.status)
	}
}

func TestSingleServiceAnswersAtBarePaths(t *testing.T) {
	h := newHarness(t, criteria.ServiceRailProbe)
	if res := h.do(http.MethodGet, "/probe", "", nil); res.status != 402 {
		t.Errorf("/probe: %d", res.status)
	}
	if res := h.do(http.MethodPost, "/check", "{}", nil); res.status != 404 || !strings.Contains(string(res.body), "probe") {
		t.Errorf("/check on rail-probe: %d %s", res.status, res.body)
	}
}
