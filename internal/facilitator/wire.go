// Package facilitator is the facilitator back end of the payment gate: a
// client of the x402 facilitator API (GET /supported, POST /verify, POST
// /settle) and the rail that settles x402 v2 PAYMENT-SIGNATURE and v1
// X-PAYMENT payments against the requirements we built for the route.
//
// The wire types are our own, written from the x402 specification's field
// names; no x402 SDK is used (docs/dependencies.md).
package facilitator

import "encoding/json"

// Header names of the facilitator rail.
const (
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"  // x402 v2 payment payload
	HeaderXPayment         = "X-PAYMENT"          // x402 v1 payment payload
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"   // x402 v2 settle response
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE" // x402 v1 settle response
)

// SchemeExact is the only x402 scheme payability sells under.
const SchemeExact = "exact"

// RequirementsV2 is an x402 v2 PaymentRequirements object.
type RequirementsV2 struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	Asset             string          `json:"asset"`
	Amount            string          `json:"amount"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int             `json:"maxTimeoutSeconds"`
	Extra             json.RawMessage `json:"extra,omitempty"`
}

// RequirementsV1 is an x402 v1 PaymentRequirements object.
type RequirementsV1 struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	MaxAmountRequired string          `json:"maxAmountRequired"`
	Resource          string          `json:"resource"`
	Description       string          `json:"description"`
	MimeType          string          `json:"mimeType"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int             `json:"maxTimeoutSeconds"`
	Asset             string          `json:"asset"`
	Extra             json.RawMessage `json:"extra,omitempty"`
}

// payloadV2 is the part of an x402 v2 PaymentPayload the rail reads:
// x402Version, accepted (the requirements the client chose), payload (the
// scheme's own object) and the optional resource; extensions and any other
// field travel on untouched in the forwarded copy.
type payloadV2 struct {
	X402Version int             `json:"x402Version"`
	Accepted    *RequirementsV2 `json:"accepted"`
	Payload     json.RawMessage `json:"payload"`
	Resource    json.RawMessage `json:"resource,omitempty"`
}

// payloadV1 is an x402 v1 PaymentPayload: x402Version, scheme, network and
// the scheme's payload.
type payloadV1 struct {
	X402Version int             `json:"x402Version"`
	Scheme      string          `json:"scheme"`
	Network     string          `json:"network"`
	Payload     json.RawMessage `json:"payload"`
}

// exactSVMPayload is the payload of the exact scheme on Solana: a partially
// signed transaction, standard base64 of its wire bytes.
type exactSVMPayload struct {
	Transaction string `json:"transaction"`
}

// exactEVMPayload is the payload of the exact scheme on EVM with the
// EIP-3009 method (scheme_exact_evm.md, section 1): the signature of
// transferWithAuthorization and its parameters.
type exactEVMPayload struct {
	Signature     string                 `json:"signature"`
	Authorization *exactEVMAuthorization `json:"authorization"`
}

// exactEVMAuthorization is an EIP-3009 authorization; value and the
// validity window are decimal text, nonce 32 bytes of hex.
type exactEVMAuthorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// Request is the body of POST /verify and POST /settle.
type Request struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements"`
}

// VerifyResponse is the answer of POST /verify. IsValid is a pointer so an
// answer without it is told apart from one saying false.
type VerifyResponse struct {
	IsValid       *bool  `json:"isValid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	Payer         string `json:"payer,omitempty"`
}

// SettleResponse is the answer of POST /settle.
type SettleResponse struct {
	Success     *bool  `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
}

// Receipt is the settle response we answer a paid request with (base64 in
// PAYMENT-RESPONSE or X-PAYMENT-RESPONSE): re-encoded from the fields we
// checked, never the facilitator's bytes.
type Receipt struct {
	Success     bool   `json:"success"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Payer       string `json:"payer"`
}

// SupportedKind is one entry of GET /supported: a scheme on a network in
// one x402 version, with the scheme's extra (feePayer on Solana).
type SupportedKind struct {
	X402Version int             `json:"x402Version"`
	Scheme      string          `json:"scheme"`
	Network     string          `json:"network"`
	Extra       json.RawMessage `json:"extra,omitempty"`
}

// SupportedResponse is the answer of GET /supported.
type SupportedResponse struct {
	Kinds []SupportedKind `json:"kinds"`
}
