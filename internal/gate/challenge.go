package gate

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Network is the Solana cluster our challenges name.
type Network struct {
	Name  string // the x402 v1 network name, in the body
	CAIP2 string // the x402 v2 network id, in the header
	Mint  string // the USDC mint on that cluster
}

// The two clusters payability can sell on.
var (
	Mainnet = Network{Name: "solana", CAIP2: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", Mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}
	Devnet  = Network{Name: "solana-devnet", CAIP2: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Mint: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"}
)

// NetworkByName returns the cluster of a --network value.
func NetworkByName(name string) (Network, bool) {
	switch name {
	case Mainnet.Name, "mainnet", "solana-mainnet":
		return Mainnet, true
	case Devnet.Name, "devnet":
		return Devnet, true
	}
	return Network{}, false
}

// Terms are the payment terms of this deployment, the same for every route.
type Terms struct {
	Network           Network
	PayTo             string // the wallet that owns the token account
	TokenAccount      string // our USDC token account (the direct rail pays into it)
	MaxTimeoutSeconds int
	FeePayer          string // the facilitator's fee payer, when a facilitator is configured
	// EVM, when set (--evm-pay-to), adds an exact entry on a Base network
	// after the Solana one in every challenge: accepts[0] stays Solana, the
	// entry the seed services' criteria read.
	EVM *EVMTerms
}

// Offer is what one paid route sells.
type Offer struct {
	Op          string
	Price       uint64 // USDC units
	Description string
	// Bazaar is the bazaar discovery extension of the offer's v2 challenge
	// (specs/extensions/bazaar.md); nil leaves it out.
	Bazaar *Bazaar
}

// Wire structs of our challenge. Field order is the order on the wire.
type (
	v1Body struct {
		X402Version int             `json:"x402Version"`
		Accepts     []v1Requirement `json:"accepts"`
		Memo        string          `json:"memo"`
	}
	v1Requirement struct {
		Scheme            string `json:"scheme"`
		Network           string `json:"network"`
		Amount            string `json:"amount"`
		MaxAmountRequired string `json:"maxAmountRequired"`
		Asset             string `json:"asset"`
		PayTo             string `json:"payTo"`
		Resource          string `json:"resource"`
		Description       string `json:"description"`
		MimeType          string `json:"mimeType"`
		MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
		Extra             any    `json:"extra"` // extra or evmExtra
	}
	extra struct {
		UsdcTokenAccount string `json:"usdc_token_account"`
		Memo             string `json:"memo"`
		FeePayer         string `json:"feePayer,omitempty"`
	}
	v2Header struct {
		X402Version int             `json:"x402Version"`
		Resource    v2Resource      `json:"resource"`
		Accepts     []v2Requirement `json:"accepts"`
		Extensions  *v2Extensions   `json:"extensions,omitempty"`
	}
	v2Resource struct {
		URL         string `json:"url"`
		Description string `json:"description"`
		MimeType    string `json:"mimeType"`
	}
	v2Requirement struct {
		Scheme            string `json:"scheme"`
		Network           string `json:"network"`
		Amount            string `json:"amount"`
		Asset             string `json:"asset"`
		PayTo             string `json:"payTo"`
		MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
		Extra             any    `json:"extra"` // v2Extra or evmExtra
	}
	v2Extra struct {
		Memo             string `json:"memo"`
		UsdcTokenAccount string `json:"usdc_token_account"`
		FeePayer         string `json:"feePayer,omitempty"`
	}
	// evmExtra is the extra of the EVM entry: the token's EIP-712 domain
	// (scheme_exact_evm.md, section 1: extra.name and extra.version), the
	// transfer method we take, and the challenge memo. The memo is not
	// signed on EVM; a v2 client echoes it in accepted.extra, where the
	// rail checks it was issued for this op and URL, as on Solana.
	evmExtra struct {
		Name                string `json:"name"`
		Version             string `json:"version"`
		AssetTransferMethod string `json:"assetTransferMethod"`
		Memo                string `json:"memo"`
	}
)

const mimeJSON = "application/json"

// Challenge is one 402 challenge of ours: the v1 JSON body and the v2
// PAYMENT-REQUIRED header value (standard padded base64). A plain challenge
// carries no error, reason or detail: those appear only when a presented
// payment was evaluated and refused.
type Challenge struct {
	Body   []byte
	Header string
}

// Challenge builds the challenge of an offer for resource with memo.
func (t Terms) Challenge(o Offer, resource, memo string) Challenge {
	amount := strconv.FormatUint(o.Price, 10)
	v1 := []v1Requirement{{
		Scheme: "exact", Network: t.Network.Name, Amount: amount, MaxAmountRequired: amount,
		Asset: t.Network.Mint, PayTo: t.PayTo, Resource: resource, Description: o.Description,
		MimeType: mimeJSON, MaxTimeoutSeconds: t.MaxTimeoutSeconds,
		Extra: extra{UsdcTokenAccount: t.TokenAccount, Memo: memo, FeePayer: t.FeePayer},
	}}
	v2 := []v2Requirement{{
		Scheme: "exact", Network: t.Network.CAIP2, Amount: amount, Asset: t.Network.Mint,
		PayTo: t.PayTo, MaxTimeoutSeconds: t.MaxTimeoutSeconds,
		Extra: v2Extra{Memo: memo, UsdcTokenAccount: t.TokenAccount, FeePayer: t.FeePayer},
	}}
	if e := t.EVM; e != nil {
		ex := evmExtra{Name: e.Network.TokenName, Version: e.Network.TokenVersion, AssetTransferMethod: TransferMethodEIP3009, Memo: memo}
		v1 = append(v1, v1Requirement{
			Scheme: "exact", Network: e.Network.Name, Amount: amount, MaxAmountRequired: amount,
			Asset: e.Network.USDC, PayTo: e.PayTo, Resource: resource, Description: o.Description,
			MimeType: mimeJSON, MaxTimeoutSeconds: t.MaxTimeoutSeconds, Extra: ex,
		})
		v2 = append(v2, v2Requirement{
			Scheme: "exact", Network: e.Network.CAIP2, Amount: amount, Asset: e.Network.USDC,
			PayTo: e.PayTo, MaxTimeoutSeconds: t.MaxTimeoutSeconds, Extra: ex,
		})
	}
	body, _ := json.Marshal(v1Body{X402Version: 1, Accepts: v1, Memo: memo})
	header, _ := json.Marshal(v2Header{
		X402Version: 2,
		Resource:    v2Resource{URL: resource, Description: o.Description, MimeType: mimeJSON},
		Accepts:     v2,
		Extensions:  o.Bazaar.extensions(),
	})
	return Challenge{Body: body, Header: base64.StdEncoding.EncodeToString(header)}
}

// Refusal is a 402 body of an evaluated and refused payment: a closed code and
// its static sentence, beside the challenge to pay afresh.
type Refusal struct {
	Error  Code   `json:"error"`
	Detail string `json:"detail"`
}

// RefusalBody renders a refusal with our challenge body's fields merged in,
// so a client can pay afresh from the same answer.
func RefusalBody(code Code, c Challenge) []byte {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(c.Body, &m)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m["error"], _ = json.Marshal(code)
	m["detail"], _ = json.Marshal(code.Detail())
	b, _ := json.Marshal(m)
	return b
}
