package lint

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEVMDomainRule: the EIP-712 domain (extra.name, extra.version) is an
// error when missing with assetTransferMethod eip3009 and with none named
// (clients sign eip3009 by default, and the reference client throws before
// signing without it); permit2 and erc7710 need none; an unknown method is
// its own error. Both dialects.
func TestEVMDomainRule(t *testing.T) {
	const (
		name    = "evm_domain_required@%s:accepts[0].extra.name"
		version = "evm_domain_required@%s:accepts[0].extra.version"
	)
	rows := []struct {
		method any // nil: not named
		extra  map[string]any
		want   []string
	}{
		{nil, map[string]any{"name": "USD Coin", "version": "2"}, nil},
		{nil, map[string]any{}, []string{name, version}},
		{nil, map[string]any{"name": "USD Coin"}, []string{version}},
		{nil, map[string]any{"version": "2"}, []string{name}},
		{nil, map[string]any{"name": "", "version": "2"}, []string{name}},
		{nil, map[string]any{"name": json.Number("1"), "version": "2"}, []string{name}},
		{nil, nil, []string{name, version}}, // no extra at all
		{"eip3009", map[string]any{"name": "USD Coin", "version": "2"}, nil},
		{"eip3009", map[string]any{}, []string{name, version}},
		{"permit2", map[string]any{}, nil},
		{"erc7710", map[string]any{}, nil},
		{"transferFrom", map[string]any{}, []string{"evm_transfer_method_unknown@%s:accepts[0].extra.assetTransferMethod"}},
	}
	for _, r := range rows {
		for _, leg := range []string{"header", "body"} {
			e := entryEVM()
			switch {
			case r.extra == nil:
				delete(e, "extra")
			default:
				x := map[string]any{}
				for k, v := range r.extra {
					x[k] = v
				}
				if r.method != nil {
					x["assetTransferMethod"] = r.method
				}
				e["extra"] = x
			}
			c := resp(t, v2(e), nil)
			if leg == "body" {
				c = resp(t, nil, v1(e))
			}
			got := rules(Lint(Input{URL: called, Method: "GET", Capture: c, Now: now}))
			var want []string
			for _, w := range r.want {
				want = append(want, strings.Replace(w, "%s", leg, 1))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("method %v extra %v (%s): got %v, want %v", r.method, r.extra, leg, got, want)
			}
			for _, f := range Lint(Input{URL: called, Method: "GET", Capture: c, Now: now}).Findings {
				if f.Rule == ruleEVMDomainRequired && f.Severity != Error {
					t.Errorf("%s is %s, want error", f.Rule, f.Severity)
				}
			}
		}
	}
	if !strings.Contains(messages[ruleEVMDomainRequired], "permit2") {
		t.Error("the evm_domain_required message lost its permit2 note")
	}
}
