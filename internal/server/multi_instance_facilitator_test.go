package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/chain/evmtest"
	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/facilitator/facilitatortest"
	"github.com/exchangerebel/payability/internal/gate"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
)

// The facilitator rail across instances: the settlement of a payload is
// the database's record, not one process's memory.

// payV2 does what a v2 client does on n: read PAYMENT-REQUIRED of an unpaid
// POST and echo accepts[0] with a transaction carrying its memo.
func (n *node) payV2(tb testing.TB, path, targetURL string) string {
	tb.Helper()
	res := n.mustDo(tb, http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), nil)
	raw, err := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED"))
	if res.status != http.StatusPaymentRequired || err != nil {
		tb.Fatalf("challenge: %d %v", res.status, err)
	}
	var c struct {
		Accepts []map[string]any `json:"accepts"`
	}
	json.Unmarshal(raw, &c)
	a := c.Accepts[0]
	var price uint64
	fmt.Sscan(a["amount"].(string), &price)
	memo, _ := a["extra"].(map[string]any)["memo"].(string)
	tx := facilitatortest.Transaction(facilitatortest.Transfer{
		Payer: facilitatortest.Address("buyer"), FeePayer: n.gate.Terms.FeePayer, Mint: a["asset"].(string),
		To: testTokenAccount, Amount: price, Memo: memo,
	})
	return facilitatortest.PayloadV2(a, tx)
}

func (n *node) presentV2(path, targetURL, sig string) (response, error) {
	return n.do(http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL),
		map[string]string{facilitator.HeaderPaymentSignature: sig})
}

func TestFacilitatorPaymentPresentedToTwoInstancesSettlesOnce(t *testing.T) {
	c := newCluster(t)
	fake := facilitatortest.New(t)
	release := make(chan struct{})
	fake.Set(nil, func(call facilitatortest.Call) facilitatortest.Answer {
		<-release // every presentation is in before the settlement answers
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(call, "")}
	})
	a, b := c.start("A", nodeOptions{Facilitator: fake}), c.start("B", nodeOptions{Facilitator: fake})
	const path = "/toll/payability/check"
	sig := a.payV2(t, path, c.seller)
	go func() { time.Sleep(500 * time.Millisecond); close(release) }()
	answers := onBoth([]*node{a, b}, 25, func(n *node) (response, error) { return n.presentV2(path, c.seller, sig) })
	var delivered []presentation
	for _, p := range answers {
		switch {
		case p.err != nil:
			t.Errorf("%s: %v", p.node, p.err)
		case p.res.status == http.StatusOK:
			delivered = append(delivered, p)
		case p.res.status == http.StatusConflict && errorCode(p.res.body) == string(gate.CodePaymentInProgress),
			p.res.status == http.StatusPaymentRequired && errorCode(p.res.body) == string(gate.CodePaymentAlreadyUsed):
		default:
			t.Errorf("%s: %d %s; want 200, 409 payment_in_progress or 402 payment_already_used", p.node, p.res.status, p.res.body)
		}
	}
	if len(delivered) != 1 {
		t.Fatalf("%d reports delivered from 50 presentations on two instances, want exactly 1", len(delivered))
	}
	if _, err := report.Verify(delivered[0].res.body, a.keys); err != nil {
		t.Errorf("the report does not verify: %v", err)
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d across both instances; want 1 and 1", v, s)
	}
	if got := c.count(`SELECT count(*) FROM ledger_check`); got != 1 {
		t.Errorf("%d ledger rows, want 1", got)
	}
	// The record holds the payload's hash, never the payload.
	raw, _ := base64.StdEncoding.DecodeString(sig)
	sum := sha256.Sum256(raw)
	if got := c.count(`SELECT count(*) FROM settlements WHERE op = 'check' AND payload_key = $1 AND state = 'settled'`, hex.EncodeToString(sum[:])); got != 1 {
		t.Errorf("%d settled records of the payload's hash, want 1", got)
	}
	if got := c.count(`SELECT count(*) FROM settlements AS s WHERE strpos(s::text, $1) > 0 OR strpos(s::text, $2) > 0`, sig, string(raw[:40])); got != 0 {
		t.Errorf("the payload is stored in %d settlement rows", got)
	}
}

// A settlement the facilitator reported pending on one instance resumes
// at /settle on the other (which a real facilitator answers; /verify would
// refuse a broadcast payload).
func TestFacilitatorPendingOnOneInstanceResumesOnTheOther(t *testing.T) {
	c := newCluster(t)
	fake := facilitatortest.New(t)
	var pending atomic.Bool
	pending.Store(true)
	fake.Set(func(call facilitatortest.Call) facilitatortest.Answer {
		if len(fake.Calls("/settle")) > 0 {
			return facilitatortest.Answer{Status: 200, Body: `{"isValid":false,"invalidReason":"duplicate_settlement","payer":""}`}
		}
		return facilitatortest.Answer{Status: 200, Body: `{"isValid":true,"payer":"` + facilitatortest.Address("buyer") + `"}`}
	}, func(call facilitatortest.Call) facilitatortest.Answer {
		if pending.Load() {
			return facilitatortest.Answer{Status: 200, Body: `{"success":false,"errorReason":"settlement_pending","transaction":"","network":""}`}
		}
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(call, "")}
	})
	a, b := c.start("A", nodeOptions{Facilitator: fake}), c.start("B", nodeOptions{Facilitator: fake})
	const path = "/toll/rail-probe/probe"
	sig := a.payV2(t, path, c.seller)
	res, err := a.presentV2(path, c.seller, sig)
	if err != nil || res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodeSettlementPending) || res.header.Get("Retry-After") == "" {
		t.Fatalf("A: %v %d %s", err, res.status, res.body)
	}
	pending.Store(false)
	res, err = b.presentV2(path, c.seller, sig)
	if err != nil || res.status != http.StatusOK {
		t.Fatalf("B resumes: %v %d %s", err, res.status, res.body)
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 2 {
		t.Errorf("verify %d, settle %d; want 1 and 2", v, s)
	}
	if res, _ := a.presentV2(path, c.seller, sig); res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodePaymentAlreadyUsed) {
		t.Errorf("afterwards on A: %d %s", res.status, res.body)
	}
}

// An instance that settled a payment and died before claiming it: the
// other instance delivers it with no facilitator call (a real facilitator
// would refuse it at /verify and /settle now).
func TestFacilitatorSettledOnADeadInstanceDeliversOnTheOther(t *testing.T) {
	c := newCluster(t)
	fake := facilitatortest.New(t)
	a, b := c.start("A", nodeOptions{Facilitator: fake}), c.start("B", nodeOptions{Facilitator: fake})
	const path = "/toll/payability/memo"
	sig := a.payV2(t, path, c.seller)
	// A settles (its rail, as Admit would) and dies before the claim.
	h := http.Header{}
	h.Set(facilitator.HeaderPaymentSignature, sig)
	req := gate.Request{Op: "memo", Resource: a.url + path, TargetURL: c.seller, Header: h}
	pay, code := a.gate.Facilitator.Settle(context.Background(), req, a.gate.Offers["memo"])
	if code != "" {
		t.Fatalf("A settles: %q", code)
	}
	a.srv.Close()
	res, err := b.presentV2(path, c.seller, sig)
	if err != nil || res.status != http.StatusOK {
		t.Fatalf("B: %v %d %s", err, res.status, res.body)
	}
	if !strings.Contains(string(res.body), pay.Tx) {
		t.Errorf("the report does not name the settled transaction")
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
	entries, err := b.store.Entries(context.Background(), store.OpMemo, c.clock.Now().Add(-time.Hour), c.clock.Now().Add(time.Hour))
	if err != nil || len(entries) != 1 || entries[0].PaymentTx != pay.Tx {
		t.Errorf("ledger %+v %v", entries, err)
	}
}

// With an RPC node, a settlement the node does not show yet is pending,
// never a release; once the chain shows the credit, the same payment
// resumes on the other instance with no further facilitator call.
func TestFacilitatorSettlementNotOnChainYetIsPendingAcrossInstances(t *testing.T) {
	c := newCluster(t)
	fake := facilitatortest.New(t)
	a := c.start("A", nodeOptions{Facilitator: fake, ChainChecks: true})
	b := c.start("B", nodeOptions{Facilitator: fake, ChainChecks: true})
	const path = "/toll/payability/check"
	sig := a.payV2(t, path, c.seller)
	res, err := a.presentV2(path, c.seller, sig)
	if err != nil || res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodeSettlementPending) || res.header.Get("Retry-After") == "" {
		t.Fatalf("A, not on chain yet: %v %d %s", err, res.status, res.body)
	}
	if got := c.count(`SELECT count(*) FROM ledger_check`); got != 0 {
		t.Fatalf("%d ledger rows before the chain showed the payment", got)
	}
	tx := facilitatortest.TxOf(fake.Calls("/settle")[0].Payload)
	c.chain.mu.Lock()
	c.chain.paid[tx] = "no memo needed" // the chain now shows the transaction crediting our account
	c.chain.mu.Unlock()
	res, err = b.presentV2(path, c.seller, sig)
	if err != nil || res.status != http.StatusOK {
		t.Fatalf("B resumes: %v %d %s", err, res.status, res.body)
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d; want 1 and 1", v, s)
	}
	entries, err := b.store.Entries(context.Background(), store.OpCheck, c.clock.Now().Add(-time.Hour), c.clock.Now().Add(time.Hour))
	if err != nil || len(entries) != 1 || entries[0].PaymentTx != tx || entries[0].SolanaFeeLamports != 5001 {
		t.Errorf("ledger %+v %v; want the settled tx with the chain's fee", entries, err)
	}
}

// payEVMV2 does what a v2 EVM client does on n: echo the challenge's EVM
// entry (accepts[1]) with an EIP-3009 authorization of its amount.
func (n *node) payEVMV2(tb testing.TB, path, targetURL string) string {
	tb.Helper()
	res := n.mustDo(tb, http.MethodPost, path, fmt.Sprintf(`{"url":%q}`, targetURL), nil)
	raw, _ := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED"))
	var c struct {
		Accepts []map[string]any `json:"accepts"`
	}
	json.Unmarshal(raw, &c)
	if len(c.Accepts) != 2 {
		tb.Fatalf("no EVM entry: %s", raw)
	}
	a := c.Accepts[1]
	var price uint64
	fmt.Sscan(a["amount"].(string), &price)
	return facilitatortest.EVMPayloadV2(a, facilitatortest.EVMAuthorization(a["payTo"].(string), price))
}

// One EVM payload presented 25 times to each of two instances on one
// PostgreSQL: one verify, one settle, one receipt that pays, one report,
// one ledger row on eip155:8453; every other presentation is in progress
// or already used. The payload presented again later, to either instance,
// is refused and never settled again.
func TestEVMPaymentPresentedToTwoInstancesDeliversOnce(t *testing.T) {
	c := newCluster(t)
	fake := facilitatortest.New(t)
	evm := evmtest.New(t)
	release := make(chan struct{})
	fake.Set(nil, func(call facilitatortest.Call) facilitatortest.Answer {
		<-release // every presentation is in before the settlement answers
		evm.Settled(facilitatortest.EVMTxOf(call.Payload),
			evmtest.Transfer{Token: gate.Base.USDC, From: facilitatortest.EVMAddress("buyer"), To: testEVMPayTo, Amount: 10000})
		return facilitatortest.Answer{Status: 200, Body: facilitatortest.SettledBody(call, "")}
	})
	a := c.start("A", nodeOptions{Facilitator: fake, EVMNode: evm})
	b := c.start("B", nodeOptions{Facilitator: fake, EVMNode: evm})
	const path = "/toll/payability/check"
	sig := a.payEVMV2(t, path, c.seller)
	go func() { time.Sleep(500 * time.Millisecond); close(release) }()
	answers := onBoth([]*node{a, b}, 25, func(n *node) (response, error) { return n.presentV2(path, c.seller, sig) })
	var delivered []presentation
	for _, p := range answers {
		switch {
		case p.err != nil:
			t.Errorf("%s: %v", p.node, p.err)
		case p.res.status == http.StatusOK:
			delivered = append(delivered, p)
		case p.res.status == http.StatusConflict && errorCode(p.res.body) == string(gate.CodePaymentInProgress),
			p.res.status == http.StatusPaymentRequired && errorCode(p.res.body) == string(gate.CodePaymentAlreadyUsed):
		default:
			t.Errorf("%s: %d %s; want 200, 409 payment_in_progress or 402 payment_already_used", p.node, p.res.status, p.res.body)
		}
	}
	if len(delivered) != 1 {
		t.Fatalf("%d reports delivered from 50 presentations of one EVM payload on two instances, want exactly 1", len(delivered))
	}
	if _, err := report.Verify(delivered[0].res.body, a.keys); err != nil {
		t.Errorf("the report does not verify: %v", err)
	}
	if v, s := len(fake.Calls("/verify")), len(fake.Calls("/settle")); v != 1 || s != 1 {
		t.Errorf("verify %d, settle %d across both instances; want 1 and 1", v, s)
	}
	tx := facilitatortest.EVMTxOf(fake.Calls("/settle")[0].Payload)
	if got := c.count(`SELECT count(*) FROM ledger_check WHERE payment_tx = $1 AND payment_network = 'eip155:8453'`, tx); got != 1 {
		t.Errorf("%d ledger rows of the EVM transaction on eip155:8453, want 1", got)
	}
	if got := c.count(`SELECT count(*) FROM ledger_check`); got != 1 {
		t.Errorf("%d ledger rows, want 1", got)
	}
	for _, n := range []*node{a, b} {
		res, err := n.presentV2(path, c.seller, sig)
		if err != nil || res.status != http.StatusPaymentRequired || errorCode(res.body) != string(gate.CodePaymentAlreadyUsed) {
			t.Errorf("%s, replayed: %v %d %s", n.name, err, res.status, res.body)
		}
	}
	if s := len(fake.Calls("/settle")); s != 1 {
		t.Errorf("settle %d after the replays; want 1", s)
	}
}
