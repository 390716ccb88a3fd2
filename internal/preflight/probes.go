package preflight

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
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

// BogusPayment is P2's header value: not a payment at all. Changing it is a
// new revision of the document.
const BogusPayment = "bogus-not-a-payment-header"

// ProbeEnv is what P1 draws on: the check time (the EVM validity window) and
// a source of random bytes (every fresh value of the templates). ops passes
// the clock and crypto/rand; tests and the corpus pass fixed ones.
type ProbeEnv struct {
	Now  time.Time
	Rand io.Reader
}

// Probe is one request of the preflight after the two unpaid fetches. Method
// is the request method; Header and Body are exactly what is sent. Dialect is
// the x402 version of a payment probe's header (0 for the method matrix).
type Probe struct {
	ID      string
	Dialect int
	Method  string
	Header  map[string]string
	Body    []byte
}

// Family is a network family P1 can build a payload for.
type Family string

const (
	FamilySolana Family = "solana"
	FamilyEVM    Family = "evm"
)

// familyOf is the probe family of an entry: scheme exact on a solana or
// eip155 CAIP-2 network whose template can be filled from the entry; ""
// for anything P1 is not sent to.
func familyOf(e *Entry) Family {
	if e == nil || e.Scheme != "exact" {
		return ""
	}
	switch {
	case strings.HasPrefix(e.CAIP2, "solana:"):
		if _, ok := solanaTermsOf(e); ok {
			return FamilySolana
		}
	case strings.HasPrefix(e.CAIP2, "eip155:"):
		return FamilyEVM
	}
	return ""
}

// Probed reports whether P1 is sent for the selected entry.
func (s Selection) Probed() bool { return familyOf(s.Selected) != "" }

// HeaderOf is the payment header of a dialect.
func HeaderOf(dialect int) string {
	if dialect == 2 {
		return HeaderV2
	}
	return HeaderV1
}

// Other is the other of GET and POST.
func Other(method string) string {
	if method == http.MethodPost {
		return http.MethodGet
	}
	return http.MethodPost
}

// Probes returns the requests the preflight sends after a 402 on method, in
// the published order: for each dialect (the primary first) P1 (only when
// its entry can be probed) and P2, then HEAD and the other method. body is
// what every POST carries; env feeds P1's fresh values.
func Probes(s Selection, method string, body []byte, env ProbeEnv) []Probe {
	withBody := func(p Probe) Probe {
		if p.Method == http.MethodPost {
			p.Header["Content-Type"] = "application/json"
			p.Body = bytes.Clone(body)
		}
		return p
	}
	var out []Probe
	for _, leg := range s.Legs() {
		header := HeaderOf(leg.Dialect)
		if v, ok := P1Value(leg.Entry, env); ok {
			out = append(out, withBody(Probe{ID: ProbeP1, Dialect: leg.Dialect, Method: method, Header: map[string]string{header: v}}))
		}
		out = append(out, withBody(Probe{ID: ProbeP2, Dialect: leg.Dialect, Method: method, Header: map[string]string{header: BogusPayment}}))
	}
	out = append(out,
		Probe{ID: ProbeHead, Method: http.MethodHead, Header: map[string]string{}},
		withBody(Probe{ID: ProbeOther, Method: Other(method), Header: map[string]string{}}),
	)
	return out
}

// P1Value is P1's header value for an entry: standard base64 (with padding)
// of the published JSON. ok is false when P1 is not sent (no entry, a scheme
// or network without a template, or env.Rand ran dry).
func P1Value(e *Entry, env ProbeEnv) (string, bool) {
	b, ok := P1JSON(e, env)
	if !ok {
		return "", false
	}
	return base64.StdEncoding.EncodeToString(b), true
}

// P1JSON is the JSON P1 carries, members in the published order.
func P1JSON(e *Entry, env ProbeEnv) ([]byte, bool) {
	var payload []byte
	var ok bool
	switch familyOf(e) {
	case FamilySolana:
		payload, ok = solanaPayload(e, env)
	case FamilyEVM:
		payload, ok = evmPayload(e, env)
	}
	if !ok {
		return nil, false
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
