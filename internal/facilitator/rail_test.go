package facilitator_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/solana"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

const (
	payTo        = "7Li3hs31FppKK6CbRFQMUzFrTGABSVDUtv3NvaKNoRfV"
	tokenAccount = "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK"
	resource     = "http://127.0.0.1:8402/toll/payability/check"
	targetURL    = "https://seller.example/api"
)

var offer = gate.Offer{Op: "check", Price: 10000, Description: "one payability verdict"}

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

type fixture struct {
	t     *testing.T
	fake  *facilitatortest.Fake
	rail  *facilitator.Rail
	memos gate.Memos
	clock *clock
	store store.Store
}

// openStore opens a SQLite store of the test's own: the settlement record.
func openStore(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), t.TempDir()+"/payability.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{t: t, fake: facilitatortest.New(t), clock: &clock{t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}}
	fx.store = openStore(t)
	client, err := facilitator.NewClient(fx.fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := facilitator.Discover(context.Background(), client, gate.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	fx.memos = gate.Memos{Key: bytes.Repeat([]byte{7}, 32), Now: fx.clock.Now, Rand: rand.Reader}
	fx.rail = &facilitator.Rail{
		Client: client, Memos: fx.memos, Versions: sup.Versions, Now: fx.clock.Now,
		Terms:         gate.Terms{Network: gate.Mainnet, PayTo: payTo, TokenAccount: tokenAccount, MaxTimeoutSeconds: 120, FeePayer: sup.FeePayer},
		VerifyTimeout: time.Second, SettleTimeout: time.Second,
		Store: fx.store, LookupDelay: time.Millisecond,
	}
	return fx
}

// accepted is what a v2 client echoes: accepts[0] of our PAYMENT-REQUIRED
// header for a challenge with memo.
func (fx *fixture) accepted(memo string) map[string]any {
	fx.t.Helper()
	c := fx.rail.Terms.Challenge(offer, resource, memo)
	raw, err := base64.StdEncoding.DecodeString(c.Header)
	if err != nil {
		fx.t.Fatal(err)
	}
	var h struct {
		Accepts []map[string]any `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.Accepts) != 1 {
		fx.t.Fatalf("our challenge header: %v", err)
	}
	return h.Accepts[0]
}

func (fx *fixture) memo(op, url string) string {
	m, err := fx.memos.Issue(op, url)
	if err != nil {
		fx.t.Fatal(err)
	}
	return m
}

func transaction(memo string) string {
	return facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: facilitatortest.Address("buyer"), FeePayer: facilitatortest.Address("facilitator-fee-payer"),
		Mint: gate.Mainnet.Mint, To: tokenAccount, Amount: offer.Price, Memo: memo,
	})
}

func request(h http.Header) gate.Request {
	return gate.Request{Op: offer.Op, Resource: resource, TargetURL: targetURL, Header: h}
}

func header(name, value string) http.Header {
	h := http.Header{}
	h.Set(name, value)
	return h
}

// v2 is a well-formed v2 payment echoing a fresh memo bound to targetURL.
func (fx *fixture) v2() http.Header {
	memo := fx.memo(offer.Op, targetURL)
	return header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(memo), transaction(memo)))
}

func TestMatchRefusesBeforeAnyFacilitatorCall(t *testing.T) {
	fx := newFixture(t)
	probe := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"scheme":"exact","network":"solana","payload":{"signature":"PROBE-INVALID-SIGNATURE","authorization":{"from":"PROBE","to":"PROBE","value":0}}}`))
	memo := fx.memo(offer.Op, targetURL)
	with := func(k string, v any) map[string]any {
		a := fx.accepted(memo)
		a[k] = v
		return a
	}
	withExtra := func(extra any) map[string]any {
		a := fx.accepted(memo)
		a["extra"] = extra
		return a
	}
	tx := transaction(memo)
	v2 := func(a map[string]any) http.Header {
		return header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(a, tx))
	}
	tests := []struct {
		name string
		h    http.Header
		want gate.Code
	}{
		{"the rail-probe facilitator probe (network solana, no accepted)", header(facilitator.HeaderPaymentSignature, probe), gate.CodeNoMatchingTerms},
		{"the rail-probe bogus probe", header(facilitator.HeaderXPayment, "bogus-not-a-payment-header"), gate.CodePayloadMalformed},
		{"not JSON", header(facilitator.HeaderPaymentSignature, base64.StdEncoding.EncodeToString([]byte("hello"))), gate.CodePayloadMalformed},
		{"a JSON array", header(facilitator.HeaderPaymentSignature, base64.StdEncoding.EncodeToString([]byte("[1]"))), gate.CodePayloadMalformed},
		{"v1 payload in PAYMENT-SIGNATURE", header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV1("solana", tx)), gate.CodePayloadMalformed},
		{"v2 payload in X-PAYMENT", header(facilitator.HeaderXPayment, facilitatortest.PayloadV2(fx.accepted(memo), tx)), gate.CodePayloadMalformed},
		{"both headers", http.Header{facilitator.HeaderPaymentSignature: {"a"}, facilitator.HeaderXPayment: {"b"}}, gate.CodePayloadMalformed},
		{"another network", v2(with("network", gate.Devnet.CAIP2)), gate.CodeNoMatchingTerms},
		{"v1 network name in a v2 payload", v2(with("network", "solana")), gate.CodeNoMatchingTerms},
		{"another scheme", v2(with("scheme", "upto")), gate.CodeNoMatchingTerms},
		{"another asset", v2(with("asset", gate.Devnet.Mint)), gate.CodeNoMatchingTerms},
		{"a lower amount", v2(with("amount", "1")), gate.CodeNoMatchingTerms},
		{"an amount as a number", v2(with("amount", 10000)), gate.CodePayloadMalformed},
		{"another payee", v2(with("payTo", tokenAccount)), gate.CodeNoMatchingTerms},
		{"a memo we did not issue", v2(withExtra(map[string]any{"memo": "pv-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})), gate.CodeMemoInvalid},
		{"a memo of another op", v2(withExtra(map[string]any{"memo": fx.memo("probe", targetURL)})), gate.CodeMemoWrongOp},
		{"a memo bound to another URL", v2(withExtra(map[string]any{"memo": fx.memo(offer.Op, targetURL+"/other")})), gate.CodeMemoInvalid},
		{"a memo that is not a string", v2(withExtra(map[string]any{"memo": 7})), gate.CodePayloadMalformed},
		{"no transaction", header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(memo), "")), gate.CodePayloadMalformed},
		{"a transaction that is not one", header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(memo), base64.StdEncoding.EncodeToString([]byte("not a transaction")))), gate.CodePayloadMalformed},
		{"v1 on another network", header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana-devnet", tx)), gate.CodeNoMatchingTerms},
		{"v1 on base", header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("base", tx)), gate.CodeNoMatchingTerms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { fx.refusesFree(t, tt.h, tt.want) })
	}
	if calls := fx.fake.Calls(""); len(calls) != 1 || calls[0].Path != "/supported" {
		t.Errorf("the facilitator was called: %+v", calls)
	}
}

// refusesFree checks that both Match and Settle refuse h with want (the
// caller then checks no facilitator call was made).
func (fx *fixture) refusesFree(t *testing.T, h http.Header, want gate.Code) {
	t.Helper()
	if got := fx.rail.Match(request(h), offer); got != want {
		t.Errorf("Match = %q, want %q", got, want)
	}
	if _, got := fx.rail.Settle(context.Background(), request(h), offer); got != want {
		t.Errorf("Settle = %q, want %q", got, want)
	}
}

func TestMatchAcceptsAnyValidMemoWeIssued(t *testing.T) {
	fx := newFixture(t)
	older := fx.memo(offer.Op, targetURL)
	fx.clock.Add(10 * time.Minute)
	_ = fx.memo(offer.Op, targetURL) // the latest challenge's memo is another one
	h := header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(older), transaction(older)))
	if got := fx.rail.Match(request(h), offer); got != "" {
		t.Errorf("an earlier, still valid memo: %q", got)
	}
	unbound := fx.memo(offer.Op, "") // a GET challenge's memo names no URL
	h = header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(unbound), transaction(unbound)))
	if got := fx.rail.Match(request(h), offer); got != "" {
		t.Errorf("an unbound memo: %q", got)
	}
	fx.clock.Add(6 * time.Minute)
	h = header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(older), transaction(older)))
	if got := fx.rail.Match(request(h), offer); got != gate.CodeMemoExpired {
		t.Errorf("an expired memo: %q", got)
	}
}

func TestSettleV2ForwardsOurRequirements(t *testing.T) {
	fx := newFixture(t)
	memo := fx.memo(offer.Op, targetURL)
	accepted := fx.accepted(memo)
	accepted["maxTimeoutSeconds"] = 999999           // not a term we match on
	accepted["extra"].(map[string]any)["junk"] = "x" // nor is anything else in extra
	h := header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(accepted, transaction(memo)))
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" {
		t.Fatalf("Settle refused: %q", code)
	}
	for _, path := range []string{"/verify", "/settle"} {
		calls := fx.fake.Calls(path)
		if len(calls) != 1 {
			t.Fatalf("%s called %d times", path, len(calls))
		}
		c := calls[0]
		var req map[string]any
		json.Unmarshal(c.Requirements, &req)
		want := map[string]any{
			"scheme": "exact", "network": gate.Mainnet.CAIP2, "asset": gate.Mainnet.Mint, "amount": "10000",
			"payTo": payTo, "maxTimeoutSeconds": float64(120),
			"extra": map[string]any{"feePayer": fx.fake.FeePayer, "memo": memo, "usdc_token_account": tokenAccount},
		}
		if g, w := mustJSON(req), mustJSON(want); g != w {
			t.Errorf("%s requirements\n got %s\nwant %s", path, g, w)
		}
		if c.X402Version != 2 {
			t.Errorf("%s x402Version %d", path, c.X402Version)
		}
		sent, _ := base64.StdEncoding.DecodeString(h.Get(facilitator.HeaderPaymentSignature))
		if !bytes.Equal(c.Payload, sent) {
			t.Errorf("%s: the payload was not forwarded as the client sent it", path)
		}
	}
	wantTx := facilitatortest.TxOf(fx.fake.Calls("/settle")[0].Payload)
	if pay.Rail != gate.RailFacilitator || pay.Tx != wantTx || pay.Amount != 10000 || pay.Payer != facilitatortest.Address("buyer") || pay.X402Version != 2 {
		t.Errorf("payment %+v", pay)
	}
	var receipt facilitator.Receipt
	if err := json.Unmarshal(pay.SettleResponse, &receipt); err != nil || !receipt.Success || receipt.Transaction != wantTx || receipt.Network != gate.Mainnet.CAIP2 {
		t.Errorf("receipt %s", pay.SettleResponse)
	}
}

func TestSettleV1ForwardsRequirementsWithoutMemo(t *testing.T) {
	fx := newFixture(t)
	h := header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana", transaction("")))
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || pay.X402Version != 1 {
		t.Fatalf("Settle: %q %+v", code, pay)
	}
	c := fx.fake.Calls("/settle")[0]
	var req map[string]any
	json.Unmarshal(c.Requirements, &req)
	want := map[string]any{
		"scheme": "exact", "network": "solana", "maxAmountRequired": "10000", "resource": resource,
		"description": offer.Description, "mimeType": "application/json", "payTo": payTo,
		"maxTimeoutSeconds": float64(120), "asset": gate.Mainnet.Mint,
		"extra": map[string]any{"feePayer": fx.fake.FeePayer},
	}
	if g, w := mustJSON(req), mustJSON(want); g != w || c.X402Version != 1 {
		t.Errorf("v1 requirements\n got %s\nwant %s", g, w)
	}
	var receipt facilitator.Receipt
	json.Unmarshal(pay.SettleResponse, &receipt)
	if receipt.Network != "solana" {
		t.Errorf("v1 receipt network %q", receipt.Network)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func answer(status int, body string) func(facilitatortest.Call) facilitatortest.Answer {
	return func(facilitatortest.Call) facilitatortest.Answer {
		return facilitatortest.Answer{Status: status, Body: body}
	}
}

// Every failure path fails closed, with a code from the closed set.
func TestSettleFailsClosed(t *testing.T) {
	valid := answer(200, `{"isValid":true,"payer":"`+facilitatortest.Address("buyer")+`"}`)
	settled := func(c facilitatortest.Call) facilitatortest.Answer {
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	}
	tests := []struct {
		name           string
		verify, settle func(facilitatortest.Call) facilitatortest.Answer
		want           gate.Code
		settleCalls    int
	}{
		{"HTTP 200 with isValid false", answer(200, `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_recipient_mismatch","payer":""}`), nil, gate.CodeWrongRecipient, 0},
		{"isValid false, insufficient funds", answer(200, `{"isValid":false,"invalidReason":"insufficient_funds"}`), nil, gate.CodeInsufficientFunds, 0},
		{"isValid false, free text after the reason", answer(200, `{"isValid":false,"invalidReason":"invalid_exact_svm_smart_wallet_program_not_allowed: Evil1111"}`), nil, gate.CodeVerifyRefused, 0},
		{"isValid false, an unknown reason", answer(200, `{"isValid":false,"invalidReason":"the moon is full"}`), nil, gate.CodeVerifyRefused, 0},
		{"isValid false, no reason", answer(200, `{"isValid":false}`), nil, gate.CodeVerifyRefused, 0},
		{"HTTP 400 with isValid false", answer(400, `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_amount_mismatch"}`), nil, gate.CodeWrongAmount, 0},
		{"HTTP 500 saying isValid true", answer(500, `{"isValid":true}`), nil, gate.CodeFacilitatorError, 0},
		{"verify: HTTP 500", answer(500, `oops`), nil, gate.CodeFacilitatorError, 0},
		{"verify: unparseable JSON", answer(200, `{"isValid":tru`), nil, gate.CodeFacilitatorError, 0},
		{"verify: isValid as a string", answer(200, `{"isValid":"true"}`), nil, gate.CodeFacilitatorError, 0},
		{"verify: no isValid", answer(200, `{"valid":true}`), nil, gate.CodeFacilitatorError, 0},
		{"verify: over the answer cap", answer(200, `{"isValid":true,"x":"`+strings.Repeat("a", 70000)+`"}`), nil, gate.CodeFacilitatorError, 0},
		{"success false after a valid verify", valid, answer(200, `{"success":false,"errorReason":"invalid_exact_svm_transaction_failed","transaction":"","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`), gate.CodeSettleFailed, 1},
		{"success true without a transaction id", valid, answer(200, `{"success":true,"transaction":"","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`), gate.CodeSettleFailed, 1},
		{"success true with a transaction id that is not a signature", valid, answer(200, `{"success":true,"transaction":"0xabc","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`), gate.CodeSettleFailed, 1},
		{"success true on another network", valid, func(c facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "eip155:8453")}
		}, gate.CodeSettleFailed, 1},
		{"success true with HTTP 500", valid, func(c facilitatortest.Call) facilitatortest.Answer {
			return facilitatortest.Answer{Status: 500, Body: facilitatortest.SettledBody(c, "")}
		}, gate.CodeFacilitatorError, 1},
		{"settle: unparseable JSON", valid, answer(200, `<html>`), gate.CodeFacilitatorError, 1},
		{"settle: duplicate settlement", valid, answer(200, `{"success":false,"errorReason":"duplicate_settlement","transaction":"","network":""}`), gate.CodePaymentAlreadyUsed, 1},
		{"settle: pending", valid, answer(200, `{"success":false,"errorReason":"settlement_pending","transaction":"","network":""}`), gate.CodeSettlementPending, 1},
		{"a valid control", valid, settled, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.fake.Set(tt.verify, tt.settle)
			pay, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer)
			if code != tt.want {
				t.Errorf("code %q, want %q", code, tt.want)
			}
			if code != "" && (pay.Tx != "" || pay.SettleResponse != nil) {
				t.Errorf("a refusal carries a payment: %+v", pay)
			}
			if n := len(fx.fake.Calls("/settle")); n != tt.settleCalls {
				t.Errorf("/settle called %d times, want %d", n, tt.settleCalls)
			}
		})
	}
}

func TestSettleTransportFailures(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer slow.Close()
		defer close(release)
		fx := newFixture(t)
		fx.rail.Client, _ = facilitator.NewClient(slow.URL, nil)
		// The facilitator never answers, so the timeout is the only way
		// out: the test does not measure how long it takes.
		fx.rail.VerifyTimeout = 200 * time.Millisecond
		if _, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer); code != gate.CodeFacilitatorError {
			t.Errorf("code %q", code)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		fx := newFixture(t)
		fx.rail.Client, _ = facilitator.NewClient(dead.URL, nil)
		if _, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer); code != gate.CodeFacilitatorError {
			t.Errorf("code %q", code)
		}
	})
	t.Run("a redirect is not followed", func(t *testing.T) {
		fx := newFixture(t)
		redirect := httptest.NewServer(http.RedirectHandler(fx.fake.URL+"/verify", http.StatusTemporaryRedirect))
		defer redirect.Close()
		fx.rail.Client, _ = facilitator.NewClient(redirect.URL, nil)
		if _, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer); code != gate.CodeFacilitatorError {
			t.Errorf("code %q", code)
		}
		if n := len(fx.fake.Calls("/verify")); n != 0 {
			t.Errorf("the redirect was followed")
		}
	})
}

// A pending settlement is not paid yet; the same payment resumes by going
// straight to /settle, which the facilitator answers from its own record.
func TestPendingSettlementResumes(t *testing.T) {
	fx := newFixture(t)
	var pending atomic.Bool
	pending.Store(true)
	fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		if pending.Load() {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"settlement_pending","transaction":"` + facilitatortest.TxOf(c.Payload) + `","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}`}
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	h := fx.v2()
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("first: %q", code)
	}
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("still pending: %q", code)
	}
	pending.Store(false)
	fx.clock.Add(16 * time.Minute) // the memo expired meanwhile: the payment was already sent
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || pay.Tx == "" {
		t.Fatalf("resume: %q", code)
	}
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 3 {
		t.Errorf("verify %d, settle %d; want 1 and 3", v, s)
	}
	// Settled: presenting it again costs no facilitator call; the store's
	// claim decides what it gets.
	again, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || again.Tx != pay.Tx || len(fx.fake.Calls("/settle")) != 3 {
		t.Errorf("again: %q %+v", code, again)
	}
	// A new presentation with an expired memo that never reached the
	// facilitator is refused.
	if got := fx.rail.Match(request(fx.v2WithMemo(fx.memoAt(-20*time.Minute))), offer); got != gate.CodeMemoExpired {
		t.Errorf("expired memo: %q", got)
	}
}

func (fx *fixture) memoAt(ago time.Duration) string {
	m := gate.Memos{Key: fx.memos.Key, Rand: rand.Reader, Now: func() time.Time { return fx.clock.Now().Add(ago) }}
	memo, err := m.Issue(offer.Op, targetURL)
	if err != nil {
		fx.t.Fatal(err)
	}
	return memo
}

func (fx *fixture) v2WithMemo(memo string) http.Header {
	return header(facilitator.HeaderPaymentSignature, facilitatortest.PayloadV2(fx.accepted(memo), transaction(memo)))
}

// A lost settle answer: the payload was maybe broadcast, so the next
// presentation goes to /settle, not /verify — on the same rail, and on
// another instance (or after a restart) sharing the store.
func TestLostSettleAnswerResumesAtSettle(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(map[bool]string{false: "same rail", true: "after restart"}[restart], func(t *testing.T) {
			fx := newFixture(t)
			var fail atomic.Bool
			fail.Store(true)
			fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
				if fail.Load() {
					return facilitatortest.Answer{Status: 502, Body: "bad gateway"}
				}
				return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
			})
			h := fx.v2()
			if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeFacilitatorError {
				t.Fatalf("first: %q", code)
			}
			fail.Store(false)
			rail := fx.rail
			if restart {
				rail = fx.restarted()
			}
			if _, code := rail.Settle(context.Background(), request(h), offer); code != "" {
				t.Fatalf("resume: %q", code)
			}
			if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 2 {
				t.Errorf("verify %d, settle %d; want 1 and 2", v, s)
			}
		})
	}
}

// The same PAYMENT-SIGNATURE presented 50 times at once settles once.
func TestFiftyConcurrentPresentationsSettleOnce(t *testing.T) {
	fx := newFixture(t)
	gateOpen := make(chan struct{})
	fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		<-gateOpen // hold the settlement until every presentation is in
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
	fx.rail.SettleTimeout = 10 * time.Second
	h := fx.v2()
	var wg sync.WaitGroup
	txs := make([]string, 50)
	codes := make([]gate.Code, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pay gate.Payment
			pay, codes[i] = fx.rail.Settle(context.Background(), request(h), offer)
			txs[i] = pay.Tx
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(gateOpen)
	wg.Wait()
	for i := range 50 {
		if codes[i] != "" || txs[i] != txs[0] || txs[0] == "" {
			t.Fatalf("presentation %d: %q %q", i, codes[i], txs[i])
		}
	}
	if v, s := len(fx.fake.Calls("/verify")), len(fx.fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
}

type fakeChain struct {
	tx  *solana.Tx
	err error
}

func (c fakeChain) GetTransaction(context.Context, string) (*solana.Tx, error) { return c.tx, c.err }

func TestFeeFromTheChain(t *testing.T) {
	fx := newFixture(t)
	fx.rail.Chain = &creditChain{show: pays(offer.Price)}
	pay, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer)
	if code != "" || pay.FeeLamports != 5000 {
		t.Errorf("fee: %q %+v", code, pay)
	}

	// A node that does not answer releases nothing: retry later.
	fx = newFixture(t)
	fx.rail.Chain = fakeChain{err: &solana.Error{Code: solana.CodeTransport}}
	if pay, code := fx.rail.Settle(context.Background(), request(fx.v2()), offer); code != gate.CodeChainUnavailable || pay.Tx != "" {
		t.Errorf("a node that does not answer: %q %+v", code, pay)
	}
}

func TestDiscover(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		supported string
		network   gate.Network
		versions  []int
		err       bool
	}{
		{"v1 and v2 on mainnet", "", gate.Mainnet, []int{1, 2}, false},
		{"devnet", "", gate.Devnet, []int{1, 2}, false},
		{"v2 only, CAIP-2", `{"kinds":[{"x402Version":2,"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","extra":{"feePayer":"` + facilitatortest.Address("fp") + `"}}]}`, gate.Mainnet, []int{2}, false},
		{"base only", `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:8453"}]}`, gate.Mainnet, nil, true},
		{"another scheme", `{"kinds":[{"x402Version":2,"scheme":"upto","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","extra":{"feePayer":"` + facilitatortest.Address("fp") + `"}}]}`, gate.Mainnet, nil, true},
		{"no fee payer", `{"kinds":[{"x402Version":2,"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}]}`, gate.Mainnet, nil, true},
		{"a fee payer that is not an address", `{"kinds":[{"x402Version":2,"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","extra":{"feePayer":"0xabc"}}]}`, gate.Mainnet, nil, true},
		{"not JSON", `<html>`, gate.Mainnet, nil, true},
		{"no kinds", `{}`, gate.Mainnet, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := facilitatortest.New(t)
			fake.Supported = tt.supported
			client, _ := facilitator.NewClient(fake.URL+"/", nil)
			s, err := facilitator.Discover(ctx, client, tt.network)
			if (err != nil) != tt.err {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			for _, v := range tt.versions {
				if !s.Versions[v] {
					t.Errorf("version %d missing: %v", v, s.Versions)
				}
			}
			if len(s.Versions) != len(tt.versions) || !solana.ValidAddress(s.FeePayer) {
				t.Errorf("support %+v", s)
			}
		})
	}
}

// A v1 payment to a facilitator that settles only v2 is refused up front.
func TestUnsupportedVersionIsRefused(t *testing.T) {
	fx := newFixture(t)
	fx.rail.Versions = map[int]bool{2: true}
	h := header(facilitator.HeaderXPayment, facilitatortest.PayloadV1("solana", transaction("")))
	if got := fx.rail.Match(request(h), offer); got != gate.CodeRailUnavailable {
		t.Errorf("got %q", got)
	}
}

func TestNewClientRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "/relative", "http://x/?a=b", "http://"} {
		if _, err := facilitator.NewClient(u, nil); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// A client error never carries the facilitator's answer or URL.
func TestClientErrorsAreClosedForm(t *testing.T) {
	secret := "canary-7f3a"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		w.Write([]byte(secret))
	}))
	defer srv.Close()
	c, _ := facilitator.NewClient(srv.URL+"/"+secret, nil)
	_, err := c.Verify(context.Background(), facilitator.Request{})
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("error %v", err)
	}
}
