package preflight

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Probe ids, in the published order.
const (
	ProbeP1    = "p1_structural"
	ProbeP2    = "p2_bogus"
	ProbeHead  = "head"
	ProbeOther = "other"
)

// The payment headers of the two dialects.
const (
	HeaderV2 = "PAYMENT-SIGNATURE"
	HeaderV1 = "X-PAYMENT"
)

// The published invalid payment material (the no-funds property). Changing
// one is a new revision of the document.
const (
	// BogusPayment is P2's header value: not a payment at all.
	BogusPayment = "bogus-not-a-payment-header"
	// SolanaProbeTransaction is the ASCII text whose base64 fills the Solana
	// transaction slot: no serialized transaction.
	SolanaProbeTransaction = "PROBE-INVALID-NOT-A-TRANSACTION"
)

var (
	zeroSignature = "0x" + strings.Repeat("0", 130)
	zeroAddress   = "0x" + strings.Repeat("0", 40)
	zeroNonce     = "0x" + strings.Repeat("0", 64)
)

// Probe is one request of the preflight after the two unpaid fetches. Method
// is the request method; Header and Body are exactly what is sent.
type Probe struct {
	ID     string
	Method string
	Header map[string]string
	Body   []byte
}

// Family is a network family P1 can build a payload for.
type Family string

const (
	FamilySolana Family = "solana"
	FamilyEVM    Family = "evm"
)

// familyOf is the probe family of an entry: scheme exact on a solana or
// eip155 CAIP-2 network; "" for anything P1 is not sent to.
func familyOf(e *Entry) Family {
	if e == nil || e.Scheme != "exact" {
		return ""
	}
	switch {
	case strings.HasPrefix(e.CAIP2, "solana:"):
		return FamilySolana
	case strings.HasPrefix(e.CAIP2, "eip155:"):
		return FamilyEVM
	}
	return ""
}

// Probed reports whether P1 is sent for the selected entry.
func (s Selection) Probed() bool { return familyOf(s.Selected) != "" }

// Other is the other of GET and POST.
func Other(method string) string {
	if method == http.MethodPost {
		return http.MethodGet
	}
	return http.MethodPost
}

// Probes returns the requests the preflight sends after a 402 on method, in
// the published order: P1 (only when the selected entry can be probed), P2,
// HEAD and the other method. body is what every POST carries.
func Probes(s Selection, method string, body []byte) []Probe {
	header := HeaderV1
	if s.Dialect == 2 {
		header = HeaderV2
	}
	withBody := func(p Probe) Probe {
		if p.Method == http.MethodPost {
			p.Header["Content-Type"] = "application/json"
			p.Body = bytes.Clone(body)
		}
		return p
	}
	var out []Probe
	if v, ok := P1Value(s); ok {
		out = append(out, withBody(Probe{ID: ProbeP1, Method: method, Header: map[string]string{header: v}}))
	}
	out = append(out,
		withBody(Probe{ID: ProbeP2, Method: method, Header: map[string]string{header: BogusPayment}}),
		Probe{ID: ProbeHead, Method: http.MethodHead, Header: map[string]string{}},
		withBody(Probe{ID: ProbeOther, Method: Other(method), Header: map[string]string{}}),
	)
	return out
}

// P1Value is P1's header value for the selected entry: standard base64 (with
// padding) of the published JSON. ok is false when P1 is not sent.
func P1Value(s Selection) (string, bool) {
	b, ok := P1JSON(s)
	if !ok {
		return "", false
	}
	return base64.StdEncoding.EncodeToString(b), true
}

// P1JSON is the JSON P1 carries, members in the published order.
func P1JSON(s Selection) ([]byte, bool) {
	e := s.Selected
	fam := familyOf(e)
	if fam == "" {
		return nil, false
	}
	payload := solanaPayload()
	if fam == FamilyEVM {
		payload = evmPayload(str(e.entry, "payTo"), e.amount())
	}
	var b bytes.Buffer
	if e.X402Version == 1 {
		b.WriteString(`{"x402Version":1,"scheme":`)
		b.Write(encode(e.Scheme))
		b.WriteString(`,"network":`)
		b.Write(encode(e.Network))
	} else {
		b.WriteString(`{"x402Version":2`)
		if e.hasResource {
			b.WriteString(`,"resource":`)
			b.Write(encode(e.resource))
		}
		b.WriteString(`,"accepted":`)
		b.Write(encode(e.entry))
	}
	b.WriteString(`,"payload":`)
	b.Write(payload)
	b.WriteString(`}`)
	return b.Bytes(), true
}

func solanaPayload() []byte {
	return []byte(`{"transaction":"` + base64.StdEncoding.EncodeToString([]byte(SolanaProbeTransaction)) + `"}`)
}

func evmPayload(payTo, amount string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"signature":"` + zeroSignature + `","authorization":{"from":"` + zeroAddress + `","to":`)
	b.Write(encode(payTo))
	b.WriteString(`,"value":`)
	b.Write(encode(amount))
	b.WriteString(`,"validAfter":"0","validBefore":"0","nonce":"` + zeroNonce + `"}}`)
	return b.Bytes()
}

// encode writes a decoded JSON value back: object members sorted by name,
// numbers as written (json.Number), no whitespace, no HTML escaping.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Decoded JSON values always re-encode; null keeps the shape.
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var identPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$`) }) // compiled on first use, not at start-up

// safeIdent passes a protocol identifier (scheme, network) into a record
// when it has the shape of one, and "" otherwise, so no fetched free text
// reaches a record.
func safeIdent(s string) string {
	if identPattern().MatchString(s) {
		return s
	}
	return ""
}

func encodeB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
