// Package facilitatortest is a loopback x402 facilitator and payment
// payload builders, for the tests of the facilitator rail and of the paid
// service. Nothing here settles anything: the fake answers what the test
// tells it to.
package facilitatortest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mr-tron/base58"
)

// Solana program ids a payment transaction uses.
const (
	TokenProgram         = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	ComputeBudgetProgram = "ComputeBudget111111111111111111111111111111"
	MemoProgram          = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
)

// Call is one request the fake received.
type Call struct {
	Path         string
	X402Version  int
	Payload      json.RawMessage
	Requirements json.RawMessage
}

// Answer is an HTTP answer of the fake.
type Answer struct {
	Status int
	Body   string
}

// Fake is a loopback facilitator. Verify and Settle decide its answers; nil
// means "valid" and "settled, transaction = a signature derived from the
// payload" (one payload, one signature, as on chain).
type Fake struct {
	URL      string
	FeePayer string
	// Supported is the body of GET /supported; "" means exact on both
	// Solana networks, in x402 v1 and v2, with FeePayer.
	Supported string
	Verify    func(Call) Answer
	Settle    func(Call) Answer

	mu    sync.Mutex
	calls []Call
}

// New starts a fake facilitator on 127.0.0.1, closed when the test ends.
func New(t testing.TB) *Fake {
	f := &Fake{FeePayer: Address("facilitator-fee-payer")}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		X402Version         int             `json:"x402Version"`
		PaymentPayload      json.RawMessage `json:"paymentPayload"`
		PaymentRequirements json.RawMessage `json:"paymentRequirements"`
	}
	json.Unmarshal(body, &req)
	c := Call{Path: r.URL.Path, X402Version: req.X402Version, Payload: req.PaymentPayload, Requirements: req.PaymentRequirements}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	verify, settle, supported := f.Verify, f.Settle, f.Supported
	f.mu.Unlock()

	var a Answer
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/supported":
		a = Answer{200, supported}
		if supported == "" {
			a.Body = f.supported()
		}
	case r.Method == http.MethodPost && r.URL.Path == "/verify":
		a = Answer{200, `{"isValid":true,"payer":"` + Address("buyer") + `"}`}
		if verify != nil {
			a = verify(c)
		}
	case r.Method == http.MethodPost && r.URL.Path == "/settle":
		a = Answer{200, SettledBody(c, "")}
		if settle != nil {
			a = settle(c)
		}
	default:
		a = Answer{404, `{"error":"not found"}`}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	io.WriteString(w, a.Body)
}

func (f *Fake) supported() string {
	extra := map[string]string{"feePayer": f.FeePayer}
	kinds := []map[string]any{}
	for _, k := range []struct {
		v int
		n string
	}{
		{2, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}, {2, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"},
		{1, "solana"}, {1, "solana-devnet"},
		{2, "eip155:8453"}, {2, "eip155:84532"}, {1, "base"}, {1, "base-sepolia"},
	} {
		kind := map[string]any{"x402Version": k.v, "scheme": "exact", "network": k.n}
		if !IsEVM(k.n) {
			kind["extra"] = extra
		}
		kinds = append(kinds, kind)
	}
	b, _ := json.Marshal(map[string]any{"kinds": kinds, "extensions": []string{}, "signers": map[string]any{}})
	return string(b)
}

// Set changes the fake's answers while it runs.
func (f *Fake) Set(verify, settle func(Call) Answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Verify, f.Settle = verify, settle
}

// Calls returns the requests the fake received on path ("" for all).
func (f *Fake) Calls(path string) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if path == "" || c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// TxOf is the signature the fake settles a payload as: derived from the
// payload, so one payload always settles as one transaction.
func TxOf(payload []byte) string {
	sum := sha512.Sum512(payload)
	return base58.Encode(sum[:])
}

// SettledBody is a success answer of /settle for c (network "" means the
// network of c's requirements).
func SettledBody(c Call, network string) string {
	if network == "" {
		var req struct {
			Network string `json:"network"`
		}
		json.Unmarshal(c.Requirements, &req)
		network = req.Network
	}
	tx, payer := TxOf(c.Payload), Address("buyer")
	if IsEVM(network) {
		tx, payer = EVMTxOf(c.Payload), EVMAddress("buyer")
	}
	b, _ := json.Marshal(map[string]any{"success": true, "transaction": tx, "network": network, "payer": payer})
	return string(b)
}

// IsEVM reports whether an x402 network name (v1 or CAIP-2) is an EVM one.
func IsEVM(network string) bool {
	return strings.HasPrefix(network, "eip155:") || network == "base" || network == "base-sepolia"
}

// EVMTxOf is the transaction hash the fake settles an EVM payload as: 0x
// and 64 hex digits derived from the payload.
func EVMTxOf(payload []byte) string {
	sum := sha256.Sum256(payload)
	return "0x" + hex.EncodeToString(sum[:])
}

// EVMAddress is a made-up EVM address for a label, lower case (no key
// behind it).
func EVMAddress(label string) string {
	sum := sha256.Sum256([]byte("facilitatortest:evm:" + label))
	return "0x" + hex.EncodeToString(sum[:20])
}

// Authorization is the EIP-3009 authorization of an EVM exact payment
// (scheme_exact_evm.md, section 1); amounts and times are decimal text.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// EVMAuthorization is an authorization from the buyer of value to to,
// valid for an hour from the epoch second after, with a random nonce.
func EVMAuthorization(to string, value uint64) Authorization {
	nonce := make([]byte, 32)
	rand.Read(nonce)
	return Authorization{From: EVMAddress("buyer"), To: to, Value: strconv.FormatUint(value, 10),
		ValidAfter: "0", ValidBefore: "4102444800", Nonce: "0x" + hex.EncodeToString(nonce)}
}

// evmPayload is the exact EVM payload: a 65-byte signature (random bytes
// here: nothing verifies it but the fake) and the authorization.
func evmPayload(a Authorization) map[string]any {
	sig := make([]byte, 65)
	rand.Read(sig)
	return map[string]any{"signature": "0x" + hex.EncodeToString(sig), "authorization": a}
}

// EVMPayloadV2 is the PAYMENT-SIGNATURE value of an x402 v2 EVM payment.
func EVMPayloadV2(accepted any, a Authorization) string {
	b, _ := json.Marshal(map[string]any{"x402Version": 2, "accepted": accepted, "payload": evmPayload(a)})
	return base64.StdEncoding.EncodeToString(b)
}

// EVMPayloadV1 is the X-PAYMENT value of an x402 v1 EVM payment.
func EVMPayloadV1(network string, a Authorization) string {
	b, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": network, "payload": evmPayload(a)})
	return base64.StdEncoding.EncodeToString(b)
}

// Address is a made-up Solana address for a label (32 bytes, no key behind it).
func Address(label string) string {
	sum := sha512.Sum512([]byte("facilitatortest:" + label))
	return base58.Encode(sum[:32])
}

// Transfer is what a test transaction pays.
type Transfer struct {
	Payer    string // the token authority (the buyer's wallet)
	FeePayer string
	Mint     string
	To       string // destination token account
	Amount   uint64
	Memo     string // "" for none
}

// Transaction builds the standard base64 wire bytes of a v0 transaction of
// the shape a Solana exact client builds: compute limit, compute price,
// TransferChecked, optional memo. Signatures are random bytes (the fee
// payer's slot is empty): nothing here is valid on any chain.
func Transaction(t Transfer) string {
	keys := [][]byte{key(t.FeePayer), key(t.Payer), key(Address("source:" + t.Payer)), key(t.To),
		key(t.Mint), key(TokenProgram), key(ComputeBudgetProgram), key(MemoProgram)}
	var b []byte
	b = append(b, 2)                   // two signatures
	b = append(b, make([]byte, 64)...) // the fee payer signs at settlement
	sig := make([]byte, 64)
	rand.Read(sig)
	b = append(b, sig...)
	b = append(b, 0x80, 2, 0, 4) // v0; 2 signers, 0 read-only signed, 4 read-only unsigned
	b = append(b, byte(len(keys)))
	for _, k := range keys {
		b = append(b, k...)
	}
	blockhash := make([]byte, 32)
	rand.Read(blockhash)
	b = append(b, blockhash...)
	type ins struct {
		program  byte
		accounts []byte
		data     []byte
	}
	limit := binary.LittleEndian.AppendUint32([]byte{2}, 20000)
	price := binary.LittleEndian.AppendUint64([]byte{3}, 1)
	transfer := append(binary.LittleEndian.AppendUint64([]byte{12}, t.Amount), 6)
	list := []ins{{6, nil, limit}, {6, nil, price}, {5, []byte{2, 4, 3, 1}, transfer}}
	if t.Memo != "" {
		list = append(list, ins{7, nil, []byte(t.Memo)})
	}
	b = append(b, byte(len(list)))
	for _, i := range list {
		b = append(b, i.program, byte(len(i.accounts)))
		b = append(b, i.accounts...)
		b = append(b, byte(len(i.data))) // every test instruction is under 128 bytes
		b = append(b, i.data...)
	}
	b = append(b, 0) // no address lookup tables
	return base64.StdEncoding.EncodeToString(b)
}

func key(addr string) []byte {
	k, err := base58.Decode(addr)
	if err != nil || len(k) != 32 {
		panic("facilitatortest: not a Solana address: " + addr)
	}
	return k
}

// PayloadV2 is the PAYMENT-SIGNATURE value of an x402 v2 payment: accepted
// (the requirements the client chose, as decoded JSON) and the transaction.
func PayloadV2(accepted any, tx string) string {
	b, _ := json.Marshal(map[string]any{
		"x402Version": 2,
		"accepted":    accepted,
		"payload":     map[string]string{"transaction": tx},
	})
	return base64.StdEncoding.EncodeToString(b)
}

// PayloadV1 is the X-PAYMENT value of an x402 v1 payment.
func PayloadV1(network, tx string) string {
	b, _ := json.Marshal(map[string]any{
		"x402Version": 1,
		"scheme":      "exact",
		"network":     network,
		"payload":     map[string]string{"transaction": tx},
	})
	return base64.StdEncoding.EncodeToString(b)
}
