package preflight

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math/big"

	"filippo.io/edwards25519"
	"github.com/mr-tron/base58"
)

// The Solana exact P1 template (x402-preflight/v1 revision 2, probes.
// p1_structural.solana): the partially signed v0 transaction a standard
// client builds for the entry (scheme_exact_svm.md §3.1: compute unit
// limit, compute unit price, TransferChecked, Memo), paying from the
// associated token account of a fresh random authority, whose signature was
// drawn at random rather than made by a key.
const (
	svmComputeUnitLimit = 20000 // within §2.2.1's 400,000
	svmComputeUnitPrice = 1     // microlamports per unit, within §3.1's 5 lamports
	svmDecimals         = 6     // the probe reads no chain: USDC's decimals
	svmMemoNonceBytes   = 16    // §3.1: a random nonce of at least 16 bytes, hex
)

// Program ids the template uses (base58).
const (
	programComputeBudget   = "ComputeBudget111111111111111111111111111111"
	programToken           = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	programAssociatedToken = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	programMemo            = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
)

type solanaTerms struct {
	payTo, mint, feePayer [32]byte
	amount                uint64
	blockhash             *[32]byte // extra.recentBlockhash when it is a 32-byte key
	memo                  *string   // extra.memo when it is a string
}

func key32(s string) ([32]byte, bool) {
	var k [32]byte
	b, err := base58.Decode(s)
	if s == "" || err != nil || len(b) != 32 {
		return k, false
	}
	copy(k[:], b)
	return k, true
}

// solanaTermsOf reads what the template needs; ok is false when payTo,
// asset or extra.feePayer is no 32-byte key or the amount no u64.
func solanaTermsOf(e *Entry) (solanaTerms, bool) {
	var t solanaTerms
	var ok1, ok2, ok3 bool
	extra, _ := e.entry["extra"].(map[string]any)
	t.payTo, ok1 = key32(str(e.entry, "payTo"))
	t.mint, ok2 = key32(str(e.entry, "asset"))
	t.feePayer, ok3 = key32(str(extra, "feePayer"))
	amt, ok := new(big.Int).SetString(e.amount(), 10)
	if !ok1 || !ok2 || !ok3 || !ok || !ValidAmount(e.amount()) || !amt.IsUint64() {
		return t, false
	}
	t.amount = amt.Uint64()
	if bh, ok := key32(str(extra, "recentBlockhash")); ok {
		t.blockhash = &bh
	}
	if m, ok := extra["memo"].(string); ok {
		t.memo = &m
	}
	return t, true
}

// onCurve reports whether 32 bytes decode to an edwards25519 point.
func onCurve(b []byte) bool {
	_, err := new(edwards25519.Point).SetBytes(b)
	return err == nil
}

// drawPoint draws 32 bytes until they decode to a curve point: the shape of
// a public key (or of a signature's R), with no key behind it.
func drawPoint(env ProbeEnv) ([32]byte, bool) {
	var k [32]byte
	for range maxDraws {
		b, ok := draw(env.Rand, 32)
		if !ok {
			return k, false
		}
		if onCurve(b) {
			copy(k[:], b)
			return k, true
		}
	}
	return k, false
}

// associatedTokenAccount derives owner's associated token account for mint
// under the classic token program: for bump 255 down, SHA-256 of owner,
// token program, mint, bump, the associated token program and
// "ProgramDerivedAddress"; the first result off the curve.
func associatedTokenAccount(owner, mint [32]byte) ([32]byte, bool) {
	tok, _ := key32(programToken)
	ata, _ := key32(programAssociatedToken)
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, p := range [][]byte{owner[:], tok[:], mint[:], {byte(bump)}, ata[:], []byte("ProgramDerivedAddress")} {
			h.Write(p)
		}
		var out [32]byte
		copy(out[:], h.Sum(nil))
		if !onCurve(out[:]) {
			return out, true
		}
	}
	return [32]byte{}, false
}

// compactU16 appends Solana's shortvec length.
func compactU16(b []byte, n int) []byte {
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// solanaPayload fills the Solana template. Random bytes are drawn in this
// order: the authority (32 per draw, until a curve point), the blockhash
// (32, only without a usable extra.recentBlockhash), the memo nonce (16,
// only without extra.memo), the signature's R (32 per draw, until a curve
// point) and S (32, top four bits cleared: below the group order).
func solanaPayload(e *Entry, env ProbeEnv) ([]byte, bool) {
	t, ok := solanaTermsOf(e)
	if !ok {
		return nil, false
	}
	authority, ok := drawPoint(env)
	if !ok {
		return nil, false
	}
	var blockhash [32]byte
	if t.blockhash != nil {
		blockhash = *t.blockhash
	} else {
		b, ok := draw(env.Rand, 32)
		if !ok {
			return nil, false
		}
		copy(blockhash[:], b)
	}
	var memo []byte
	if t.memo != nil {
		memo = []byte(*t.memo)
	} else {
		n, ok := draw(env.Rand, svmMemoNonceBytes)
		if !ok {
			return nil, false
		}
		memo = []byte(hex.EncodeToString(n))
	}
	sigR, ok := drawPoint(env)
	if !ok {
		return nil, false
	}
	sigS, ok := draw(env.Rand, 32)
	if !ok {
		return nil, false
	}
	sigS[31] &= 0x0f
	source, ok1 := associatedTokenAccount(authority, t.mint)
	dest, ok2 := associatedTokenAccount(t.payTo, t.mint)
	if !ok1 || !ok2 {
		return nil, false
	}
	cb, _ := key32(programComputeBudget)
	tok, _ := key32(programToken)
	memoProg, _ := key32(programMemo)
	// Accounts: writable signer, read-only signer, writable, read-only.
	keys := [][32]byte{t.feePayer, authority, source, dest, t.mint, cb, tok, memoProg}
	msg := []byte{0x80, 2, 1, 4} // v0; 2 signatures, 1 read-only signed, 4 read-only unsigned
	msg = compactU16(msg, len(keys))
	for _, k := range keys {
		msg = append(msg, k[:]...)
	}
	msg = append(msg, blockhash[:]...)
	limit := binary.LittleEndian.AppendUint32([]byte{2}, svmComputeUnitLimit)
	price := binary.LittleEndian.AppendUint64([]byte{3}, svmComputeUnitPrice)
	transfer := append(binary.LittleEndian.AppendUint64([]byte{12}, t.amount), svmDecimals)
	ins := []struct {
		program  byte
		accounts []byte
		data     []byte
	}{
		{5, nil, limit},
		{5, nil, price},
		{6, []byte{2, 4, 3, 1}, transfer}, // source, mint, destination, authority
		{7, nil, memo},
	}
	msg = compactU16(msg, len(ins))
	for _, in := range ins {
		msg = append(msg, in.program)
		msg = compactU16(msg, len(in.accounts))
		msg = append(msg, in.accounts...)
		msg = compactU16(msg, len(in.data))
		msg = append(msg, in.data...)
	}
	msg = compactU16(msg, 0) // no address table lookups
	tx := compactU16(nil, 2)
	tx = append(tx, make([]byte, 64)...) // the fee payer's slot, left for the sponsor (§ Protocol Flow 4)
	tx = append(tx, sigR[:]...)
	tx = append(tx, sigS...)
	tx = append(tx, msg...)
	return []byte(`{"transaction":"` + base64.StdEncoding.EncodeToString(tx) + `"}`), true
}
