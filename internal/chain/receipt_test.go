package chain_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/chain/evmtest"
)

const (
	usdcBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	us       = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	buyer    = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
	hash     = "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480"
)

func transfer(token, to string, amount uint64) chain.Log {
	return evmtest.Transfer{Token: token, From: buyer, To: to, Amount: amount}.Log()
}

func TestVerifyTransfer(t *testing.T) {
	credit := chain.TransferCredit{Hash: hash, Token: usdcBase, To: us, Min: 10000}
	ok := func(logs ...chain.Log) *chain.Receipt {
		return &chain.Receipt{TransactionHash: hash, Status: "0x1", Logs: logs}
	}
	removed := transfer(usdcBase, us, 10000)
	removed.Removed = true
	approval := transfer(usdcBase, us, 10000)
	approval.Topics[0] = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
	dirtyTopic := transfer(usdcBase, us, 10000)
	dirtyTopic.Topics[2] = "0x01" + dirtyTopic.Topics[2][4:]
	badData := transfer(usdcBase, us, 10000)
	badData.Data = "0x10"
	tests := []struct {
		name string
		r    *chain.Receipt
		want string
	}{
		{"the price", ok(transfer(usdcBase, us, 10000)), ""},
		{"above the price, cased otherwise", ok(transfer(strings.ToLower(usdcBase), strings.ToLower(us), 10001)), ""},
		{"two transfers summing to it", ok(transfer(usdcBase, us, 1), transfer(usdcBase, us, 9999)), ""},
		{"a uint256 beyond uint64", ok(chain.Log{Address: usdcBase, Topics: []string{chain.TransferTopic, evmtest.Topic(buyer), evmtest.Topic(us)}, Data: "0x" + strings.Repeat("f", 64)}), ""},
		{"one unit short", ok(transfer(usdcBase, us, 9999)), chain.ReasonAmountInsufficient},
		{"to someone else", ok(transfer(usdcBase, buyer, 10000)), chain.ReasonAmountInsufficient},
		{"no logs", ok(), chain.ReasonAmountInsufficient},
		{"a removed log", ok(removed), chain.ReasonAmountInsufficient},
		{"an Approval, not a Transfer", ok(approval), chain.ReasonAmountInsufficient},
		{"a topic that is no address", ok(dirtyTopic), chain.ReasonAmountInsufficient},
		{"another token", ok(transfer(buyer, us, 10000)), chain.ReasonWrongToken},
		{"another token and too little USDC", ok(transfer(buyer, us, 10000), transfer(usdcBase, us, 1)), chain.ReasonAmountInsufficient},
		{"data that is no uint256", ok(badData), chain.ReasonReceiptMalformed},
		{"reverted", &chain.Receipt{TransactionHash: hash, Status: "0x0", Logs: []chain.Log{transfer(usdcBase, us, 10000)}}, chain.ReasonTxReverted},
		{"no status", &chain.Receipt{TransactionHash: hash, Logs: []chain.Log{transfer(usdcBase, us, 10000)}}, chain.ReasonReceiptMalformed},
		{"another transaction's receipt", &chain.Receipt{TransactionHash: "0x" + strings.Repeat("0", 64), Status: "0x1", Logs: []chain.Log{transfer(usdcBase, us, 10000)}}, chain.ReasonReceiptMalformed},
		{"nil", nil, chain.ReasonReceiptMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chain.VerifyTransfer(tt.r, credit); got != tt.want {
				t.Errorf("VerifyTransfer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTransactionReceipt(t *testing.T) {
	node := evmtest.New(t)
	c, err := chain.New(chain.Options{EVMRPC: node.URL, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.TransactionReceipt(ctx, hash); !errors.Is(err, chain.ErrReceiptNotFound) {
		t.Errorf("unknown transaction: %v", err)
	}
	node.Settled(hash, evmtest.Transfer{Token: usdcBase, From: buyer, To: us, Amount: 10000})
	r, err := c.TransactionReceipt(ctx, hash)
	if err != nil || chain.VerifyTransfer(r, chain.TransferCredit{Hash: hash, Token: usdcBase, To: us, Min: 10000}) != "" {
		t.Errorf("settled transaction: %v %+v", err, r)
	}
	var logs []chain.Log
	for range 257 {
		logs = append(logs, transfer(usdcBase, us, 1))
	}
	node.SetReceipt(chain.Receipt{TransactionHash: hash, Status: "0x1", Logs: logs})
	if _, err := c.TransactionReceipt(ctx, hash); !errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("a receipt of 257 logs: %v", err)
	}
	node.SetDown(true)
	if _, err := c.TransactionReceipt(ctx, hash); !errors.Is(err, chain.ErrUnavailable) || strings.Contains(err.Error(), node.URL) {
		t.Errorf("node down: %v", err)
	}
	noEVM, _ := chain.New(chain.Options{})
	if _, err := noEVM.TransactionReceipt(ctx, hash); !errors.Is(err, chain.ErrNoEVMNode) {
		t.Errorf("no node: %v", err)
	}
	guarded, _ := chain.New(chain.Options{EVMRPC: node.URL})
	if _, err := guarded.TransactionReceipt(ctx, hash); !errors.Is(err, chain.ErrUnavailable) {
		t.Errorf("a guarded client reached loopback: %v", err)
	}
}

// FuzzVerifyTransfer: any receipt JSON decides without panicking, and a
// credit it accepts has a Transfer log of our token to us.
func FuzzVerifyTransfer(f *testing.F) {
	good, _ := json.Marshal(chain.Receipt{TransactionHash: hash, Status: "0x1", Logs: []chain.Log{transfer(usdcBase, us, 10000)}})
	f.Add(good)
	f.Add([]byte(`{"transactionHash":"` + hash + `","status":"0x1","logs":[{"address":"` + usdcBase + `","topics":["` + chain.TransferTopic + `","0x","0x"],"data":"0x"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r *chain.Receipt
		if json.Unmarshal(b, &r) != nil {
			return
		}
		if chain.VerifyTransfer(r, chain.TransferCredit{Hash: hash, Token: usdcBase, To: us, Min: 10000}) != "" {
			return
		}
		for _, l := range r.Logs {
			if !l.Removed && strings.EqualFold(l.Address, usdcBase) && len(l.Topics) == 3 && strings.EqualFold(l.Topics[2], evmtest.Topic(us)) {
				return
			}
		}
		t.Fatalf("accepted a receipt with no transfer to us: %s", b)
	})
}
