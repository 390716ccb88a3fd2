package gate

import (
	"encoding/json"
	"strconv"
)

// Bazaar is what the bazaar discovery extension of x402 v2 says about one
// paid route (x402-foundation/x402 specs/extensions/bazaar.md, "Example: POST
// Endpoint" and "Body Methods"): the route takes a JSON body by POST, an
// example of that body and of the answer, and a JSON Schema (draft 2020-12,
// same-document references only) that the info validates against.
// Directories that catalogue x402 services skip a challenge without it.
type Bazaar struct {
	// Body is an example request body; BodySchema its JSON Schema.
	Body       any
	BodySchema json.RawMessage
	// Output is an example answer; OutputSchema its JSON Schema.
	Output       any
	OutputSchema json.RawMessage
}

// The bazaar extension's wire shape: {info, schema}.
type (
	v2Extensions struct {
		Bazaar bazaarExtension `json:"bazaar"`
	}
	bazaarExtension struct {
		Info   bazaarInfo `json:"info"`
		Schema any        `json:"schema"`
	}
	bazaarInfo struct {
		Input  bazaarInput  `json:"input"`
		Output bazaarOutput `json:"output"`
	}
	bazaarInput struct {
		Type     string `json:"type"`
		Method   string `json:"method"`
		BodyType string `json:"bodyType"`
		Body     any    `json:"body"`
	}
	bazaarOutput struct {
		Type    string `json:"type"`
		Example any    `json:"example"`
	}
)

// BazaarSchemaDialect is the JSON Schema dialect the extension requires.
const BazaarSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

func (b *Bazaar) extensions() *v2Extensions {
	if b == nil {
		return nil
	}
	return &v2Extensions{Bazaar: bazaarExtension{
		Info: bazaarInfo{
			Input:  bazaarInput{Type: "http", Method: "POST", BodyType: "json", Body: b.Body},
			Output: bazaarOutput{Type: "json", Example: b.Output},
		},
		Schema: b.schema(),
	}}
}

// schema is the JSON Schema of info: input is exactly a JSON POST with a body
// of BodySchema; output is JSON with an example of OutputSchema.
func (b *Bazaar) schema() map[string]any {
	str := func(enum ...string) map[string]any {
		m := map[string]any{"type": "string"}
		if len(enum) == 1 {
			m["const"] = enum[0]
		} else if len(enum) > 1 {
			m["enum"] = enum
		}
		return m
	}
	return map[string]any{
		"$schema": BazaarSchemaDialect,
		"type":    "object",
		"properties": map[string]any{
			"input": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"type":     str("http"),
					"method":   str("POST"),
					"bodyType": str("json"),
					"body":     b.BodySchema,
				},
				"required":             []string{"type", "method", "bodyType", "body"},
				"additionalProperties": false,
			},
			"output": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"type":    str(),
					"example": b.OutputSchema,
				},
				"required": []string{"type"},
			},
		},
		"required": []string{"input"},
	}
}

// Requirement is an offer's x402 v2 payment requirement as a discovery
// document lists it: advisory, and without a memo (each live 402 carries a
// fresh one, and the live 402 is authoritative).
type Requirement struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
	Extra             any    `json:"extra"` // RequirementExtra, or the EVM entry's domain
}

// RequirementExtra is the extra of an advisory requirement.
type RequirementExtra struct {
	UsdcTokenAccount string `json:"usdc_token_account"`
	FeePayer         string `json:"feePayer,omitempty"`
}

// Requirement is the advisory requirement of offer o under these terms: the
// same fields as the header leg of its challenge, less the memo.
func (t Terms) Requirement(o Offer) Requirement {
	return Requirement{
		Scheme: "exact", Network: t.Network.CAIP2, Amount: strconv.FormatUint(o.Price, 10), Asset: t.Network.Mint,
		PayTo: t.PayTo, MaxTimeoutSeconds: t.MaxTimeoutSeconds,
		Extra: RequirementExtra{UsdcTokenAccount: t.TokenAccount, FeePayer: t.FeePayer},
	}
}

// Requirements are the advisory requirements of offer o, one per entry of
// its challenge: Solana first, then the EVM entry when it is offered (its
// extra the token's EIP-712 domain and transfer method, no memo).
func (t Terms) Requirements(o Offer) []Requirement {
	out := []Requirement{t.Requirement(o)}
	if e := t.EVM; e != nil {
		out = append(out, Requirement{
			Scheme: "exact", Network: e.Network.CAIP2, Amount: strconv.FormatUint(o.Price, 10), Asset: e.Network.USDC,
			PayTo: e.PayTo, MaxTimeoutSeconds: t.MaxTimeoutSeconds,
			Extra: evmDomain{Name: e.Network.TokenName, Version: e.Network.TokenVersion, AssetTransferMethod: TransferMethodEIP3009},
		})
	}
	return out
}

// evmDomain is the memo-less extra of an advisory EVM requirement.
type evmDomain struct {
	Name                string `json:"name"`
	Version             string `json:"version"`
	AssetTransferMethod string `json:"assetTransferMethod"`
}
