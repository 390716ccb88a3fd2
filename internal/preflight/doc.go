// Package preflight is the x402-preflight/v1 document and its rules: the
// selection of the entry an agent would pay, the exact bytes of the payment
// probes (each invalid by construction), the grades of their answers, the
// decision table (GO, HOLD, STOP with every reason) and terms_sha256.
//
// It is pure: captures and a lint result in, a Result out. Fetching lives in
// internal/ops; the Result carries reasons, grades, statuses and protocol
// identifiers only, never a fetched value (the terms hash is a digest).
package preflight

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"
)

//go:embed x402-preflight.v1.json
var docRaw []byte

// The document's identity.
const (
	DocumentID = "x402-preflight/v1"
	Revision   = "2"
	CorpusID   = "x402-preflight-corpus/v1"
)

// Raw returns a copy of the embedded document bytes (corpus.sha256 is a
// placeholder; the served form has the pin substituted, see corpus).
func Raw() []byte { return bytes.Clone(docRaw) }

// Doc is the part of the document the code reads back to check itself.
type Doc struct {
	DocumentID string `json:"document_id"`
	Revision   string `json:"revision"`
	Corpus     struct {
		ID string `json:"id"`
	} `json:"corpus"`
	Probes struct {
		PaymentHeader struct {
			V2 string `json:"v2"`
			V1 string `json:"v1"`
		} `json:"payment_header"`
		P1 struct {
			EVM struct {
				ValidAfterSkew int64 `json:"valid_after_skew_seconds"`
				MaxWindow      int64 `json:"max_window_seconds"`
				DefaultWindow  int64 `json:"default_window_seconds"`
			} `json:"exact_evm"`
			Solana struct {
				ComputeUnitLimit int    `json:"compute_unit_limit"`
				ComputeUnitPrice int    `json:"compute_unit_price_microlamports"`
				Decimals         int    `json:"decimals"`
				TokenProgram     string `json:"token_program"`
			} `json:"exact_solana"`
		} `json:"p1_structural"`
		P2 struct {
			Value string `json:"value"`
		} `json:"p2_bogus"`
		Order           []string `json:"order"`
		NoFundsProperty string   `json:"no_funds_property"`
	} `json:"probes"`
	Grades struct {
		Rules []struct {
			Grade string `json:"grade"`
		} `json:"rules"`
	} `json:"grades"`
	Decision struct {
		Stop []struct {
			Reason string `json:"reason"`
		} `json:"stop"`
		Hold []struct {
			Reason string `json:"reason"`
		} `json:"hold"`
		GoSentence string `json:"go_sentence"`
	} `json:"decision"`
}

// doc parses the embedded document on first use, not at start-up: a command
// that never preflights pays nothing for it.
var doc = sync.OnceValue(func() Doc {
	var d Doc
	if err := json.Unmarshal(docRaw, &d); err != nil {
		panic("preflight: embedded document does not parse: " + err.Error())
	}
	return d
})

// Document returns the parsed document.
func Document() Doc { return doc() }

// NoFundsProperty is the document's sentence on why no probe can move funds.
func NoFundsProperty() string { return doc().Probes.NoFundsProperty }
