package reliability

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/x402"
)

// Terms are the payment terms resolved locally from the endpoint's own 402
// challenge: what the agent's wallet would pay on Base. They never come from
// a CORTX record.
type Terms struct {
	ChainID int64    `json:"chain_id"`
	PayTo   string   `json:"pay_to"`
	Asset   string   `json:"asset"`
	Sources []string `json:"sources"` // "header", "body": the legs that named a Base entry
}

// Challenge fields, as named in findings.
const (
	FieldChallenge = "challenge"
	FieldPayTo     = "challenge.payTo"
	FieldAsset     = "challenge.asset"
)

// baseNetworks are the two spellings of Base mainnet in an accepts entry: the
// v1 name and the v2 CAIP-2 id.
var baseNetworks = map[string]bool{"base": true, "eip155:8453": true}

// ResolveTerms reads the payment terms on Base from a challenge capture: every
// accepts entry whose network is Base, in the decoded PAYMENT-REQUIRED header
// and in the JSON body. All of them must name the same payTo and the same
// asset (addresses compare case-insensitively); anything else fails closed.
func ResolveTerms(c capture.Capture) (Terms, []Finding) {
	fail := func(field string, code Code) (Terms, []Finding) {
		return Terms{}, []Finding{{Stage: StageChallenge, Field: field, Code: code}}
	}
	switch {
	case c.Outcome == capture.Timeout:
		return fail(FieldChallenge, CodeTimeout)
	case c.OverCapBody():
		return fail(FieldChallenge, CodeOverCap)
	case !c.Usable():
		return fail(FieldChallenge, CodeFetchFailed)
	case c.Status != http.StatusPaymentRequired:
		return fail(FieldChallenge, CodeNot402)
	}

	type entry struct{ payTo, asset string }
	var entries []entry
	var sources []string
	collect := func(source string, root map[string]any) {
		list, _ := root["accepts"].([]any)
		found := false
		for _, item := range list {
			e, ok := item.(map[string]any)
			if !ok {
				continue
			}
			if network, _ := e["network"].(string); !baseNetworks[network] {
				continue
			}
			payTo, _ := e["payTo"].(string)
			asset, _ := e["asset"].(string)
			entries = append(entries, entry{payTo, asset})
			found = true
		}
		if found {
			sources = append(sources, source)
		}
	}
	if v, ok := c.Header.Get(x402.HeaderName); ok {
		if root, ok := x402.DecodeHeaderValue(v); ok {
			collect("header", root)
		}
	}
	var body map[string]any
	if json.Unmarshal(c.Body, &body) == nil && body != nil {
		collect("body", body)
	}
	if len(entries) == 0 {
		return fail(FieldChallenge, CodeNoBaseAccepts)
	}

	var findings []Finding
	first := entries[0]
	for _, e := range entries {
		if !addressPattern().MatchString(e.payTo) {
			findings = appendOnce(findings, Finding{StageChallenge, FieldPayTo, CodeNotAddress})
		}
		if !addressPattern().MatchString(e.asset) {
			findings = appendOnce(findings, Finding{StageChallenge, FieldAsset, CodeNotAddress})
		}
	}
	if len(findings) > 0 {
		return Terms{}, findings
	}
	for _, e := range entries[1:] {
		if !strings.EqualFold(e.payTo, first.payTo) {
			findings = appendOnce(findings, Finding{StageChallenge, FieldPayTo, CodeAmbiguous})
		}
		if !strings.EqualFold(e.asset, first.asset) {
			findings = appendOnce(findings, Finding{StageChallenge, FieldAsset, CodeAmbiguous})
		}
	}
	if len(findings) > 0 {
		return Terms{}, findings
	}
	return Terms{ChainID: BaseChainID, PayTo: first.payTo, Asset: first.asset, Sources: sources}, nil
}

func appendOnce(fs []Finding, f Finding) []Finding {
	for _, g := range fs {
		if g == f {
			return fs
		}
	}
	return append(fs, f)
}
