package facilitator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/exchangerebel/payability/internal/gate"
)

// maxPayloadBytes bounds a decoded payment payload: a Solana transaction is
// at most 1,232 bytes, so 16 KiB of JSON is far more than any honest one.
const maxPayloadBytes = 16 << 10

// presented is a payment payload read from a request, before any
// facilitator call.
type presented struct {
	version int
	raw     json.RawMessage // the decoded payload JSON, forwarded as is
	// key names one settlement: the op of the route and the SHA-256 of raw.
	// The op is part of it because what a payload was verified and settled
	// against is the route's requirements: a v1 payload names no amount, so
	// the same payload presented to a dearer route must be verified afresh
	// against that route's price, never share or resume a cheaper route's
	// settlement.
	key string
	// hash is the hex SHA-256 of raw: the payload's key in the store's
	// settlement record (the payload itself is never stored).
	hash string
	memo string // v2: accepted.extra.memo when the client echoed one
	tx   wireTx
}

// decodeHeader reads standard base64 (padded, or unpadded as some clients
// send it) of a JSON object.
func decodeHeader(v string) ([]byte, bool) {
	if len(v) > base64.StdEncoding.EncodedLen(maxPayloadBytes) {
		return nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return nil, false
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, false
	}
	return raw, true
}

// read finds the one payment payload of a request: PAYMENT-SIGNATURE
// (x402 v2) or X-PAYMENT (x402 v1). Two of them is ambiguous, so refused.
func read(h http.Header) (version int, raw []byte, code gate.Code) {
	v2, v1 := h.Values(HeaderPaymentSignature), h.Values(HeaderXPayment)
	switch {
	case len(v2)+len(v1) != 1:
		return 0, nil, gate.CodePayloadMalformed
	case len(v2) == 1:
		version = 2
		raw, ok := decodeHeader(v2[0])
		if !ok {
			return 0, nil, gate.CodePayloadMalformed
		}
		return version, raw, ""
	default:
		raw, ok := decodeHeader(v1[0])
		if !ok {
			return 0, nil, gate.CodePayloadMalformed
		}
		return 1, raw, ""
	}
}

// parse reads the payment of r and matches its terms against ours for
// offer: scheme exact, our network, our USDC mint, the price and our payee.
// Nothing of the request's terms is ever used to pay: the requirements we
// forward are built from terms and offer alone.
func parse(h http.Header, terms gate.Terms, offer gate.Offer) (presented, gate.Code) {
	version, raw, code := read(h)
	if code != "" {
		return presented{}, code
	}
	p := presented{version: version, raw: raw}
	sum := sha256.Sum256(raw)
	p.hash = hex.EncodeToString(sum[:])
	p.key = offer.Op + ":" + p.hash
	var scheme json.RawMessage
	switch version {
	case 2:
		var v payloadV2
		if json.Unmarshal(raw, &v) != nil || v.X402Version != 2 {
			return presented{}, gate.CodePayloadMalformed
		}
		// A v2 payload names the requirements it pays in accepted; one
		// without (the rail-probe's facilitator probe) matches nothing.
		if v.Accepted == nil {
			return presented{}, gate.CodeNoMatchingTerms
		}
		a := v.Accepted
		if a.Scheme != SchemeExact || a.Network != terms.Network.CAIP2 || a.Asset != terms.Network.Mint ||
			a.Amount != strconv.FormatUint(offer.Price, 10) || a.PayTo != terms.PayTo {
			return presented{}, gate.CodeNoMatchingTerms
		}
		memo, ok := echoedMemo(a.Extra)
		if !ok {
			return presented{}, gate.CodePayloadMalformed
		}
		p.memo, scheme = memo, v.Payload
	default:
		var v payloadV1
		if json.Unmarshal(raw, &v) != nil || v.X402Version != 1 {
			return presented{}, gate.CodePayloadMalformed
		}
		if v.Scheme != SchemeExact || v.Network != terms.Network.Name {
			return presented{}, gate.CodeNoMatchingTerms
		}
		scheme = v.Payload
	}
	var svm exactSVMPayload
	if json.Unmarshal(scheme, &svm) != nil || svm.Transaction == "" {
		return presented{}, gate.CodePayloadMalformed
	}
	tx, err := decodeTx(svm.Transaction)
	if err != nil {
		return presented{}, gate.CodePayloadMalformed
	}
	p.tx = tx
	return p, ""
}

// echoedMemo reads extra.memo of the accepted requirements: "" when there
// is none; not ok when extra or memo has the wrong JSON type.
func echoedMemo(extra json.RawMessage) (string, bool) {
	if len(extra) == 0 || string(extra) == "null" {
		return "", true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(extra, &m) != nil {
		return "", false
	}
	v, ok := m["memo"]
	if !ok || string(v) == "null" {
		return "", true
	}
	var memo string
	if json.Unmarshal(v, &memo) != nil {
		return "", false
	}
	return memo, true
}

// extraV2 is the extra of the requirements we forward for a v2 payment:
// the facilitator's fee payer, and the memo the client echoed (the v2
// facilitator then checks the transaction's memo equals it).
type extraV2 struct {
	FeePayer         string `json:"feePayer"`
	Memo             string `json:"memo,omitempty"`
	UsdcTokenAccount string `json:"usdc_token_account,omitempty"`
}

// extraV1 is the extra of the requirements we forward for a v1 payment:
// the fee payer only. The v1 client builds no memo instruction, so the
// payment is bound by the settled transaction, recorded once.
type extraV1 struct {
	FeePayer string `json:"feePayer"`
}

// requirements builds OUR copy of the requirements for a payment of
// version, for offer at resource: from terms and offer alone.
func requirements(version int, terms gate.Terms, offer gate.Offer, resource, memo string) json.RawMessage {
	amount := strconv.FormatUint(offer.Price, 10)
	if version == 1 {
		extra, _ := json.Marshal(extraV1{FeePayer: terms.FeePayer})
		b, _ := json.Marshal(RequirementsV1{
			Scheme: SchemeExact, Network: terms.Network.Name, MaxAmountRequired: amount,
			Resource: resource, Description: offer.Description, MimeType: "application/json",
			PayTo: terms.PayTo, MaxTimeoutSeconds: terms.MaxTimeoutSeconds, Asset: terms.Network.Mint, Extra: extra,
		})
		return b
	}
	extra, _ := json.Marshal(extraV2{FeePayer: terms.FeePayer, Memo: memo, UsdcTokenAccount: terms.TokenAccount})
	b, _ := json.Marshal(RequirementsV2{
		Scheme: SchemeExact, Network: terms.Network.CAIP2, Asset: terms.Network.Mint, Amount: amount,
		PayTo: terms.PayTo, MaxTimeoutSeconds: terms.MaxTimeoutSeconds, Extra: extra,
	})
	return b
}

// networkOf is our network's name in an x402 version.
func networkOf(version int, n gate.Network) string {
	if version == 1 {
		return n.Name
	}
	return n.CAIP2
}
