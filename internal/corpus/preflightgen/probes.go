package main

// P1 as x402-preflight/v1 revision 2 writes it down (probes.p1_structural),
// built again from the document's text: the EVM authorization and the
// Solana transaction, every fresh value drawn from the case's random stream
// in the document's order. Curve tests are math/big over the published
// constants; nothing here is shared with internal/preflight.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// rng is the case's random stream: bytes handed out in order.
type rng struct {
	b   []byte
	off int
}

func (r *rng) take(n int) ([]byte, bool) {
	if r.off+n > len(r.b) {
		return nil, false
	}
	out := append([]byte(nil), r.b[r.off:r.off+n]...)
	r.off += n
	return out, true
}

// caseStream is the random stream a case gives: SHA-256 of
// "x402-preflight-corpus/<case id>/<counter>", 1024 bytes.
func caseStream(id string) []byte {
	var out []byte
	for i := 0; len(out) < 1024; i++ {
		sum := sha256.Sum256([]byte("x402-preflight-corpus/" + id + "/" + strconv.Itoa(i)))
		out = append(out, sum[:]...)
	}
	return out
}

func hexInt(s string) *big.Int { n, _ := new(big.Int).SetString(s, 16); return n }

var (
	secpField = hexInt("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
	secpOrder = hexInt("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	edField   = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// d = -121665 / 121666 mod p
	edD = func() *big.Int {
		inv := new(big.Int).ModInverse(big.NewInt(121666), edField)
		d := new(big.Int).Mul(big.NewInt(-121665), inv)
		return d.Mod(d, edField)
	}()
)

// edPoint: 32 bytes decode as an edwards25519 point when, y being the
// little-endian value without the top bit (reduced mod p), (y²-1)/(d·y²+1)
// is a square mod p.
func edPoint(b []byte) bool {
	le := make([]byte, 32)
	for i := range 32 {
		le[31-i] = b[i]
	}
	le[0] &= 0x7f
	y := new(big.Int).SetBytes(le)
	y.Mod(y, edField)
	y2 := new(big.Int).Mul(y, y)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	v := new(big.Int).Mul(edD, y2)
	v.Add(v, big.NewInt(1)).Mod(v, edField)
	ratio := new(big.Int).Mul(u.Mod(u, edField), new(big.Int).ModInverse(v, edField))
	ratio.Mod(ratio, edField)
	return big.Jacobi(ratio, edField) >= 0
}

const b58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// b58key decodes a base58 text of exactly 32 bytes.
func b58key(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	n := new(big.Int)
	zeros := 0
	for i, c := range s {
		k := strings.IndexRune(b58Alphabet, c)
		if k < 0 {
			return nil, false
		}
		if k == 0 && i == zeros {
			zeros++
		}
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(k)))
	}
	out := append(make([]byte, zeros), n.Bytes()...)
	if n.Sign() == 0 {
		out = make([]byte, zeros)
	}
	return out, len(out) == 32
}

func mustKey(s string) []byte { k, _ := b58key(s); return k }

// toJSON writes a decoded value back: sorted members, numbers as written,
// no HTML escaping.
func toJSON(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// p1Value is P1's header value for candidate c, or "" when P1 is not sent.
func p1Value(c *candidate, now int64, r *rng) string {
	if !probeable(c) {
		return ""
	}
	var payload []byte
	var ok bool
	if strings.HasPrefix(c.caip2, "eip155:") {
		payload, ok = evmP1(c, now, r)
	} else {
		payload, ok = svmP1(c, r)
	}
	if !ok {
		return ""
	}
	var doc []byte
	if c.version == 1 {
		doc = []byte(`{"x402Version":1,"scheme":` + string(toJSON(text(c.entry, "scheme"))) + `,"network":` + string(toJSON(text(c.entry, "network"))))
	} else {
		doc = []byte(`{"x402Version":2`)
		if c.hasRes {
			doc = append(append(doc, `,"resource":`...), toJSON(c.resource)...)
		}
		doc = append(append(doc, `,"accepted":`...), toJSON(c.entry)...)
	}
	doc = append(append(append(doc, `,"payload":`...), payload...), '}')
	return base64.StdEncoding.EncodeToString(doc)
}

// evmP1: FROM 20, NONCE 32, R, S, V as the document lists them.
func evmP1(c *candidate, now int64, r *rng) ([]byte, bool) {
	from, ok1 := r.take(20)
	nonce, ok2 := r.take(32)
	if !ok1 || !ok2 {
		return nil, false
	}
	var rb, sb []byte
	for i := 0; ; i++ {
		b, ok := r.take(32)
		if !ok || i == 64 {
			return nil, false
		}
		x := new(big.Int).SetBytes(b)
		if x.Sign() <= 0 || x.Cmp(secpOrder) >= 0 {
			continue
		}
		rhs := new(big.Int).Exp(x, big.NewInt(3), secpField)
		rhs.Add(rhs, big.NewInt(7)).Mod(rhs, secpField)
		if rhs.Sign() != 0 && big.Jacobi(rhs, secpField) == 1 {
			rb = b
			break
		}
	}
	half := new(big.Int).Rsh(secpOrder, 1)
	for i := 0; ; i++ {
		b, ok := r.take(32)
		if !ok || i == 64 {
			return nil, false
		}
		b[0] &= 0x7f
		if x := new(big.Int).SetBytes(b); x.Sign() > 0 && x.Cmp(half) <= 0 {
			sb = b
			break
		}
	}
	v, ok := r.take(1)
	if !ok {
		return nil, false
	}
	w := int64(60)
	if n, ok := c.entry["maxTimeoutSeconds"].(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && i >= 1 {
			w = min(i, 3600)
		}
	}
	sig := "0x" + hex.EncodeToString(rb) + hex.EncodeToString(sb) + hex.EncodeToString([]byte{27 + v[0]&1})
	q := func(s string) string { return string(toJSON(s)) }
	return []byte(`{"signature":` + q(sig) + `,"authorization":{"from":` + q("0x"+hex.EncodeToString(from)) +
		`,"to":` + q(text(c.entry, "payTo")) + `,"value":` + q(c.amount()) +
		`,"validAfter":` + q(strconv.FormatInt(now-600, 10)) + `,"validBefore":` + q(strconv.FormatInt(now+w, 10)) +
		`,"nonce":` + q("0x"+hex.EncodeToString(nonce)) + `}}`), true
}

const (
	tokenProgram  = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	token2022     = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
	ataProgram    = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	computeBudget = "ComputeBudget111111111111111111111111111111"
	memoProgram   = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
)

// ata derives the associated token account of owner for mint.
func ata(owner, mint []byte, program string) []byte {
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		h.Write(owner)
		h.Write(mustKey(program))
		h.Write(mint)
		h.Write([]byte{byte(bump)})
		h.Write(mustKey(ataProgram))
		h.Write([]byte("ProgramDerivedAddress"))
		if sum := h.Sum(nil); !edPoint(sum) {
			return sum
		}
	}
	return nil
}

func drawEdPoint(r *rng) ([]byte, bool) {
	for range 64 {
		b, ok := r.take(32)
		if !ok {
			return nil, false
		}
		if edPoint(b) {
			return b, true
		}
	}
	return nil, false
}

func shortvec(n int) []byte {
	var out []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// svmTerms: payTo, asset and extra.feePayer 32-byte keys, a u64 amount.
func svmTerms(c *candidate) (payTo, mint, feePayer []byte, amount uint64, ok bool) {
	extra, _ := c.entry["extra"].(map[string]any)
	var ok1, ok2, ok3 bool
	payTo, ok1 = b58key(text(c.entry, "payTo"))
	mint, ok2 = b58key(text(c.entry, "asset"))
	feePayer, ok3 = b58key(text(extra, "feePayer"))
	a := c.amount()
	if !atomic.MatchString(a) {
		return nil, nil, nil, 0, false
	}
	amount, err := strconv.ParseUint(a, 10, 64)
	return payTo, mint, feePayer, amount, ok1 && ok2 && ok3 && err == nil
}

func svmP1(c *candidate, r *rng) ([]byte, bool) {
	payTo, mint, feePayer, amount, ok := svmTerms(c)
	if !ok {
		return nil, false
	}
	extra, _ := c.entry["extra"].(map[string]any)
	authority, ok := drawEdPoint(r)
	if !ok {
		return nil, false
	}
	blockhash, ok := b58key(text(extra, "recentBlockhash"))
	if !ok {
		if blockhash, ok = r.take(32); !ok {
			return nil, false
		}
	}
	var memo []byte
	if m, isStr := extra["memo"].(string); isStr {
		memo = []byte(m)
	} else {
		n, ok := r.take(16)
		if !ok {
			return nil, false
		}
		memo = []byte(hex.EncodeToString(n))
	}
	sigR, ok := drawEdPoint(r)
	if !ok {
		return nil, false
	}
	sigS, ok := r.take(32)
	if !ok {
		return nil, false
	}
	sigS[31] &= 0x0f
	keys := [][]byte{feePayer, authority, ata(authority, mint, tokenProgram), ata(payTo, mint, tokenProgram), mint,
		mustKey(computeBudget), mustKey(tokenProgram), mustKey(memoProgram)}
	msg := []byte{0x80, 2, 1, 4}
	msg = append(msg, shortvec(len(keys))...)
	for _, k := range keys {
		msg = append(msg, k...)
	}
	msg = append(msg, blockhash...)
	instr := func(prog byte, accounts []byte, data []byte) []byte {
		out := append([]byte{prog}, shortvec(len(accounts))...)
		out = append(out, accounts...)
		out = append(out, shortvec(len(data))...)
		return append(out, data...)
	}
	msg = append(msg, shortvec(4)...)
	msg = append(msg, instr(5, nil, binary.LittleEndian.AppendUint32([]byte{2}, 20000))...)
	msg = append(msg, instr(5, nil, binary.LittleEndian.AppendUint64([]byte{3}, 1))...)
	msg = append(msg, instr(6, []byte{2, 4, 3, 1}, append(binary.LittleEndian.AppendUint64([]byte{12}, amount), 6))...)
	msg = append(msg, instr(7, nil, memo)...)
	msg = append(msg, shortvec(0)...)
	tx := append(shortvec(2), make([]byte, 64)...)
	tx = append(append(append(tx, sigR...), sigS...), msg...)
	return []byte(`{"transaction":"` + base64.StdEncoding.EncodeToString(tx) + `"}`), true
}
