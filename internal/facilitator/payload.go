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
	// network is the CAIP-2 id of the network the payload pays on; evm is
	// true for the EVM entry's, which carries auth, else tx.
	network string
	evm     bool
	tx      wireTx
	auth    exactEVMAuthorization
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
// offer: scheme exact, one of our networks (our Solana cluster, or the Base
// network of the EVM entry when it is offered), its USDC, the price and our
// payee. Nothing of the request's terms is ever used to pay: the
// requirements we forward are built from terms and offer alone.
func parse(h http.Header, terms gate.Terms, offer gate.Offer) (presented, gate.Code) {
	version, raw, code := read(h)
	if code != "" {
		return presented{}, code
	}
	p := presented{version: version, raw: raw}
	sum := sha256.Sum256(raw)
	p.hash = hex.EncodeToString(sum[:])
	p.key = offer.Op + ":" + p.hash
	price := strconv.FormatUint(offer.Price, 10)
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
		switch {
		case a.Scheme != SchemeExact || a.Amount != price:
			return presented{}, gate.CodeNoMatchingTerms
		case a.Network == terms.Network.CAIP2:
			if a.Asset != terms.Network.Mint || a.PayTo != terms.PayTo {
				return presented{}, gate.CodeNoMatchingTerms
			}
		case terms.EVM != nil && a.Network == terms.EVM.Network.CAIP2:
			if !gate.SameEVMAddress(a.Asset, terms.EVM.Network.USDC) || !gate.SameEVMAddress(a.PayTo, terms.EVM.PayTo) {
				return presented{}, gate.CodeNoMatchingTerms
			}
			p.evm = true
		default:
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
		switch {
		case v.Scheme != SchemeExact:
			return presented{}, gate.CodeNoMatchingTerms
		case v.Network == terms.Network.Name:
		case terms.EVM != nil && v.Network == terms.EVM.Network.Name:
			p.evm = true
		default:
			return presented{}, gate.CodeNoMatchingTerms
		}
		scheme = v.Payload
	}
	if p.evm {
		p.network = terms.EVM.Network.CAIP2
		auth, code := parseEVM(scheme, terms.EVM.PayTo, price)
		if code != "" {
			return presented{}, code
		}
		p.auth = auth
		return p, ""
	}
	p.network = terms.Network.CAIP2
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

// maxEVMSignatureBytes bounds the signature of an EVM payload: 65 bytes
// for an externally owned account; a smart wallet's (ERC-1271, wrapped per
// ERC-6492) is longer, but never near this.
const maxEVMSignatureBytes = 4096

// parseEVM reads the exact EVM payload of the EIP-3009 method
// (scheme_exact_evm.md, section 1: signature and authorization) and matches
// the authorization against our terms: to our payee, of exactly the price.
// The signature, the payer's balance and the validity window are the
// facilitator's to verify; here only their form is checked, free.
func parseEVM(scheme json.RawMessage, payTo, price string) (exactEVMAuthorization, gate.Code) {
	var v exactEVMPayload
	if json.Unmarshal(scheme, &v) != nil || v.Authorization == nil {
		return exactEVMAuthorization{}, gate.CodePayloadMalformed
	}
	a := *v.Authorization
	switch {
	case !gate.ValidEVMHex(v.Signature, 65, maxEVMSignatureBytes), !gate.ValidEVMAddress(a.From),
		!gate.ValidEVMAddress(a.To), !gate.ValidEVMHex(a.Nonce, 32, 32), !decimal(a.Value):
		return exactEVMAuthorization{}, gate.CodePayloadMalformed
	case !gate.SameEVMAddress(a.To, payTo), a.Value != price:
		return exactEVMAuthorization{}, gate.CodeNoMatchingTerms
	}
	after, err1 := strconv.ParseUint(a.ValidAfter, 10, 64)
	before, err2 := strconv.ParseUint(a.ValidBefore, 10, 64)
	if err1 != nil || err2 != nil || !decimal(a.ValidAfter) || !decimal(a.ValidBefore) || before <= after {
		return exactEVMAuthorization{}, gate.CodePayloadMalformed
	}
	return a, ""
}

// decimal reports whether s is a canonical decimal integer: digits, no
// sign, no leading zero (but "0").
func decimal(s string) bool {
	if s == "" || len(s) > 78 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// extraEVM is the extra of the requirements we forward for an EVM payment:
// the token's EIP-712 domain, the transfer method, and the memo a v2 client
// echoed (not signed on EVM: it binds the payload to the route here).
type extraEVM struct {
	Name                string `json:"name"`
	Version             string `json:"version"`
	AssetTransferMethod string `json:"assetTransferMethod"`
	Memo                string `json:"memo,omitempty"`
}

// requirements builds OUR copy of the requirements the payment p pays, for
// offer at resource: from terms and offer alone (p says only which version
// and which of our networks).
func requirements(p presented, terms gate.Terms, offer gate.Offer, resource string) json.RawMessage {
	amount := strconv.FormatUint(offer.Price, 10)
	network, name, asset, payTo := terms.Network.CAIP2, terms.Network.Name, terms.Network.Mint, terms.PayTo
	var extra []byte
	switch {
	case p.evm:
		e := terms.EVM
		network, name, asset, payTo = e.Network.CAIP2, e.Network.Name, e.Network.USDC, e.PayTo
		x := extraEVM{Name: e.Network.TokenName, Version: e.Network.TokenVersion, AssetTransferMethod: gate.TransferMethodEIP3009}
		if p.version == 2 {
			x.Memo = p.memo
		}
		extra, _ = json.Marshal(x)
	case p.version == 1:
		extra, _ = json.Marshal(extraV1{FeePayer: terms.FeePayer})
	default:
		extra, _ = json.Marshal(extraV2{FeePayer: terms.FeePayer, Memo: p.memo, UsdcTokenAccount: terms.TokenAccount})
	}
	if p.version == 1 {
		b, _ := json.Marshal(RequirementsV1{
			Scheme: SchemeExact, Network: name, MaxAmountRequired: amount,
			Resource: resource, Description: offer.Description, MimeType: "application/json",
			PayTo: payTo, MaxTimeoutSeconds: terms.MaxTimeoutSeconds, Asset: asset, Extra: extra,
		})
		return b
	}
	b, _ := json.Marshal(RequirementsV2{
		Scheme: SchemeExact, Network: network, Asset: asset, Amount: amount,
		PayTo: payTo, MaxTimeoutSeconds: terms.MaxTimeoutSeconds, Extra: extra,
	})
	return b
}

// networkOf is the name of the network p pays on, in p's x402 version.
func networkOf(p presented, terms gate.Terms) string {
	switch {
	case p.version != 1:
		return p.network
	case p.evm:
		return terms.EVM.Network.Name
	}
	return terms.Network.Name
}
