package facilitator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/chain/evmtest"
	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
)

// evmPayTo is our EVM payee, EIP-55 checksummed.
const evmPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// newEVMFixture is newFixture with the EVM entry offered on Base: the
// rail's EVM versions discovered from the fake's /supported.
func newEVMFixture(t *testing.T) *fixture { return newEVMFixtureOn(t, gate.Base) }

func newEVMFixtureOn(t *testing.T, n gate.EVMNetwork) *fixture {
	t.Helper()
	fx := newFixture(t)
	versions, err := facilitator.DiscoverEVM(context.Background(), fx.rail.Client, n)
	if err != nil {
		t.Fatal(err)
	}
	fx.rail.Terms.EVM = &gate.EVMTerms{Network: n, PayTo: evmPayTo}
	fx.rail.EVMVersions = versions
	return fx
}

// withNode gives the rail an EVM node (--evm-rpc): the loopback fake.
func (fx *fixture) withNode() *evmtest.Node {
	node := evmtest.New(fx.t)
	c, err := chain.New(chain.Options{EVMRPC: node.URL, AllowPrivate: true})
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.rail.EVMChain = c
	return node
}

// evmAccepted is what a v2 client echoes choosing our EVM entry:
// accepts[1] of our PAYMENT-REQUIRED header for a challenge with memo.
func (fx *fixture) evmAccepted(memo string) map[string]any {
	fx.t.Helper()
	c := fx.rail.Terms.Challenge(offer, resource, memo)
	raw, _ := base64.StdEncoding.DecodeString(c.Header)
	var h struct {
		Accepts []map[string]any `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.Accepts) != 2 {
		fx.t.Fatalf("our challenge header has no EVM entry: %v", err)
	}
	return h.Accepts[1]
}

// evmV2 is a well-formed v2 EVM payment echoing a fresh memo.
func (fx *fixture) evmV2() http.Header {
	memo := fx.memo(offer.Op, targetURL)
	return header(facilitator.HeaderPaymentSignature,
		facilitatortest.EVMPayloadV2(fx.evmAccepted(memo), facilitatortest.EVMAuthorization(evmPayTo, offer.Price)))
}

func TestEVMMatchRefusesBeforeAnyFacilitatorCall(t *testing.T) {
	fx := newEVMFixture(t)
	memo := fx.memo(offer.Op, targetURL)
	auth := facilitatortest.EVMAuthorization(evmPayTo, offer.Price)
	with := func(k string, v any) map[string]any {
		a := fx.evmAccepted(memo)
		a[k] = v
		return a
	}
	v2 := func(a map[string]any, au facilitatortest.Authorization) http.Header {
		return header(facilitator.HeaderPaymentSignature, facilitatortest.EVMPayloadV2(a, au))
	}
	authWith := func(change func(*facilitatortest.Authorization)) facilitatortest.Authorization {
		a := auth
		change(&a)
		return a
	}
	raw := func(payload string) http.Header {
		b, _ := json.Marshal(map[string]any{"x402Version": 2, "accepted": fx.evmAccepted(memo), "payload": json.RawMessage(payload)})
		return header(facilitator.HeaderPaymentSignature, base64.StdEncoding.EncodeToString(b))
	}
	tests := []struct {
		name string
		h    http.Header
		want gate.Code
	}{
		{"another EVM network", v2(with("network", gate.BaseSepolia.CAIP2), auth), gate.CodeNoMatchingTerms},
		{"another asset", v2(with("asset", gate.BaseSepolia.USDC), auth), gate.CodeNoMatchingTerms},
		{"another payee", v2(with("payTo", facilitatortest.EVMAddress("someone")), auth), gate.CodeNoMatchingTerms},
		{"a lower amount", v2(with("amount", "9999"), auth), gate.CodeNoMatchingTerms},
		{"our Solana payee on the EVM network", v2(with("payTo", payTo), auth), gate.CodeNoMatchingTerms},
		{"an authorization to another payee", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.To = facilitatortest.EVMAddress("someone") })), gate.CodeNoMatchingTerms},
		{"an authorization of less than the price", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.Value = "9999" })), gate.CodeNoMatchingTerms},
		{"an authorization of more than the price", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.Value = "10001" })), gate.CodeNoMatchingTerms},
		{"a value with a leading zero", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.Value = "010000" })), gate.CodePayloadMalformed},
		{"a payer that is no address", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.From = "0x12" })), gate.CodePayloadMalformed},
		{"a short nonce", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.Nonce = "0x01" })), gate.CodePayloadMalformed},
		{"an empty validity window", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.ValidAfter, a.ValidBefore = "100", "100" })), gate.CodePayloadMalformed},
		{"a window that is no number", v2(fx.evmAccepted(memo), authWith(func(a *facilitatortest.Authorization) { a.ValidBefore = "soon" })), gate.CodePayloadMalformed},
		{"no authorization", raw(`{"signature":"0x` + strings.Repeat("ab", 65) + `"}`), gate.CodePayloadMalformed},
		{"a short signature", raw(`{"signature":"0x1234","authorization":` + mustJSON(auth) + `}`), gate.CodePayloadMalformed},
		{"a Solana payload on the EVM entry", raw(`{"transaction":"AQID"}`), gate.CodePayloadMalformed},
		{"a memo we did not issue", v2(with("extra", map[string]any{"memo": "pv-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}), auth), gate.CodeMemoInvalid},
		{"v1 on base-sepolia", header(facilitator.HeaderXPayment, facilitatortest.EVMPayloadV1("base-sepolia", auth)), gate.CodeNoMatchingTerms},
		{"v1 with the CAIP-2 id", header(facilitator.HeaderXPayment, facilitatortest.EVMPayloadV1("eip155:8453", auth)), gate.CodeNoMatchingTerms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { fx.refusesFree(t, tt.h, tt.want) })
	}
	if calls := fx.fake.Calls(""); len(calls) != 2 {
		t.Errorf("the facilitator was called beyond /supported: %+v", calls)
	}
}

// Without --evm-pay-to the EVM entry is not offered: an EVM payment matches
// nothing, even one naming our Solana payee's terms.
func TestEVMPaymentWithoutTheEVMEntry(t *testing.T) {
	fx := newFixture(t)
	auth := facilitatortest.EVMAuthorization(evmPayTo, offer.Price)
	accepted := map[string]any{"scheme": "exact", "network": gate.Base.CAIP2, "amount": "10000", "asset": gate.Base.USDC, "payTo": evmPayTo}
	for _, h := range []http.Header{
		header(facilitator.HeaderPaymentSignature, facilitatortest.EVMPayloadV2(accepted, auth)),
		header(facilitator.HeaderXPayment, facilitatortest.EVMPayloadV1("base", auth)),
	} {
		if got := fx.rail.Match(request(h), offer); got != gate.CodeNoMatchingTerms {
			t.Errorf("Match = %q", got)
		}
	}
}

func TestEVMSettleV2ForwardsOurRequirements(t *testing.T) {
	fx := newEVMFixture(t)
	memo := fx.memo(offer.Op, targetURL)
	accepted := fx.evmAccepted(memo)
	accepted["payTo"] = strings.ToLower(evmPayTo) // the same account, cased otherwise
	h := header(facilitator.HeaderPaymentSignature, facilitatortest.EVMPayloadV2(accepted, facilitatortest.EVMAuthorization(strings.ToLower(evmPayTo), offer.Price)))
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" {
		t.Fatalf("Settle refused: %q", code)
	}
	for _, path := range []string{"/verify", "/settle"} {
		calls := fx.fake.Calls(path)
		if len(calls) != 1 {
			t.Fatalf("%s called %d times", path, len(calls))
		}
		var req map[string]any
		json.Unmarshal(calls[0].Requirements, &req)
		want := map[string]any{
			"scheme": "exact", "network": "eip155:8453", "asset": gate.Base.USDC, "amount": "10000",
			"payTo": evmPayTo, "maxTimeoutSeconds": float64(120),
			"extra": map[string]any{"name": "USD Coin", "version": "2", "assetTransferMethod": "eip3009", "memo": memo},
		}
		if g, w := mustJSON(req), mustJSON(want); g != w {
			t.Errorf("%s requirements\n got %s\nwant %s", path, g, w)
		}
	}
	wantTx := facilitatortest.EVMTxOf(fx.fake.Calls("/settle")[0].Payload)
	if pay.Network != "eip155:8453" || pay.Tx != wantTx || pay.Amount != 10000 || pay.FeeLamports != 0 || pay.X402Version != 2 ||
		pay.Payer != "0x"+strings.TrimPrefix(pay.Payer, "0x") || !gate.SameEVMAddress(pay.Payer, facilitatortest.EVMAddress("buyer")) {
		t.Errorf("payment %+v", pay)
	}
	var receipt facilitator.Receipt
	if err := json.Unmarshal(pay.SettleResponse, &receipt); err != nil || receipt.Transaction != wantTx || receipt.Network != "eip155:8453" {
		t.Errorf("receipt %s", pay.SettleResponse)
	}
}

func TestEVMSettleV1OnBaseSepolia(t *testing.T) {
	fx := newEVMFixtureOn(t, gate.BaseSepolia)
	h := header(facilitator.HeaderXPayment, facilitatortest.EVMPayloadV1("base-sepolia", facilitatortest.EVMAuthorization(evmPayTo, offer.Price)))
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || pay.X402Version != 1 || pay.Network != "eip155:84532" {
		t.Fatalf("Settle: %q %+v", code, pay)
	}
	var req map[string]any
	json.Unmarshal(fx.fake.Calls("/settle")[0].Requirements, &req)
	want := map[string]any{
		"scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "10000", "resource": resource,
		"description": offer.Description, "mimeType": "application/json", "payTo": evmPayTo,
		"maxTimeoutSeconds": float64(120), "asset": gate.BaseSepolia.USDC,
		"extra": map[string]any{"name": "USDC", "version": "2", "assetTransferMethod": "eip3009"},
	}
	if g, w := mustJSON(req), mustJSON(want); g != w {
		t.Errorf("v1 requirements\n got %s\nwant %s", g, w)
	}
	var receipt facilitator.Receipt
	json.Unmarshal(pay.SettleResponse, &receipt)
	if receipt.Network != "base-sepolia" {
		t.Errorf("v1 receipt network %q", receipt.Network)
	}
}

// A facilitator's "settled" on the EVM entry is recorded only with an EVM
// transaction hash on our network.
func TestEVMSettleAnswerMustNameAnEVMTransaction(t *testing.T) {
	for name, body := range map[string]string{
		"a Solana signature": `{"success":true,"transaction":"` + facilitatortest.TxOf([]byte("x")) + `","network":"eip155:8453"}`,
		"a short hash":       `{"success":true,"transaction":"0x1234","network":"eip155:8453"}`,
		"another network":    `{"success":true,"transaction":"0x` + strings.Repeat("ab", 32) + `","network":"eip155:84532"}`,
	} {
		t.Run(name, func(t *testing.T) {
			fx := newEVMFixture(t)
			fx.fake.Set(nil, answer(200, body))
			if _, code := fx.rail.Settle(context.Background(), request(fx.evmV2()), offer); code != gate.CodeSettleFailed {
				t.Errorf("code %q", code)
			}
		})
	}
}

// With --evm-rpc, the report is released only once the receipt shows
// success and a USDC Transfer to our address of at least the price.
func TestEVMReceiptMustShowTheTransfer(t *testing.T) {
	buyer := facilitatortest.EVMAddress("buyer")
	transfer := func(token, to string, amount uint64) evmtest.Transfer {
		return evmtest.Transfer{Token: token, From: buyer, To: to, Amount: amount}
	}
	tests := []struct {
		name string
		show func(n *evmtest.Node, hash string)
		code gate.Code
	}{
		{"a transfer of the price", func(n *evmtest.Node, h string) { n.Settled(h, transfer(gate.Base.USDC, evmPayTo, offer.Price)) }, ""},
		{"a transfer above the price, lower-case addresses", func(n *evmtest.Node, h string) {
			n.Settled(h, transfer(strings.ToLower(gate.Base.USDC), strings.ToLower(evmPayTo), offer.Price+1))
		}, ""},
		{"two transfers summing to the price", func(n *evmtest.Node, h string) {
			n.Settled(h, transfer(gate.Base.USDC, evmPayTo, 4000), transfer(gate.Base.USDC, evmPayTo, 6000))
		}, ""},
		{"a transfer below the price", func(n *evmtest.Node, h string) { n.Settled(h, transfer(gate.Base.USDC, evmPayTo, offer.Price-1)) }, gate.CodeAmountInsufficient},
		{"a transfer to someone else", func(n *evmtest.Node, h string) {
			n.Settled(h, transfer(gate.Base.USDC, facilitatortest.EVMAddress("someone"), offer.Price))
		}, gate.CodeAmountInsufficient},
		{"another token", func(n *evmtest.Node, h string) { n.Settled(h, transfer(gate.BaseSepolia.USDC, evmPayTo, offer.Price)) }, gate.CodeWrongMint},
		{"no transfer at all", func(n *evmtest.Node, h string) { n.Settled(h) }, gate.CodeAmountInsufficient},
		{"reverted", func(n *evmtest.Node, h string) {
			n.SetReceipt(chain.Receipt{TransactionHash: h, Status: "0x0", Logs: []chain.Log{transfer(gate.Base.USDC, evmPayTo, offer.Price).Log()}})
		}, gate.CodeTxRejected},
		{"not mined yet", func(*evmtest.Node, string) {}, gate.CodeSettlementPending},
		{"node down", func(n *evmtest.Node, _ string) { n.SetDown(true) }, gate.CodeChainUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newEVMFixture(t)
			node := fx.withNode()
			fx.fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
				tt.show(node, facilitatortest.EVMTxOf(c.Payload))
				return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
			})
			pay, code := fx.rail.Settle(context.Background(), request(fx.evmV2()), offer)
			if code != tt.code {
				t.Fatalf("code %q, want %q", code, tt.code)
			}
			if code == "" && (pay.Tx == "" || pay.FeeLamports != 0) || code != "" && pay.Tx != "" {
				t.Errorf("payment %+v", pay)
			}
			if len(node.Lookups()) == 0 {
				t.Error("the node was not asked")
			}
		})
	}
}

// A settlement the node does not show yet resumes with the same payload:
// looked up again, never settled again.
func TestEVMSettledButNotMinedYetResumes(t *testing.T) {
	fx := newEVMFixture(t)
	node := fx.withNode()
	h := fx.evmV2()
	if _, code := fx.rail.Settle(context.Background(), request(h), offer); code != gate.CodeSettlementPending {
		t.Fatalf("first presentation: %q", code)
	}
	hash := facilitatortest.EVMTxOf(fx.fake.Calls("/settle")[0].Payload)
	node.Settled(hash, evmtest.Transfer{Token: gate.Base.USDC, From: facilitatortest.EVMAddress("buyer"), To: evmPayTo, Amount: offer.Price})
	pay, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || pay.Tx != hash {
		t.Fatalf("resume: %q %+v", code, pay)
	}
	if n := len(fx.fake.Calls("/settle")); n != 1 {
		t.Errorf("/settle called %d times", n)
	}
	// Presented once more, it maps to the same transaction with no call at
	// all: the gate's claim on the transaction then refuses a second use.
	lookups := len(node.Lookups())
	again, code := fx.rail.Settle(context.Background(), request(h), offer)
	if code != "" || again.Tx != hash || len(node.Lookups()) != lookups || len(fx.fake.Calls("/verify")) != 1 {
		t.Errorf("third presentation: %q %+v", code, again)
	}
}
