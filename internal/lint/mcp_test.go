package lint

import (
	"strings"
	"testing"
	"time"
)

func TestLintMCPGradesThePaymentRequiredAsTheHeaderLeg(t *testing.T) {
	const entry = `{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}`
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, doc, want string
	}{
		// No Cache-Control or CORS finding: a tool result has no HTTP
		// response of its own; an mcp:// resource is a resource URL.
		{"the transport's example conforms", `{"x402Version":2,"resource":{"url":"mcp://tool/financial_analysis"},"accepts":[` + entry + `]}`, ""},
		{"an https resource is fine too", `{"x402Version":2,"resource":{"url":"https://api.example/tool"},"accepts":[` + entry + `]}`, ""},
		{"a resource that is no URL", `{"x402Version":2,"resource":{"url":"not a url"},"accepts":[` + entry + `]}`, "resource_url_invalid@mcp:resource.url"},
		{"a missing amount", `{"x402Version":2,"resource":{"url":"mcp://tool/x"},"accepts":[` + strings.Replace(entry, `"amount":"10000",`, "", 1) + `]}`, "amount_missing@mcp:accepts[0].amount"},
		// A v1 document (x402-mcp 0.0.5 sends one) is graded as v1.
		{"a v1 document is graded as v1", `{"x402Version":1,"accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10000","resource":"mcp://tool/x","mimeType":"application/json","description":"d","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":300,"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","extra":{"name":"USDC","version":"2"}}]}`, ""},
		{"a v1 entry's resource that is no URL", `{"x402Version":1,"accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10000","resource":"no url","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":300,"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","extra":{"name":"USDC","version":"2"}}]}`, "resource_url_invalid@mcp:accepts[0].resource"},
		{"version 3 is no version", `{"x402Version":3,"accepts":[` + entry + `]}`, "x402_version_invalid@mcp:x402Version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := LintMCP([]byte(tc.doc), now)
			var got []string
			for _, f := range res.Findings {
				if f.Severity != Info {
					got = append(got, f.Rule+"@"+string(f.Leg)+":"+f.Field)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("got %v, want %q", got, tc.want)
			}
			if res.Conforms != (tc.want == "") {
				t.Errorf("conforms %v", res.Conforms)
			}
			for _, e := range res.Entries {
				if e.Leg != LegMCP {
					t.Errorf("entry on leg %s", e.Leg)
				}
			}
		})
	}
}

// FuzzLintMCP: any bytes are graded without a panic, every finding a
// published rule on the mcp or http leg.
func FuzzLintMCP(f *testing.F) {
	f.Add([]byte(`{"x402Version":2,"resource":{"url":"mcp://tool/x"},"accepts":[{"scheme":"exact"}]}`))
	f.Add([]byte(`{"x402Version":1,"accepts":[{"resource":"mcp://tool/x"}]}`))
	f.Add([]byte(`{"x402Version":"1","resource":7,"accepts":{}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		res := LintMCP(doc, time.Unix(0, 0))
		for _, fd := range res.Findings {
			if fd.Leg != LegMCP && fd.Leg != LegHTTP {
				t.Fatalf("a finding on leg %s", fd.Leg)
			}
			if _, ok := ruleSetOnce().registry[fd.Rule]; !ok {
				t.Fatalf("unpublished rule %s", fd.Rule)
			}
		}
	})
}
