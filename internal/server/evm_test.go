package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/chain/evmtest"
	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
)

// testEVMPayTo is our EVM payee in the tests, EIP-55 checksummed.
const testEVMPayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// evmNetworks are the networks --evm-network takes.
var evmNetworks = []gate.EVMNetwork{gate.Base, gate.BaseSepolia}

// withEVM offers the EVM entry on n through the harness's facilitator rail
// (withFacilitator first), with a loopback EVM node (--evm-rpc), as serve
// does with --evm-pay-to, --evm-network and --evm-rpc.
func withEVM(t *testing.T, h *harness, n gate.EVMNetwork) *evmtest.Node {
	t.Helper()
	rail := h.gate.Facilitator.(*facilitator.Rail)
	versions, err := facilitator.DiscoverEVM(context.Background(), rail.Client, n)
	if err != nil {
		t.Fatal(err)
	}
	node := evmtest.New(t)
	c, err := chain.New(chain.Options{EVMRPC: node.URL, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	h.gate.Terms.EVM = &gate.EVMTerms{Network: n, PayTo: testEVMPayTo}
	rail.Terms.EVM, rail.EVMVersions, rail.EVMChain, rail.LookupDelay = h.gate.Terms.EVM, versions, c, time.Millisecond
	return node
}

// With the EVM entry beside Solana, accepts[0] stays the Solana entry the
// seed services' criteria read: our own check, memo and probe still grade
// POPULATED, BOUND and PRESENT-FAIL-CLOSED with no exposures.
func TestOwnGatePassesOwnChecksWithEVM(t *testing.T) {
	for _, n := range evmNetworks {
		t.Run(n.CAIP2, func(t *testing.T) {
			h := newHarness(t, ServeAll)
			fake := withFacilitator(t, h)
			withEVM(t, h, n)
			assertOwnGatePassesOwnChecks(t, h)
			if n := len(fake.Calls("/verify")) + len(fake.Calls("/settle")); n != 0 {
				t.Errorf("the probes reached the facilitator: %d calls", n)
			}
			res := h.do(http.MethodGet, "/toll/payability/check", "", nil)
			hdr := decodeHeader(t, res.header.Get("PAYMENT-REQUIRED"))
			accepts := hdr["accepts"].([]any)
			first, second := accepts[0].(map[string]any), accepts[1].(map[string]any)
			if len(accepts) != 2 || first["network"] != gate.Mainnet.CAIP2 || second["network"] != n.CAIP2 ||
				second["asset"] != n.USDC || second["payTo"] != testEVMPayTo || second["amount"] != "10000" {
				t.Errorf("accepts %v", accepts)
			}
			extra := second["extra"].(map[string]any)
			if extra["name"] != n.TokenName || extra["version"] != n.TokenVersion || extra["memo"] != first["extra"].(map[string]any)["memo"] {
				t.Errorf("EVM extra %v", extra)
			}
		})
	}
}

// Our own challenges lint with 0 errors and 0 warnings with both networks.
func TestOwnChallengesLintCleanWithEVM(t *testing.T) {
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: time.Now}
	body := []byte(`{"url":"https://example.com/paid"}`)
	for _, n := range evmNetworks {
		t.Run(n.CAIP2, func(t *testing.T) {
			h := newHarness(t, ServeAll)
			withFacilitator(t, h)
			withEVM(t, h, n)
			for _, path := range []string{"/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe"} {
				for _, method := range []string{http.MethodPost, http.MethodGet} {
					rep, err := runner.Lint(context.Background(), h.srv.URL+path, method, body)
					if err != nil {
						t.Fatalf("lint %s %s: %v", method, path, err)
					}
					errs, warns := rep.Counts()
					if errs != 0 || warns != 0 || !rep.Conforms || rep.Status != http.StatusPaymentRequired {
						t.Errorf("lint %s %s: %d errors, %d warnings, status %d", method, path, errs, warns, rep.Status)
						for _, f := range rep.Findings {
							t.Logf("  %s %s %s %s: %s", f.Severity, f.Rule, f.Leg, f.Field, f.Message)
						}
					}
				}
			}
		})
	}
}

// Our own paid routes preflight GO with both networks offered.
func TestOwnGatePreflightsGOWithEVM(t *testing.T) {
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent}), Now: time.Now}
	for _, n := range evmNetworks {
		t.Run(n.CAIP2, func(t *testing.T) {
			h := newHarness(t, ServeAll)
			fake := withFacilitator(t, h)
			withEVM(t, h, n)
			fake.Set(func(facilitatortest.Call) facilitatortest.Answer {
				return facilitatortest.Answer{Status: 200, Body: `{"isValid":false,"invalidReason":"invalid_exact_svm_payload_transaction_signature","payer":""}`}
			}, nil)
			for _, path := range []string{"/toll/payability/check", "/toll/payability/memo", "/toll/rail-probe/probe"} {
				rep, err := runner.Preflight(context.Background(), ops.PreflightRequest{URL: h.srv.URL + path, Method: http.MethodPost,
					Body: []byte(`{"url":"https://seller.example/api"}`)})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Decision != preflight.Go {
					t.Errorf("%s: %s %v (probes %+v, lint %+v)", path, rep.Decision, rep.Reasons, rep.Probes, rep.Lint)
				}
			}
			if n := len(fake.Calls("/settle")); n != 0 {
				t.Errorf("/settle %d calls (want 0)", n)
			}
		})
	}
}

// payEVMV2 does what a v2 EVM client does: read PAYMENT-REQUIRED of an
// unpaid POST, echo the EVM entry (accepts[1]) as accepted with an EIP-3009
// authorization of its amount to its payTo.
func (h *harness) payEVMV2(path, targetURL string) string {
	h.t.Helper()
	res := h.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), nil)
	raw, err := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED"))
	if res.status != http.StatusPaymentRequired || err != nil {
		h.t.Fatalf("challenge: %d %v", res.status, err)
	}
	var c struct {
		Accepts []map[string]any `json:"accepts"`
	}
	json.Unmarshal(raw, &c)
	if len(c.Accepts) != 2 {
		h.t.Fatalf("no EVM entry: %s", raw)
	}
	a := c.Accepts[1]
	var price uint64
	fmt.Sscan(a["amount"].(string), &price)
	return facilitatortest.EVMPayloadV2(a, facilitatortest.EVMAuthorization(a["payTo"].(string), price))
}

// settleOnNode makes the fake facilitator settle each EVM payload as its
// transaction and the node show that transaction paying amount of token to
// us (a positive amount) or nothing yet (0).
func settleOnNode(fake *facilitatortest.Fake, node *evmtest.Node, token string, amount uint64) {
	fake.Set(nil, func(c facilitatortest.Call) facilitatortest.Answer {
		if amount > 0 {
			node.Settled(facilitatortest.EVMTxOf(c.Payload),
				evmtest.Transfer{Token: token, From: facilitatortest.EVMAddress("buyer"), To: testEVMPayTo, Amount: amount})
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(c, "")}
	})
}

// A v2 payment of the EVM entry delivers one signed report once the node
// shows the USDC transfer; the ledger records it on its network with its
// transaction hash; the same payload again is refused, never settled again.
func TestEVMV2PaymentDeliversOnce(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	node := withEVM(t, h, gate.Base)
	settleOnNode(fake, node, gate.Base.USDC, 10000)
	seller, _ := countingSeller(t)
	path := "/toll/payability/check"
	sig := h.payEVMV2(path, seller.URL)
	res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
	if res.status != http.StatusOK {
		t.Fatalf("paid: %d %s", res.status, res.body)
	}
	if _, err := report.Verify(res.body, h.keys); err != nil {
		t.Fatalf("report does not verify: %v", err)
	}
	wantTx := facilitatortest.EVMTxOf(fake.Calls("/settle")[0].Payload)
	var rep struct {
		Payment struct{ Rail, Tx string }
	}
	json.Unmarshal(res.body, &rep)
	if rep.Payment.Rail != "facilitator" || rep.Payment.Tx != wantTx {
		t.Errorf("report payment %+v", rep.Payment)
	}
	raw, _ := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-RESPONSE"))
	var receipt facilitator.Receipt
	if json.Unmarshal(raw, &receipt) != nil || receipt.Transaction != wantTx || receipt.Network != gate.Base.CAIP2 {
		t.Errorf("PAYMENT-RESPONSE %s", raw)
	}
	if got := node.Lookups(); len(got) != 1 || got[0] != wantTx {
		t.Errorf("receipt look-ups %v", got)
	}
	entries, _ := h.store.Entries(context.Background(), store.OpCheck, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 || entries[0].PaymentTx != wantTx || entries[0].PaymentNetwork != gate.Base.CAIP2 ||
		entries[0].SolanaFeeLamports != 0 || !gate.SameEVMAddress(entries[0].PayerWallet, facilitatortest.EVMAddress("buyer")) {
		t.Fatalf("ledger %+v", entries)
	}
	again := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
	if again.status != http.StatusPaymentRequired || !strings.Contains(string(again.body), `"payment_already_used"`) {
		t.Errorf("replay: %d %s", again.status, again.body)
	}
	if n := len(fake.Calls("/settle")); n != 1 {
		t.Errorf("%d settlements", n)
	}
}

// v1 buyers pay the EVM entry on base-sepolia with X-PAYMENT and are
// answered X-PAYMENT-RESPONSE naming base-sepolia.
func TestEVMV1PaymentOnBaseSepolia(t *testing.T) {
	h := newHarness(t, ServeAll)
	fake := withFacilitator(t, h)
	node := withEVM(t, h, gate.BaseSepolia)
	settleOnNode(fake, node, gate.BaseSepolia.USDC, 20000)
	seller, _ := countingSeller(t)
	pay := facilitatortest.EVMPayloadV1("base-sepolia", facilitatortest.EVMAuthorization(testEVMPayTo, 20000))
	res := h.postPaid("/toll/rail-probe/probe", seller.URL, facilitator.HeaderXPayment, pay)
	if res.status != http.StatusOK || res.header.Get("PAYMENT-RESPONSE") != "" {
		t.Fatalf("paid: %d %v %s", res.status, res.header, res.body)
	}
	raw, _ := base64.StdEncoding.DecodeString(res.header.Get("X-PAYMENT-RESPONSE"))
	var receipt facilitator.Receipt
	if json.Unmarshal(raw, &receipt) != nil || receipt.Network != "base-sepolia" {
		t.Errorf("X-PAYMENT-RESPONSE %s", raw)
	}
	entries, _ := h.store.Entries(context.Background(), store.OpProbe, h.clock.Now().Add(-time.Hour), h.clock.Now().Add(time.Hour))
	if len(entries) != 1 || entries[0].PaymentNetwork != gate.BaseSepolia.CAIP2 {
		t.Fatalf("ledger %+v", entries)
	}
}

// What the node shows decides, and nothing is delivered before it shows
// the credit: not mined yet is settlement_pending with Retry-After and
// resumes with the same payload; a node down is chain_unavailable; a
// shortfall is amount_insufficient.
func TestEVMReceiptDecidesTheRelease(t *testing.T) {
	tests := []struct {
		name   string
		amount uint64
		down   bool
		code   string
		retry  bool
	}{
		{"not mined yet", 0, false, "settlement_pending", true},
		{"node down", 10000, true, "chain_unavailable", true},
		{"a shortfall", 9999, false, "amount_insufficient", false},
		{"another token", 10000, false, "wrong_mint", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, ServeAll)
			fake := withFacilitator(t, h)
			node := withEVM(t, h, gate.Base)
			token := gate.Base.USDC
			if tt.code == "wrong_mint" {
				token = gate.BaseSepolia.USDC
			}
			settleOnNode(fake, node, token, tt.amount)
			node.SetDown(tt.down)
			seller, fetched := countingSeller(t)
			path := "/toll/payability/memo"
			sig := h.payEVMV2(path, seller.URL)
			res := h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
			if res.status != http.StatusPaymentRequired || !strings.Contains(string(res.body), `"error":"`+tt.code+`"`) ||
				(res.header.Get("Retry-After") != "") != tt.retry {
				t.Fatalf("got %d %s (Retry-After %q), want 402 %s", res.status, res.body, res.header.Get("Retry-After"), tt.code)
			}
			if fetched.Load() != 0 {
				t.Errorf("the op ran before the chain showed the credit")
			}
			if !tt.retry {
				return
			}
			// The chain catches up: the same payload resumes at no second
			// settlement.
			node.SetDown(false)
			node.Settled(facilitatortest.EVMTxOf(fake.Calls("/settle")[0].Payload),
				evmtest.Transfer{Token: gate.Base.USDC, From: facilitatortest.EVMAddress("buyer"), To: testEVMPayTo, Amount: 10000})
			res = h.postPaid(path, seller.URL, facilitator.HeaderPaymentSignature, sig)
			if res.status != http.StatusOK || len(fake.Calls("/settle")) != 1 {
				t.Errorf("resume: %d %s, %d settlements", res.status, res.body, len(fake.Calls("/settle")))
			}
		})
	}
}

// The page says what the ops are paid in: Base appears only when offered.
func TestPageNamesBaseWhenOffered(t *testing.T) {
	h := newHarness(t, ServeAll)
	withFacilitator(t, h)
	if body := string(h.do(http.MethodGet, "/", "", nil).body); !strings.Contains(body, "over x402 (USDC on Solana);") {
		t.Errorf("the page without the EVM entry does not say USDC on Solana")
	}
	withEVM(t, h, gate.BaseSepolia)
	if body := string(h.do(http.MethodGet, "/", "", nil).body); !strings.Contains(body, "USDC on Solana, or on Base Sepolia (eip155:84532) through the facilitator") {
		t.Errorf("the page does not name Base Sepolia")
	}
}
