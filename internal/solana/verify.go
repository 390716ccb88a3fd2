package solana

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/mr-tron/base58"
)

// Expect is what a transaction must do to pay us.
type Expect struct {
	TokenAccount string // our USDC token account, which must receive the payment
	Mint         string // the USDC mint of the network
	MinAmount    uint64 // the price in base units; never 0
	Memo         string // the challenge memo the payer must attach
}

// Payment is a verified transfer.
type Payment struct {
	Signature    string    // the transaction's first signature, its id
	Payer        string    // the fee payer, account key 0, a signer
	Amount       uint64    // net base units our token account received
	AmountString string    // Amount in decimal, for documents that carry amounts as strings
	FeeLamports  uint64    // the transaction fee, meta.fee
	Slot         uint64    // the slot the transaction landed in
	BlockTime    time.Time // UTC; zero when the node reported no block time
}

// Reasons a transaction does not pay, checked in this order.
const (
	ReasonMalformedTx        = "malformed_tx"        // not the shape of a jsonParsed transaction with metadata
	ReasonTxFailed           = "tx_failed"           // meta.err is not null
	ReasonMemoMissing        = "memo_missing"        // no top-level memo instruction
	ReasonMemoMultiple       = "memo_multiple"       // more than one top-level memo instruction
	ReasonMemoMismatch       = "memo_mismatch"       // the one memo is not ours
	ReasonWrongMint          = "wrong_mint"          // tokens of another mint arrived, none of ours
	ReasonAmountInsufficient = "amount_insufficient" // our account received less than the price
)

// Refusal is a transaction that does not pay; Reason is one of the Reason
// codes above.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return "solana: payment refused: " + r.Reason }

// ErrInvalidExpect: an Expect missing its token account, mint or memo, or
// with a zero price. A programming error, not a property of the transaction.
var ErrInvalidExpect = errors.New("solana: incomplete payment expectation")

func refuse(reason string) (Payment, error) { return Payment{}, &Refusal{Reason: reason} }

// Verify decides whether tx pays want. It accepts only a successful
// transaction (meta.err null) with exactly one top-level SPL Memo
// instruction (v1 or v2) equal to want.Memo, whose net change of our token
// account's balance in want.Mint (post − pre, from the token balances of the
// classic Token or Token-2022 program, an absent pre balance counting as 0)
// is at least want.MinAmount. A memo reached only by a cross-program call
// does not count. Refusals are *Refusal.
func Verify(tx *Tx, want Expect) (Payment, error) {
	if want.TokenAccount == "" || want.Mint == "" || want.Memo == "" || want.MinAmount == 0 {
		return Payment{}, ErrInvalidExpect
	}
	return verify(tx, Credit{TokenAccount: want.TokenAccount, Mint: want.Mint, MinAmount: want.MinAmount}, want.Memo, true)
}

// Credit is what a transaction must credit us, whatever memo it carries.
type Credit struct {
	TokenAccount string // our USDC token account
	Mint         string // the USDC mint of the network
	MinAmount    uint64 // the price in base units; never 0
}

// VerifyCredit decides whether tx credited want: Verify's checks (a
// successful transaction whose net change of our token account's balance
// in want.Mint is at least want.MinAmount) without the memo, which a
// transaction settled through an x402 facilitator need not carry (the v1
// client builds none): such a payment is bound by its transaction id,
// recorded once. Refusals are *Refusal.
func VerifyCredit(tx *Tx, want Credit) (Payment, error) {
	if want.TokenAccount == "" || want.Mint == "" || want.MinAmount == 0 {
		return Payment{}, ErrInvalidExpect
	}
	return verify(tx, want, "", false)
}

func verify(tx *Tx, want Credit, memo string, needMemo bool) (Payment, error) {
	if tx == nil || tx.Meta == nil {
		return refuse(ReasonMalformedTx)
	}
	keys := tx.Transaction.Message.AccountKeys
	sigs := tx.Transaction.Signatures
	if len(sigs) == 0 || !ValidSignature(sigs[0]) || len(keys) == 0 || !keys[0].Signer || keys[0].Pubkey == "" {
		return refuse(ReasonMalformedTx)
	}
	switch string(tx.Meta.Err) {
	case "null":
	case "":
		return refuse(ReasonMalformedTx) // a node always reports err, null or not
	default:
		return refuse(ReasonTxFailed)
	}

	if needMemo {
		if reason := checkMemo(tx.Transaction.Message.Instructions, memo); reason != "" {
			return refuse(reason)
		}
	}

	ours := -1
	for i, k := range keys {
		if k.Pubkey == want.TokenAccount {
			if ours >= 0 {
				return refuse(ReasonMalformedTx) // the runtime never loads an account twice
			}
			ours = i
		}
	}
	pre, preMint, ok := balanceOf(tx.Meta.PreTokenBalances, ours, len(keys))
	if !ok {
		return refuse(ReasonMalformedTx)
	}
	post, postMint, ok := balanceOf(tx.Meta.PostTokenBalances, ours, len(keys))
	if !ok {
		return refuse(ReasonMalformedTx)
	}
	if (preMint != "" && preMint != want.Mint) || (postMint != "" && postMint != want.Mint) {
		return refuse(ReasonWrongMint)
	}
	if post <= pre {
		if creditedOtherMint(tx.Meta, want.Mint) {
			return refuse(ReasonWrongMint)
		}
		return refuse(ReasonAmountInsufficient)
	}
	amount := post - pre
	if amount < want.MinAmount {
		return refuse(ReasonAmountInsufficient)
	}
	p := Payment{
		Signature:    sigs[0],
		Payer:        keys[0].Pubkey,
		Amount:       amount,
		AmountString: strconv.FormatUint(amount, 10),
		FeeLamports:  tx.Meta.Fee,
		Slot:         tx.Slot,
	}
	if tx.BlockTime != nil {
		p.BlockTime = time.Unix(*tx.BlockTime, 0).UTC()
	}
	return p, nil
}

// checkMemo counts the top-level memo instructions and compares the one
// there must be with want.
func checkMemo(instructions []Instruction, want string) string {
	count, matched := 0, false
	for _, ins := range instructions {
		if ins.ProgramID != MemoProgramV1 && ins.ProgramID != MemoProgramV2 {
			continue
		}
		count++
		text, ok := memoText(ins)
		matched = ok && text == want
	}
	switch {
	case count == 0:
		return ReasonMemoMissing
	case count > 1:
		return ReasonMemoMultiple
	case !matched:
		return ReasonMemoMismatch
	}
	return ""
}

// memoText is a memo instruction's text: jsonParsed gives it as a JSON
// string in "parsed"; a memo the node could not parse (not UTF-8) comes raw
// as base58 "data".
func memoText(ins Instruction) (string, bool) {
	if len(ins.Parsed) > 0 {
		var s string
		if ins.Parsed[0] != '"' || json.Unmarshal(ins.Parsed, &s) != nil {
			return "", false
		}
		return s, true
	}
	if ins.Data == "" {
		return "", false
	}
	b, err := base58.Decode(ins.Data)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// balanceOf is account index's balance in list (0 when absent) and the mint
// it is held in ("" when absent). ok is false for a list that is not well
// formed: an index out of range, an index twice, our balance under a program
// that is not a token program, or an amount that is not an integer string.
func balanceOf(list []TokenBalance, index, nkeys int) (amount uint64, mint string, ok bool) {
	seen := make(map[int]bool, len(list))
	for _, b := range list {
		if b.AccountIndex < 0 || b.AccountIndex >= nkeys || seen[b.AccountIndex] {
			return 0, "", false
		}
		seen[b.AccountIndex] = true
		if b.AccountIndex != index {
			continue
		}
		if b.ProgramID != TokenProgram && b.ProgramID != Token2022Program {
			return 0, "", false
		}
		v, ok := parseAmount(b.UITokenAmount.Amount)
		if !ok || b.Mint == "" {
			return 0, "", false
		}
		amount, mint = v, b.Mint
	}
	return amount, mint, true
}

// creditedOtherMint reports whether some token account's balance in a mint
// other than ours went up: the payer sent the wrong token.
func creditedOtherMint(meta *Meta, mint string) bool {
	pre := make(map[int]uint64, len(meta.PreTokenBalances))
	for _, b := range meta.PreTokenBalances {
		if v, ok := parseAmount(b.UITokenAmount.Amount); ok {
			pre[b.AccountIndex] = v
		}
	}
	for _, b := range meta.PostTokenBalances {
		if b.Mint == mint {
			continue
		}
		if v, ok := parseAmount(b.UITokenAmount.Amount); ok && v > pre[b.AccountIndex] {
			return true
		}
	}
	return false
}

// parseAmount reads a base-unit amount: decimal digits, no sign, no leading
// zero, within uint64.
func parseAmount(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
