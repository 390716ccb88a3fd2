package preflight

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"strconv"
)

// The EVM exact P1 template (x402-preflight/v1 revision 2, probes.
// p1_structural.evm): an ERC-3009 TransferWithAuthorization payload that a
// standard client would send for the entry, except that its signature was
// drawn at random rather than made by a key.
const (
	// evmValidAfterSkew is how far before the check time the window opens,
	// as the reference client's validAfter does.
	evmValidAfterSkew = 600
	// evmMaxWindow caps the window's length after the check time.
	evmMaxWindow = 3600
	// evmDefaultWindow is used when the entry has no positive integer
	// maxTimeoutSeconds.
	evmDefaultWindow = 60
	// maxDraws bounds every rejection sampling loop (each draw is accepted
	// with probability above 1/2, so the bound is never met in practice).
	maxDraws = 64
)

// secp256k1's field prime p and group order n.
var (
	secpP, _    = new(big.Int).SetString("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", 16)
	secpN, _    = new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	secpHalfN   = new(big.Int).Rsh(secpN, 1)
	bigSeven    = big.NewInt(7)
	bigOne      = big.NewInt(1)
	hexEncoding = hex.EncodeToString
)

func draw(r io.Reader, n int) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err == nil
}

// drawR draws 32 bytes until they are an r of valid shape: 1 <= r < n and r
// the x-coordinate of a point of the curve (r^3 + 7 a square mod p), as
// every signature a key makes has.
func drawR(rd io.Reader) ([]byte, bool) {
	for range maxDraws {
		b, ok := draw(rd, 32)
		if !ok {
			return nil, false
		}
		r := new(big.Int).SetBytes(b)
		if r.Sign() == 0 || r.Cmp(secpN) >= 0 {
			continue
		}
		y2 := new(big.Int).Exp(r, big.NewInt(3), secpP)
		y2.Add(y2, bigSeven).Mod(y2, secpP)
		if big.Jacobi(y2, secpP) == 1 {
			return b, true
		}
	}
	return nil, false
}

// drawS draws 32 bytes, clears the top bit, until 1 <= s <= n/2 (the low
// half, which the reference verifiers require).
func drawS(rd io.Reader) ([]byte, bool) {
	for range maxDraws {
		b, ok := draw(rd, 32)
		if !ok {
			return nil, false
		}
		b[0] &= 0x7f
		s := new(big.Int).SetBytes(b)
		if s.Cmp(bigOne) >= 0 && s.Cmp(secpHalfN) <= 0 {
			return b, true
		}
	}
	return nil, false
}

// evmWindow is the seconds after the check time validBefore lies: the
// entry's maxTimeoutSeconds (a positive integer) capped, else the default.
func evmWindow(e *Entry) int64 {
	n, ok := jsonNumber(e.entry, "maxTimeoutSeconds")
	if !ok {
		return evmDefaultWindow
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || v < 1 {
		return evmDefaultWindow
	}
	return min(v, evmMaxWindow)
}

// evmPayload fills the EVM template. Random bytes are drawn in this order:
// from (20), nonce (32), r (32 per draw), s (32 per draw), v (1).
func evmPayload(e *Entry, env ProbeEnv) ([]byte, bool) {
	from, ok := draw(env.Rand, 20)
	if !ok {
		return nil, false
	}
	nonce, ok := draw(env.Rand, 32)
	if !ok {
		return nil, false
	}
	r, ok := drawR(env.Rand)
	if !ok {
		return nil, false
	}
	s, ok := drawS(env.Rand)
	if !ok {
		return nil, false
	}
	v, ok := draw(env.Rand, 1)
	if !ok {
		return nil, false
	}
	sig := append(append(append([]byte{}, r...), s...), 27+v[0]&1)
	now := env.Now.Unix()
	auth := []struct {
		k string
		v any
	}{
		{"from", "0x" + hexEncoding(from)},
		{"to", str(e.entry, "payTo")},
		{"value", e.amount()},
		{"validAfter", strconv.FormatInt(now-evmValidAfterSkew, 10)},
		{"validBefore", strconv.FormatInt(now+evmWindow(e), 10)},
		{"nonce", "0x" + hexEncoding(nonce)},
	}
	var b bytes.Buffer
	b.WriteString(`{"signature":`)
	b.Write(encode("0x" + hexEncoding(sig)))
	b.WriteString(`,"authorization":{`)
	for i, m := range auth {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		b.Write(encode(m.v))
	}
	b.WriteString(`}}`)
	return b.Bytes(), true
}
