package solana

import "encoding/json"

// Tx is the part of a jsonParsed getTransaction result that a payment is
// read from; every other field of the answer is ignored.
type Tx struct {
	Slot        uint64 `json:"slot"`
	BlockTime   *int64 `json:"blockTime"` // Unix seconds; null when the node has none
	Meta        *Meta  `json:"meta"`
	Transaction struct {
		Signatures []string `json:"signatures"`
		Message    Message  `json:"message"`
	} `json:"transaction"`
}

// Meta is the transaction's status metadata.
type Meta struct {
	Err               json.RawMessage `json:"err"` // null on success
	Fee               uint64          `json:"fee"` // lamports
	PreTokenBalances  []TokenBalance  `json:"preTokenBalances"`
	PostTokenBalances []TokenBalance  `json:"postTokenBalances"`
}

// Message is the signed message, with account keys in jsonParsed form
// (static keys first, then any loaded from lookup tables).
type Message struct {
	AccountKeys  []AccountKey  `json:"accountKeys"`
	Instructions []Instruction `json:"instructions"` // top level only; inner ones live in meta
}

// AccountKey is one account of the message.
type AccountKey struct {
	Pubkey   string `json:"pubkey"`
	Signer   bool   `json:"signer"`
	Writable bool   `json:"writable"`
}

// Instruction is a top-level instruction: parsed when the node knows the
// program (for the memo program, Parsed is the memo as a JSON string),
// otherwise raw with base58 Data.
type Instruction struct {
	ProgramID string          `json:"programId"`
	Parsed    json.RawMessage `json:"parsed"`
	Data      string          `json:"data"`
}

// TokenBalance is a token account's balance before or after the transaction.
type TokenBalance struct {
	AccountIndex  int    `json:"accountIndex"`
	Mint          string `json:"mint"`
	Owner         string `json:"owner"`
	ProgramID     string `json:"programId"`
	UITokenAmount struct {
		Amount   string `json:"amount"` // base units, an integer string
		Decimals int    `json:"decimals"`
	} `json:"uiTokenAmount"`
}
