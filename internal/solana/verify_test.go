package solana

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mr-tron/base58"
)

// The seller of the fixtures: our USDC token account and the memo of the
// challenge the payer answered.
const (
	ourTokenAccount = "BBNSAKH9ikKc9gWN9s8wyENZg1NGrnKGYQBXb1qMTQzK"
	ourWallet       = "68nxkoSCyteQ18hmJt8fyKkHWkt9wXJYCDZF4iQvz4SN"
	challengeMemo   = "pbl1.ck.q7Rr2hV0bXo9Zl1cN4yT8wJm3Kd5HsAe"
)

func expect() Expect {
	return Expect{TokenAccount: ourTokenAccount, Mint: USDCMainnetMint, MinAmount: 10000, Memo: challengeMemo}
}

// loadFixture decodes the result of a testdata answer the way the client does.
func loadFixture(t testing.TB, name string) *Tx {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Result *Tx }
	if err := json.Unmarshal(data, &env); err != nil || env.Result == nil {
		t.Fatalf("%s: %v", name, err)
	}
	return env.Result
}

func fixtureSig(t testing.TB, name string) string {
	t.Helper()
	return loadFixture(t, name).Transaction.Signatures[0]
}

func TestConstants(t *testing.T) {
	for _, pk := range []string{USDCMainnetMint, USDCDevnetMint, TokenProgram, Token2022Program, MemoProgramV1, MemoProgramV2} {
		if b, err := base58.Decode(pk); err != nil || len(b) != 32 {
			t.Errorf("%s is not a 32-byte public key", pk)
		}
	}
	// A CAIP-2 Solana reference is the first 32 characters of the genesis hash.
	for _, id := range []string{MainnetCAIP2, DevnetCAIP2} {
		if len(id) != len("solana:")+32 || id[:7] != "solana:" {
			t.Errorf("%s is not a CAIP-2 Solana id", id)
		}
	}
}

func TestValidSignature(t *testing.T) {
	for _, name := range []string{"transfer_checked_memo.json", "failed_tx.json", "pre_balance_absent.json"} {
		if sig := fixtureSig(t, name); !ValidSignature(sig) {
			t.Errorf("%s: %s refused", name, sig)
		}
	}
	valid := base58.Encode(bytes.Repeat([]byte{0xff}, 64))
	for _, s := range []string{valid, base58.Encode(make([]byte, 64)), base58.Encode(append([]byte{0}, bytes.Repeat([]byte{9}, 63)...))} {
		if !ValidSignature(s) {
			t.Errorf("%s refused", s)
		}
	}
	for _, s := range []string{
		"",
		base58.Encode(bytes.Repeat([]byte{0xff}, 63)),
		base58.Encode(bytes.Repeat([]byte{0xff}, 65)),
		base58.Encode(bytes.Repeat([]byte{0xff}, 32)),
		"1" + valid, // one more leading zero byte: 65 bytes
		valid[:len(valid)-1] + "0",
		valid[:len(valid)-1] + "O",
		valid[:len(valid)-1] + "l",
		" " + valid,
		valid + "\n",
		string(bytes.Repeat([]byte("z"), 200)),
	} {
		if ValidSignature(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestVerifyFixtures runs every testdata transaction through a local fake
// node and the verifier.
func TestVerifyFixtures(t *testing.T) {
	node := newFakeNode(t)
	c := newTestClient(t, node.srv.URL, "")
	cases := []struct {
		file   string
		want   Expect
		reason string // "" for a payment
		amount uint64
		fee    uint64
		slot   uint64
	}{
		{"transfer_checked_memo.json", expect(), "", 10000, 5001, 383912447},
		{"token2022_transfer.json", expect(), "", 25000, 5001, 383912901},
		{"pre_balance_absent.json", expect(), "", 10000, 5000, 383915777},
		{"failed_tx.json", expect(), ReasonTxFailed, 0, 0, 0},
		{"no_memo.json", expect(), ReasonMemoMissing, 0, 0, 0},
		{"two_memos.json", expect(), ReasonMemoMultiple, 0, 0, 0},
		{"wrong_mint.json", expect(), ReasonWrongMint, 0, 0, 0},
		{"insufficient_amount.json", expect(), ReasonAmountInsufficient, 0, 0, 0},
		{"memo_inner_only.json", expect(), ReasonMemoMissing, 0, 0, 0},
		{"transfer_checked_memo.json", func() Expect { e := expect(); e.Memo += "x"; return e }(), ReasonMemoMismatch, 0, 0, 0},
		{"transfer_checked_memo.json", func() Expect { e := expect(); e.Memo = e.Memo[:len(e.Memo)-1]; return e }(), ReasonMemoMismatch, 0, 0, 0},
		{"transfer_checked_memo.json", func() Expect { e := expect(); e.MinAmount = 10001; return e }(), ReasonAmountInsufficient, 0, 0, 0},
		{"token2022_transfer.json", func() Expect { e := expect(); e.MinAmount = 25000; return e }(), "", 25000, 5001, 383912901},
		{"transfer_checked_memo.json", func() Expect { e := expect(); e.Mint = USDCDevnetMint; return e }(), ReasonWrongMint, 0, 0, 0},
		{"transfer_checked_memo.json", func() Expect { e := expect(); e.TokenAccount = ourWallet; return e }(), ReasonAmountInsufficient, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			tx, err := c.GetTransaction(context.Background(), fixtureSig(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Verify(tx, tc.want)
			if tc.reason != "" {
				var r *Refusal
				if !errors.As(err, &r) || r.Reason != tc.reason {
					t.Fatalf("got %v, want refusal %s", err, tc.reason)
				}
				if got != (Payment{}) {
					t.Errorf("a refusal carries a payment: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			keys := tx.Transaction.Message.AccountKeys
			want := Payment{
				Signature:    tx.Transaction.Signatures[0],
				Payer:        keys[0].Pubkey,
				Amount:       tc.amount,
				AmountString: map[uint64]string{10000: "10000", 25000: "25000"}[tc.amount],
				FeeLamports:  tc.fee,
				Slot:         tc.slot,
				BlockTime:    time.Unix(1764512345, 0).UTC(),
			}
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if !keys[0].Signer {
				t.Error("payer is not a signer")
			}
		})
	}
}

func TestVerifyEdges(t *testing.T) {
	base := func(t *testing.T) *Tx { return loadFixture(t, "transfer_checked_memo.json") }
	ourIndex := 2
	cases := []struct {
		name   string
		mutate func(*Tx)
		reason string
	}{
		{"no meta", func(tx *Tx) { tx.Meta = nil }, ReasonMalformedTx},
		{"no err member", func(tx *Tx) { tx.Meta.Err = nil }, ReasonMalformedTx},
		{"err as a string", func(tx *Tx) { tx.Meta.Err = json.RawMessage(`"BlockhashNotFound"`) }, ReasonTxFailed},
		{"no signatures", func(tx *Tx) { tx.Transaction.Signatures = nil }, ReasonMalformedTx},
		{"signature not base58", func(tx *Tx) { tx.Transaction.Signatures[0] = "not-a-signature" }, ReasonMalformedTx},
		{"no account keys", func(tx *Tx) { tx.Transaction.Message.AccountKeys = nil }, ReasonMalformedTx},
		{"fee payer not a signer", func(tx *Tx) { tx.Transaction.Message.AccountKeys[0].Signer = false }, ReasonMalformedTx},
		{"our account listed twice", func(tx *Tx) {
			tx.Transaction.Message.AccountKeys[1].Pubkey = ourTokenAccount
		}, ReasonMalformedTx},
		{"amount in exponent form", func(tx *Tx) { tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "1.26e6" }, ReasonMalformedTx},
		{"negative amount", func(tx *Tx) { tx.Meta.PreTokenBalances[1].UITokenAmount.Amount = "-10000" }, ReasonMalformedTx},
		{"leading zero", func(tx *Tx) { tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "01260000" }, ReasonMalformedTx},
		{"empty amount", func(tx *Tx) { tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "" }, ReasonMalformedTx},
		{"amount beyond uint64", func(tx *Tx) { tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "18446744073709551616" }, ReasonMalformedTx},
		{"index out of range", func(tx *Tx) { tx.Meta.PostTokenBalances[0].AccountIndex = 99 }, ReasonMalformedTx},
		{"negative index", func(tx *Tx) { tx.Meta.PreTokenBalances[0].AccountIndex = -1 }, ReasonMalformedTx},
		{"index twice", func(tx *Tx) { tx.Meta.PostTokenBalances[0].AccountIndex = ourIndex }, ReasonMalformedTx},
		{"our balance under another program", func(tx *Tx) { tx.Meta.PostTokenBalances[1].ProgramID = MemoProgramV2 }, ReasonMalformedTx},
		{"our balance without a program", func(tx *Tx) { tx.Meta.PostTokenBalances[1].ProgramID = "" }, ReasonMalformedTx},
		{"our account holds another mint", func(tx *Tx) {
			tx.Meta.PreTokenBalances[1].Mint = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
			tx.Meta.PostTokenBalances[1].Mint = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
		}, ReasonWrongMint},
		{"balance went down", func(tx *Tx) { tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "1240000" }, ReasonAmountInsufficient},
		{"no post balance: the account was emptied", func(tx *Tx) { tx.Meta.PostTokenBalances = tx.Meta.PostTokenBalances[:1] }, ReasonAmountInsufficient},
		{"memo parsed as an object", func(tx *Tx) {
			tx.Transaction.Message.Instructions[3].Parsed = json.RawMessage(`{"memo":"` + challengeMemo + `"}`)
		}, ReasonMemoMismatch},
		{"memo parsed as null", func(tx *Tx) { tx.Transaction.Message.Instructions[3].Parsed = json.RawMessage(`null`) }, ReasonMemoMismatch},
		{"memo data not base58", func(tx *Tx) {
			tx.Transaction.Message.Instructions[3].Parsed = nil
			tx.Transaction.Message.Instructions[3].Data = "0OIl"
		}, ReasonMemoMismatch},
		{"memo moved to v1 and a second memo added", func(tx *Tx) {
			ins := tx.Transaction.Message.Instructions
			m := ins[3]
			m.ProgramID = MemoProgramV1
			tx.Transaction.Message.Instructions = append(ins, m)
		}, ReasonMemoMultiple},
		{"memo program name without the memo program id", func(tx *Tx) {
			tx.Transaction.Message.Instructions[3].ProgramID = ourWallet
		}, ReasonMemoMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tx := base(t)
			c.mutate(tx)
			_, err := Verify(tx, expect())
			var r *Refusal
			if !errors.As(err, &r) || r.Reason != c.reason {
				t.Errorf("got %v, want %s", err, c.reason)
			}
		})
	}

	accepted := []struct {
		name   string
		mutate func(*Tx)
		check  func(*testing.T, Payment)
	}{
		{"memo as raw data (the node could not parse it)", func(tx *Tx) {
			tx.Transaction.Message.Instructions[3].Parsed = nil
			tx.Transaction.Message.Instructions[3].Data = base58.Encode([]byte(challengeMemo))
		}, nil},
		{"memo v1", func(tx *Tx) { tx.Transaction.Message.Instructions[3].ProgramID = MemoProgramV1 }, nil},
		{"no block time", func(tx *Tx) { tx.BlockTime = nil }, func(t *testing.T, p Payment) {
			if !p.BlockTime.IsZero() {
				t.Errorf("block time %v", p.BlockTime)
			}
		}},
		{"a large payment", func(tx *Tx) {
			tx.Meta.PreTokenBalances[1].UITokenAmount.Amount = "0"
			tx.Meta.PostTokenBalances[1].UITokenAmount.Amount = "18446744073709551615"
		}, func(t *testing.T, p Payment) {
			if p.Amount != math.MaxUint64 || p.AmountString != "18446744073709551615" {
				t.Errorf("amount %d %q", p.Amount, p.AmountString)
			}
		}},
		{"our balance under Token-2022", func(tx *Tx) {
			tx.Meta.PreTokenBalances[1].ProgramID = Token2022Program
			tx.Meta.PostTokenBalances[1].ProgramID = Token2022Program
		}, nil},
		{"another mint moved as well as ours", func(tx *Tx) {
			tx.Meta.PostTokenBalances[0].Mint = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
			tx.Meta.PostTokenBalances[0].UITokenAmount.Amount = "99999999"
		}, nil},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			tx := base(t)
			c.mutate(tx)
			p, err := Verify(tx, expect())
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if c.check != nil {
				c.check(t, p)
			}
		})
	}

	t.Run("an incomplete expectation is a programming error", func(t *testing.T) {
		for _, e := range []Expect{
			{Mint: USDCMainnetMint, MinAmount: 1, Memo: "m"},
			{TokenAccount: ourTokenAccount, MinAmount: 1, Memo: "m"},
			{TokenAccount: ourTokenAccount, Mint: USDCMainnetMint, MinAmount: 1},
			{TokenAccount: ourTokenAccount, Mint: USDCMainnetMint, Memo: "m"},
		} {
			if _, err := Verify(base(t), e); !errors.Is(err, ErrInvalidExpect) {
				t.Errorf("%+v: got %v", e, err)
			}
		}
	})
	t.Run("nil transaction", func(t *testing.T) {
		var r *Refusal
		if _, err := Verify(nil, expect()); !errors.As(err, &r) || r.Reason != ReasonMalformedTx {
			t.Errorf("got %v", err)
		}
	})
}

func FuzzVerifyTx(f *testing.F) {
	for _, name := range []string{"transfer_checked_memo.json", "pre_balance_absent.json", "memo_inner_only.json", "wrong_mint.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		var env struct{ Result json.RawMessage }
		if err := json.Unmarshal(data, &env); err != nil {
			f.Fatal(err)
		}
		// Compact: the fuzzer mutates slowly on large inputs.
		var seed bytes.Buffer
		if err := json.Compact(&seed, env.Result); err != nil {
			f.Fatal(err)
		}
		f.Add(seed.Bytes())
	}
	f.Add([]byte(`{"meta":{"err":null},"transaction":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tx Tx
		if json.Unmarshal(data, &tx) != nil {
			return
		}
		p, err := Verify(&tx, expect())
		if err == nil && p.Amount < expect().MinAmount {
			t.Fatalf("accepted %d below the price", p.Amount)
		}
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Fatalf("error %v is not a refusal", err)
		}
	})
}

// TestVerifyCreditFixtures: VerifyCredit is Verify without the memo: the
// memo fixtures pay, every other refusal stays.
func TestVerifyCreditFixtures(t *testing.T) {
	credit := Credit{TokenAccount: ourTokenAccount, Mint: USDCMainnetMint, MinAmount: 10000}
	cases := []struct {
		file   string
		want   Credit
		reason string
		amount uint64
		fee    uint64
	}{
		{"transfer_checked_memo.json", credit, "", 10000, 5001},
		{"token2022_transfer.json", credit, "", 25000, 5001},
		{"pre_balance_absent.json", credit, "", 10000, 5000},
		{"no_memo.json", credit, "", 10000, 0},
		{"two_memos.json", credit, "", 10000, 0},
		{"memo_inner_only.json", credit, "", 10000, 0},
		{"failed_tx.json", credit, ReasonTxFailed, 0, 0},
		{"wrong_mint.json", credit, ReasonWrongMint, 0, 0},
		{"insufficient_amount.json", credit, ReasonAmountInsufficient, 0, 0},
		{"transfer_checked_memo.json", Credit{ourTokenAccount, USDCMainnetMint, 10001}, ReasonAmountInsufficient, 0, 0},
		{"transfer_checked_memo.json", Credit{ourTokenAccount, USDCDevnetMint, 10000}, ReasonWrongMint, 0, 0},
		{"transfer_checked_memo.json", Credit{ourWallet, USDCMainnetMint, 10000}, ReasonAmountInsufficient, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			tx := loadFixture(t, tc.file)
			got, err := VerifyCredit(tx, tc.want)
			if tc.reason != "" {
				var r *Refusal
				if !errors.As(err, &r) || r.Reason != tc.reason || got != (Payment{}) {
					t.Fatalf("got %+v %v, want refusal %s", got, err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Amount < tc.amount || got.Signature != tx.Transaction.Signatures[0] || (tc.fee != 0 && got.FeeLamports != tc.fee) {
				t.Errorf("got %+v", got)
			}
		})
	}
	for _, bad := range []Credit{{"", USDCMainnetMint, 1}, {ourTokenAccount, "", 1}, {ourTokenAccount, USDCMainnetMint, 0}} {
		if _, err := VerifyCredit(loadFixture(t, "transfer_checked_memo.json"), bad); !errors.Is(err, ErrInvalidExpect) {
			t.Errorf("%+v: %v, want ErrInvalidExpect", bad, err)
		}
	}
	if _, err := VerifyCredit(nil, credit); err == nil {
		t.Error("a nil transaction pays")
	}
}
