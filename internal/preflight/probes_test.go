package preflight

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/mr-tron/base58"
	"golang.org/x/crypto/sha3"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/chain"
	"github.com/exchangerebel/payability/internal/lint"
)

// testNow is the injected check time of every probe test.
var testNow = time.Unix(1767225600, 0)

// stream is a deterministic byte source: SHA-256 of seed and a counter.
type stream struct {
	seed string
	n    int
	buf  []byte
}

func (s *stream) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) {
		sum := sha256.Sum256([]byte(s.seed + "/" + strconv.Itoa(s.n)))
		s.n++
		s.buf = append(s.buf, sum[:]...)
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func testEnv(seed string) ProbeEnv { return ProbeEnv{Now: testNow, Rand: &stream{seed: seed}} }

func selectOne(t *testing.T, c lintChallenge) Selection {
	t.Helper()
	s := Select(lint.Decode(c.capture), c.lint, Options{})
	if s.Selected == nil {
		t.Fatal("no entry selected")
	}
	return s
}

type captureT = capture.Capture

type lintChallenge struct {
	capture captureT
	lint    lint.Result
}

// p1Doc decodes a P1 header value.
type p1Doc struct {
	X402Version int             `json:"x402Version"`
	Scheme      string          `json:"scheme"`
	Network     string          `json:"network"`
	Accepted    json.RawMessage `json:"accepted"`
	Payload     struct {
		Transaction   string            `json:"transaction"`
		Signature     string            `json:"signature"`
		Authorization map[string]string `json:"authorization"`
	} `json:"payload"`
}

func decodeP1(t *testing.T, v string) (p1Doc, []byte) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatalf("P1 is not standard base64: %v", err)
	}
	var d p1Doc
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("P1 is not JSON: %v", err)
	}
	return d, raw
}

var (
	hex20 = regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	hex32 = regexp.MustCompile(`^0x[0-9a-f]{64}$`)
	hex65 = regexp.MustCompile(`^0x[0-9a-f]{130}$`)
)

func keccak(parts ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func word(n *big.Int) []byte { return n.FillBytes(make([]byte, 32)) }

func addrWord(t *testing.T, a string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(a), "0x"))
	if err != nil || len(b) != 20 {
		t.Fatalf("address %q", a)
	}
	return append(make([]byte, 12), b...)
}

func decimal(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not a decimal: %q", s)
	}
	return n
}

// eip3009Digest is the EIP-712 digest a USDC contract checks for
// TransferWithAuthorization (scheme_exact_evm.md).
func eip3009Digest(t *testing.T, name, version string, chainID int64, asset string, a map[string]string) []byte {
	t.Helper()
	domainType := keccak([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	domain := keccak(domainType, keccak([]byte(name)), keccak([]byte(version)), word(big.NewInt(chainID)), addrWord(t, asset))
	authType := keccak([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	nonce, _ := hex.DecodeString(strings.TrimPrefix(a["nonce"], "0x"))
	st := keccak(authType, addrWord(t, a["from"]), addrWord(t, a["to"]), word(decimal(t, a["value"])),
		word(decimal(t, a["validAfter"])), word(decimal(t, a["validBefore"])), nonce)
	return keccak([]byte{0x19, 0x01}, domain, st)
}

// TestP1EVMTemplate: every member a cheap check reads is what a standard
// client sends for the offer; the fresh values are fresh per probe.
func TestP1EVMTemplate(t *testing.T) {
	for name, c := range map[string]struct {
		unpaid captureT
		leg    lint.Leg
	}{"v2": {v2(evmEntry("2500")), lint.LegHeader}, "v1": {v1(v1Entry("base", "2500")), lint.LegBody}} {
		t.Run(name, func(t *testing.T) {
			sel := selectOne(t, lintChallenge{c.unpaid, cleanLint(c.leg, 1)})
			v, ok := P1Value(sel.Selected, testEnv("a"))
			if !ok {
				t.Fatal("P1 not built")
			}
			d, raw := decodeP1(t, v)
			a := d.Payload.Authorization
			if a["to"] != basePayTo || a["value"] != "2500" {
				t.Errorf("to/value %q %q not as offered", a["to"], a["value"])
			}
			if a["validAfter"] != strconv.FormatInt(testNow.Unix()-600, 10) || a["validBefore"] != strconv.FormatInt(testNow.Unix()+60, 10) {
				t.Errorf("window %s..%s does not hold the check time as the template says", a["validAfter"], a["validBefore"])
			}
			if !hex20.MatchString(a["from"]) || a["from"] == "0x"+strings.Repeat("0", 40) || !hex32.MatchString(a["nonce"]) || !hex65.MatchString(d.Payload.Signature) {
				t.Errorf("from/nonce/signature shape: %v %s", a, d.Payload.Signature)
			}
			sig, _ := hex.DecodeString(d.Payload.Signature[2:])
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
			if r.Sign() == 0 || r.Cmp(secpN) >= 0 || s.Sign() == 0 || s.Cmp(secpHalfN) > 0 || (sig[64] != 27 && sig[64] != 28) {
				t.Errorf("signature shape r=%x s=%x v=%d", r, s, sig[64])
			}
			if name == "v2" {
				want := `{"x402Version":2,"resource":{"description":"d","url":"` + testURL + `"},` +
					`"accepted":{"amount":"2500","asset":"` + baseUSDC + `","extra":{"name":"USD Coin","version":"2"},"maxTimeoutSeconds":60,"network":"eip155:8453","payTo":"` + basePayTo + `","scheme":"exact"},` +
					`"payload":{"signature":"` + d.Payload.Signature + `","authorization":{"from":"` + a["from"] + `","to":"` + basePayTo + `","value":"2500","validAfter":"` + a["validAfter"] + `","validBefore":"` + a["validBefore"] + `","nonce":"` + a["nonce"] + `"}}}`
				if string(raw) != want {
					t.Errorf("P1 JSON\n got %s\nwant %s", raw, want)
				}
			} else if d.X402Version != 1 || d.Scheme != "exact" || d.Network != "base" || d.Accepted != nil {
				t.Errorf("v1 envelope %+v", d)
			}
			again, _ := P1Value(sel.Selected, testEnv("b"))
			d2, _ := decodeP1(t, again)
			if d2.Payload.Authorization["from"] == a["from"] || d2.Payload.Authorization["nonce"] == a["nonce"] || d2.Payload.Signature == d.Payload.Signature {
				t.Error("from, nonce or signature not fresh per probe")
			}
		})
	}
	t.Run("window capped", func(t *testing.T) {
		e := evmEntry("1")
		e["maxTimeoutSeconds"] = 86400
		sel := selectOne(t, lintChallenge{v2(e), cleanLint(lint.LegHeader, 1)})
		v, _ := P1Value(sel.Selected, testEnv("c"))
		d, _ := decodeP1(t, v)
		if d.Payload.Authorization["validBefore"] != strconv.FormatInt(testNow.Unix()+3600, 10) {
			t.Errorf("validBefore %s not capped at an hour", d.Payload.Authorization["validBefore"])
		}
	})
}

// TestNoFundsPropertyEVM recovers the signer of every EVM P1 (over the
// EIP-712 digest the token contract checks) and finds it is not from: no
// contract accepts the transfer, and from — random bytes derived from no key
// — holds nothing anyway.
func TestNoFundsPropertyEVM(t *testing.T) {
	sel := selectOne(t, lintChallenge{v2(evmEntry("10000")), cleanLint(lint.LegHeader, 1)})
	recovered := 0
	for i := range 64 {
		v, ok := P1Value(sel.Selected, testEnv(fmt.Sprint("seed-", i)))
		if !ok {
			t.Fatal("P1 not built")
		}
		d, _ := decodeP1(t, v)
		a := d.Payload.Authorization
		digest := eip3009Digest(t, "USD Coin", "2", 8453, baseUSDC, a)
		sig, _ := hex.DecodeString(d.Payload.Signature[2:])
		compact := append([]byte{sig[64]}, sig[:64]...)
		pub, _, err := ecdsa.RecoverCompact(compact, digest)
		if err != nil {
			continue // no signer at all: nothing can settle either
		}
		recovered++
		signer := "0x" + hex.EncodeToString(keccak(pub.SerializeUncompressed()[1:])[12:])
		if signer == a["from"] {
			t.Fatalf("probe %d: the signature recovers to from", i)
		}
	}
	if recovered == 0 {
		t.Error("no signature recovered: r is drawn as a curve x-coordinate and every one should recover to some key")
	}
	// Control: the digest and the recovery above are the ones a contract
	// uses — a signature a key does make over the same authorization
	// recovers to that key's address (a test key, never a probe's).
	v, _ := P1Value(sel.Selected, testEnv("control"))
	d, _ := decodeP1(t, v)
	key := secp256k1.PrivKeyFromBytes(bytes.Repeat([]byte{7}, 32))
	addr := "0x" + hex.EncodeToString(keccak(key.PubKey().SerializeUncompressed()[1:])[12:])
	a := d.Payload.Authorization
	a["from"] = addr
	digest := eip3009Digest(t, "USD Coin", "2", 8453, baseUSDC, a)
	pub, _, err := ecdsa.RecoverCompact(ecdsa.SignCompact(key, digest, false), digest)
	if err != nil || "0x"+hex.EncodeToString(keccak(pub.SerializeUncompressed()[1:])[12:]) != addr {
		t.Fatalf("control signature does not recover to its key: %v", err)
	}
}

// svmTx is the part of a serialized v0 transaction the tests read.
type svmTx struct {
	sigs      [][]byte
	message   []byte
	header    [3]byte
	keys      [][]byte
	blockhash []byte
	ins       []struct {
		program  int
		accounts []int
		data     []byte
	}
}

func decodeSVM(t *testing.T, text string) svmTx {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	var tx svmTx
	off := 0
	take := func(n int) []byte {
		if off+n > len(raw) {
			t.Fatalf("transaction truncated at %d", off)
		}
		b := raw[off : off+n]
		off += n
		return b
	}
	short := func() int { // all counts here are below 128
		b := take(1)[0]
		if b&0x80 != 0 {
			t.Fatal("long shortvec")
		}
		return int(b)
	}
	for range short() {
		tx.sigs = append(tx.sigs, take(64))
	}
	tx.message = raw[off:]
	if v := take(1)[0]; v != 0x80 {
		t.Fatalf("message prefix %x, want v0", v)
	}
	copy(tx.header[:], take(3))
	for range short() {
		tx.keys = append(tx.keys, take(32))
	}
	tx.blockhash = take(32)
	for range short() {
		var in struct {
			program  int
			accounts []int
			data     []byte
		}
		in.program = int(take(1)[0])
		for _, a := range take(short()) {
			in.accounts = append(in.accounts, int(a))
		}
		in.data = take(short())
		tx.ins = append(tx.ins, in)
	}
	if short() != 0 || off != len(raw) {
		t.Fatal("lookups or trailing bytes")
	}
	return tx
}

func b58(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base58.Decode(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("key %q", s)
	}
	return b
}

// TestP1SolanaTemplate and the no-funds property: the transaction is the
// one a standard client builds for the offer (§3.1's layout, the payee's
// associated token account, the offered fee payer), partially signed by an
// authority no key stands behind, with a signature that verifies for no key.
func TestP1SolanaTemplate(t *testing.T) {
	feePayer := "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd"
	blockhash := "EZ3rST5dvHmbanh75jc4PuLfV96vp9fEYBVeNk4FfM1k"
	withHints := solEntry("1000")
	withHints["extra"] = map[string]any{"feePayer": feePayer, "memo": "pi_3abc", "recentBlockhash": blockhash}
	for name, e := range map[string]map[string]any{"plain": solEntry("1000"), "memo and blockhash": withHints} {
		t.Run(name, func(t *testing.T) {
			sel := selectOne(t, lintChallenge{v2(e), cleanLint(lint.LegHeader, 1)})
			for i := range 16 {
				v, ok := P1Value(sel.Selected, testEnv(fmt.Sprint(name, i)))
				if !ok {
					t.Fatal("P1 not built")
				}
				d, _ := decodeP1(t, v)
				tx := decodeSVM(t, d.Payload.Transaction)
				extra := e["extra"].(map[string]any)
				if len(tx.sigs) != 2 || tx.header != [3]byte{2, 1, 4} || len(tx.keys) != 8 {
					t.Fatalf("signatures %d header %v keys %d", len(tx.sigs), tx.header, len(tx.keys))
				}
				if !bytes.Equal(tx.keys[0], b58(t, extra["feePayer"].(string))) {
					t.Error("fee payer is not the offered extra.feePayer")
				}
				authority := tx.keys[1]
				if !onCurve(authority) {
					t.Error("authority is not a curve point")
				}
				var owner, mint, tok [32]byte
				copy(owner[:], b58(t, solPayTo))
				copy(mint[:], b58(t, solUSDC))
				copy(tok[:], b58(t, chain.TokenProgram))
				dest, _ := chain.AssociatedTokenAddress(owner, tok, mint)
				var auth [32]byte
				copy(auth[:], authority)
				src, _ := chain.AssociatedTokenAddress(auth, tok, mint)
				if len(tx.ins) != 4 {
					t.Fatalf("%d instructions", len(tx.ins))
				}
				cb := b58(t, "ComputeBudget111111111111111111111111111111")
				if !bytes.Equal(tx.keys[tx.ins[0].program], cb) || tx.ins[0].data[0] != 2 || !bytes.Equal(tx.keys[tx.ins[1].program], cb) || tx.ins[1].data[0] != 3 {
					t.Error("compute budget limit and price not first")
				}
				tr := tx.ins[2]
				if !bytes.Equal(tx.keys[tr.program], tok[:]) || len(tr.data) != 10 || tr.data[0] != 12 ||
					binary.LittleEndian.Uint64(tr.data[1:9]) != 1000 || tr.data[9] != 6 {
					t.Errorf("TransferChecked %x", tr.data)
				}
				if !bytes.Equal(tx.keys[tr.accounts[0]], src[:]) || !bytes.Equal(tx.keys[tr.accounts[1]], mint[:]) ||
					!bytes.Equal(tx.keys[tr.accounts[2]], dest[:]) || tr.accounts[3] != 1 {
					t.Error("TransferChecked accounts are not source ATA, mint, payee ATA, authority")
				}
				memo := string(tx.ins[3].data)
				if m, ok := extra["memo"].(string); ok && memo != m || !ok && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(memo) {
					t.Errorf("memo %q", memo)
				}
				if bh, ok := extra["recentBlockhash"].(string); ok && !bytes.Equal(tx.blockhash, b58(t, bh)) {
					t.Error("extra.recentBlockhash not used")
				}
				for _, in := range tx.ins {
					for _, a := range in.accounts {
						if a == 0 {
							t.Error("the fee payer appears in an instruction (§2.1.1)")
						}
					}
				}
				// No funds: the fee payer's slot is empty (the sponsor's), and the
				// authority's signature verifies neither for the authority nor for
				// the fee payer.
				if !bytes.Equal(tx.sigs[0], make([]byte, 64)) {
					t.Error("fee payer slot is not empty")
				}
				if ed25519.Verify(ed25519.PublicKey(authority), tx.message, tx.sigs[1]) ||
					ed25519.Verify(ed25519.PublicKey(tx.keys[0]), tx.message, tx.sigs[1]) {
					t.Fatal("a P1 signature verifies")
				}
				if tx.sigs[1][63]&0xf0 != 0 || !onCurve(tx.sigs[1][:32]) {
					t.Error("signature shape: R a curve point, S below the group order")
				}
			}
		})
	}
}

func TestP1NotSent(t *testing.T) {
	other := solEntry("1")
	other["scheme"] = "upto"
	stellar := solEntry("1")
	stellar["network"] = "stellar:pubnet"
	noFeePayer := solEntry("1")
	noFeePayer["extra"] = map[string]any{}
	for name, e := range map[string]map[string]any{"scheme upto": other, "stellar network": stellar, "solana without feePayer": noFeePayer} {
		t.Run(name, func(t *testing.T) {
			sel := selectOne(t, lintChallenge{v2(e), cleanLint(lint.LegHeader, 1)})
			if _, ok := P1JSON(sel.Selected, testEnv("x")); ok || sel.Probed() {
				t.Error("P1 built for an unprobed entry")
			}
			if ps := Probes(sel, http.MethodGet, nil, testEnv("x")); ps[0].ID != ProbeP2 {
				t.Errorf("first probe %s", ps[0].ID)
			}
		})
	}
	t.Run("random source ran dry", func(t *testing.T) {
		sel := selectOne(t, lintChallenge{v2(evmEntry("1")), cleanLint(lint.LegHeader, 1)})
		if _, ok := P1JSON(sel.Selected, ProbeEnv{Now: testNow, Rand: io.LimitReader(&stream{seed: "x"}, 40)}); ok {
			t.Error("P1 built from a short random source")
		}
	})
}

// TestProbesBothDialects: a challenge with a v2 header and a v1 body gets
// P1 and P2 in both dialects, the primary first.
func TestProbesBothDialects(t *testing.T) {
	c := v2(solEntry("1"))
	c.Body = v1(v1Entry("base", "1")).Body
	res := cleanLint(lint.LegHeader, 1)
	res.Entries = append(res.Entries, lint.EntrySummary{Index: 0, Leg: lint.LegBody})
	sel := Select(lint.Decode(c), res, Options{})
	if !sel.Dual || sel.Dialect != 2 || sel.Secondary == nil || sel.Secondary.Leg != lint.LegBody {
		t.Fatalf("selection %+v", sel)
	}
	ps := Probes(sel, http.MethodPost, []byte(`{}`), testEnv("d"))
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s/%d", p.ID, p.Dialect))
	}
	if strings.Join(got, ",") != "p1_structural/2,p2_bogus/2,p1_structural/1,p2_bogus/1,head/0,other/0" {
		t.Fatalf("probes %v", got)
	}
	if ps[0].Header[HeaderV2] == "" || ps[2].Header[HeaderV1] == "" || ps[3].Header[HeaderV1] != BogusPayment {
		t.Error("dialect headers")
	}
	d, _ := decodeP1(t, ps[2].Header[HeaderV1])
	if d.X402Version != 1 || d.Payload.Authorization["to"] != basePayTo {
		t.Errorf("v1 P1 not built from the v1 entry: %+v", d)
	}
	for _, p := range ps[:4] {
		if string(p.Body) != `{}` || p.Header["Content-Type"] != "application/json" || len(p.Header) != 2 {
			t.Errorf("%s/%d headers %v body %q", p.ID, p.Dialect, p.Header, p.Body)
		}
	}
	if ps[4].Method != http.MethodHead || len(ps[4].Header) != 0 || ps[5].Method != http.MethodGet {
		t.Error("method matrix")
	}
}

func TestDocumentMatchesProbeConstants(t *testing.T) {
	d := Document()
	if d.DocumentID != DocumentID || d.Revision != Revision || d.Corpus.ID != CorpusID {
		t.Errorf("document identity %s %s %s", d.DocumentID, d.Revision, d.Corpus.ID)
	}
	if d.Probes.P2.Value != BogusPayment || d.Probes.PaymentHeader.V2 != HeaderV2 || d.Probes.PaymentHeader.V1 != HeaderV1 {
		t.Error("document probe headers or P2 value differ from the code")
	}
	if strings.Join(d.Probes.Order, ",") != "p1_structural,p2_bogus,head,other" {
		t.Errorf("document order %v", d.Probes.Order)
	}
	e := d.Probes.P1.EVM
	if e.ValidAfterSkew != evmValidAfterSkew || e.MaxWindow != evmMaxWindow || e.DefaultWindow != evmDefaultWindow {
		t.Errorf("document EVM window %+v", e)
	}
	s := d.Probes.P1.Solana
	if s.ComputeUnitLimit != svmComputeUnitLimit || s.ComputeUnitPrice != svmComputeUnitPrice || s.Decimals != svmDecimals || s.TokenProgram != programToken {
		t.Errorf("document Solana constants %+v", s)
	}
}
