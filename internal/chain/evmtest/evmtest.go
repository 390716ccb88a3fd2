// Package evmtest is a loopback EVM JSON-RPC node for the tests of the
// facilitator rail and the paid service: it answers
// eth_getTransactionReceipt from the receipts a test records (a settled
// USDC transfer, a reverted one, any receipt at all) and can be taken down.
// Nothing here touches a chain.
package evmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/exchangerebel/payability/internal/chain"
)

// Node is a fake EVM node on 127.0.0.1.
type Node struct {
	URL string

	mu       sync.Mutex
	receipts map[string]chain.Receipt // by lower-case hash
	lookups  []string
	down     bool
}

// New starts a node, closed when the test ends.
func New(t testing.TB) *Node {
	n := &Node{receipts: map[string]chain.Receipt{}}
	srv := httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(srv.Close)
	n.URL = srv.URL
	return n
}

func (n *Node) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params []string        `json:"params"`
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	json.Unmarshal(b, &req)
	n.mu.Lock()
	down := n.down
	var result any
	if req.Method == "eth_getTransactionReceipt" && len(req.Params) == 1 {
		n.lookups = append(n.lookups, req.Params[0])
		if rc, ok := n.receipts[strings.ToLower(req.Params[0])]; ok {
			result = rc
		}
	}
	n.mu.Unlock()
	if down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if req.Method != "eth_getTransactionReceipt" {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// Transfer is one ERC-20 Transfer log.
type Transfer struct {
	Token, From, To string
	Amount          uint64
}

// Log is the Transfer log of t, as a node shows it.
func (t Transfer) Log() chain.Log {
	return chain.Log{Address: t.Token, Topics: []string{chain.TransferTopic, Topic(t.From), Topic(t.To)},
		Data: fmt.Sprintf("0x%064x", t.Amount)}
}

// Topic is an address as an indexed topic: 12 zero bytes, then the address.
func Topic(addr string) string {
	return "0x" + strings.Repeat("0", 24) + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

// Settled records a successful transaction hash that made the transfers.
func (n *Node) Settled(hash string, ts ...Transfer) {
	rc := chain.Receipt{TransactionHash: hash, Status: "0x1", Logs: []chain.Log{}}
	for _, t := range ts {
		rc.Logs = append(rc.Logs, t.Log())
	}
	n.SetReceipt(rc)
}

// SetReceipt records a receipt as it is.
func (n *Node) SetReceipt(rc chain.Receipt) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.receipts[strings.ToLower(rc.TransactionHash)] = rc
}

// SetDown makes every call fail with HTTP 503 (true) or answer again.
func (n *Node) SetDown(down bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.down = down
}

// Lookups lists the hashes asked for, in order.
func (n *Node) Lookups() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lookups...)
}
