package chain

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
)

// The facilitator rail's look-up on an EVM node: eth_getTransactionReceipt
// of a settled transaction, read into a Receipt (I/O), then VerifyTransfer
// (pure) decides whether it paid us.

// TransferTopic is topic0 of an ERC-20 Transfer(address,address,uint256)
// log: the Keccak-256 of that signature.
const TransferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// Receipt is the part of an eth_getTransactionReceipt answer the rail reads.
type Receipt struct {
	TransactionHash string `json:"transactionHash"`
	Status          string `json:"status"` // "0x1" success, "0x0" reverted
	Logs            []Log  `json:"logs"`
}

// Log is one event log of a receipt.
type Log struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data"`
	Removed bool     `json:"removed"`
}

// Closed errors of TransactionReceipt.
var (
	// ErrReceiptNotFound: the node knows no receipt of the transaction
	// (not mined yet, or not seen).
	ErrReceiptNotFound = errors.New("chain: no receipt of the transaction yet")
	// ErrUnavailable: the node did not answer, or answered unreadably.
	ErrUnavailable = errors.New("chain: the node did not answer")
	// ErrNoEVMNode: the client has no EVM RPC URL.
	ErrNoEVMNode = errors.New("chain: no EVM node configured")
)

// maxReceiptLogs bounds the logs a receipt may carry before it is refused
// as unreadable: a USDC transferWithAuthorization emits two.
const maxReceiptLogs = 256

// TransactionReceipt asks the EVM node for the receipt of the transaction
// hash, under the client's per-call timeout and answer cap.
func (c *Client) TransactionReceipt(ctx context.Context, hash string) (*Receipt, error) {
	if c.evm == "" {
		return nil, ErrNoEVMNode
	}
	var r *Receipt
	switch err := c.call(ctx, c.evm, "eth_getTransactionReceipt", []any{hash}, &r); {
	case err != nil:
		return nil, ErrUnavailable
	case r == nil:
		return nil, ErrReceiptNotFound
	case len(r.Logs) > maxReceiptLogs:
		return nil, ErrUnavailable
	}
	return r, nil
}

// TransferCredit is what a settled transaction must have done for us.
type TransferCredit struct {
	Hash  string // the settled transaction
	Token string // the USDC contract
	To    string // our address
	Min   uint64 // the price, in token units
}

// Reasons VerifyTransfer refuses a receipt for: a closed set.
const (
	ReasonReceiptMalformed   = "receipt_malformed"
	ReasonTxReverted         = "tx_reverted"
	ReasonWrongToken         = "wrong_token"
	ReasonAmountInsufficient = "amount_insufficient"
)

// VerifyTransfer decides whether receipt r shows the transaction c.Hash
// succeeded and moved at least c.Min of c.Token to c.To: the sum of its
// Transfer logs emitted by the token contract whose recipient (topic 2) is
// c.To. It returns "" when it did, else one of the Reason constants. Logs
// the node marks removed (a reorganised block) count for nothing.
func VerifyTransfer(r *Receipt, c TransferCredit) string {
	if r == nil || !strings.EqualFold(r.TransactionHash, c.Hash) {
		return ReasonReceiptMalformed
	}
	switch r.Status {
	case "0x1":
	case "0x0":
		return ReasonTxReverted
	default:
		return ReasonReceiptMalformed
	}
	sum, otherToken := new(big.Int), false
	for _, l := range r.Logs {
		if l.Removed || len(l.Topics) != 3 || !strings.EqualFold(l.Topics[0], TransferTopic) {
			continue
		}
		to, ok := topicAddress(l.Topics[2])
		if !ok || !strings.EqualFold(to, c.To) {
			continue
		}
		if !strings.EqualFold(l.Address, c.Token) {
			otherToken = true
			continue
		}
		v, ok := uint256(l.Data)
		if !ok {
			return ReasonReceiptMalformed
		}
		sum.Add(sum, v)
	}
	switch {
	case sum.Sign() == 0 && otherToken:
		return ReasonWrongToken
	case sum.Cmp(new(big.Int).SetUint64(c.Min)) < 0:
		return ReasonAmountInsufficient
	}
	return ""
}

// topicAddress reads an address from an indexed topic: 32 bytes, the
// first 12 zero.
func topicAddress(topic string) (string, bool) {
	b, ok := hex32(topic)
	if !ok {
		return "", false
	}
	for _, x := range b[:12] {
		if x != 0 {
			return "", false
		}
	}
	return "0x" + hex.EncodeToString(b[12:]), true
}

// uint256 reads a log's data as one ABI uint256.
func uint256(data string) (*big.Int, bool) {
	b, ok := hex32(data)
	if !ok {
		return nil, false
	}
	return new(big.Int).SetBytes(b), true
}

// hex32 decodes 0x + 64 hex digits.
func hex32(s string) ([]byte, bool) {
	if len(s) != 66 || !strings.HasPrefix(s, "0x") {
		return nil, false
	}
	b, err := hex.DecodeString(s[2:])
	return b, err == nil
}
