package x402

import (
	"regexp"
	"sort"
)

// The reading the single-pass reader replaced: every document decoded into
// generic maps (DecodeJSON), then the criteria's places looked up. It is kept
// here as the oracle the reader is fuzzed and tested against
// (FuzzReaderMatchesReference), and as the baseline of BenchmarkReader.

var digits = regexp.MustCompile(`^[0-9]+$`)

func refStr(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func refAmount(m map[string]any, key string) string {
	s := refStr(m, key)
	if !digits.MatchString(s) {
		return ""
	}
	return s
}

func refAccepts0(root map[string]any) (map[string]any, bool) {
	arr, ok := root["accepts"].([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	first, ok := arr[0].(map[string]any)
	return first, ok
}

func refCensus(a0 map[string]any) []string {
	names := make([]string, 0, len(a0))
	seen := make(map[string]bool, len(a0))
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	for k := range a0 {
		add(k)
	}
	if extra, ok := a0["extra"].(map[string]any); ok {
		for k := range extra {
			add(k)
		}
	}
	sort.Strings(names)
	return names
}

func refParseBody(body []byte) (leg Leg, parseable bool) {
	v, ok := DecodeJSON(body)
	if !ok {
		return Leg{}, false
	}
	root, ok := v.(map[string]any)
	if !ok {
		return Leg{}, true
	}
	leg.Read = true
	a0, ok := refAccepts0(root)
	if !ok {
		leg.Census = []string{}
		leg.Memo = refStr(root, "memo")
		return leg, true
	}
	leg.HasAccepts0 = true
	leg.Census = refCensus(a0)
	extra, _ := a0["extra"].(map[string]any)
	leg.PayTo = refStr(a0, "payTo")
	leg.TokenAccount = refStr(extra, "usdc_token_account")
	leg.Memo = refStr(extra, "memo")
	if leg.Memo == "" {
		leg.Memo = refStr(root, "memo")
	}
	leg.Amount = refAmount(a0, "amount")
	leg.MaxAmountRequired = refAmount(a0, "maxAmountRequired")
	leg.Resource = refStr(a0, "resource")
	leg.Description = refStr(a0, "description")
	return leg, true
}

func refParseHeader(value string) (leg Leg, decodable bool) {
	v, ok := DecodeHeaderJSON(value)
	if !ok {
		return Leg{}, false
	}
	root, isObject := v.(map[string]any)
	if !isObject {
		return Leg{}, true
	}
	leg.Read = true
	a0, hasA0 := refAccepts0(root)
	if r, ok := root["resource"].(map[string]any); ok {
		leg.Resource = refStr(r, "url")
	}
	if !hasA0 {
		leg.Census = []string{}
		return leg, true
	}
	leg.HasAccepts0 = true
	leg.Census = refCensus(a0)
	extra, _ := a0["extra"].(map[string]any)
	leg.Memo = refStr(extra, "memo")
	leg.Amount = refAmount(a0, "amount")
	leg.PayTo = refStr(a0, "payTo")
	if r, ok := a0["resource"].(map[string]any); ok {
		leg.Resource2 = refStr(r, "url")
	}
	return leg, true
}

// refRejectionReason is the map-based rail-probe rule (3) body test.
func refRejectionReason(body []byte) (parseable, reason bool) {
	v, ok := DecodeJSON(body)
	if !ok {
		return false, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return true, false
	}
	for _, k := range [...]string{"error", "reason", "detail"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return true, true
		}
	}
	return true, false
}
