package format

import (
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/ops"
)

// The findings of lint --mcp about the MCP transport itself, beside the
// x402-lint/v1 findings of each PaymentRequired (specs/transports-v2/mcp.md,
// "Tool-Result Binding"). They are not rules of x402-lint/v1.
const (
	MCPRuleStructuredMissing = "mcp/structured_content_missing"
	MCPRuleTextMissing       = "mcp/text_content_missing"
	MCPRuleContentDiffers    = "mcp/content_differs"
	MCPRuleCallFailed        = "mcp/call_failed"
)

var mcpRuleText = map[string]string{
	MCPRuleStructuredMissing: "The tool result carries no PaymentRequired in structuredContent, which the x402 MCP transport requires.",
	MCPRuleTextMissing:       "The tool result carries no PaymentRequired JSON in content[0].text, which the x402 MCP transport requires.",
	MCPRuleContentDiffers:    "The tool result's structuredContent and content[0].text carry different PaymentRequired objects.",
	MCPRuleCallFailed:        "The unpaid tool call failed (with empty arguments), so no payment requirement could be read.",
}

// MCPToolURL is the endpoint of one tool of an MCP server: the server's
// URL, #, the tool's label (what SARIF, suppressions and baselines name).
func MCPToolURL(server string, t ops.MCPTool) string { return server + "#" + t.Label() }

// FromMCPLint maps a lint --mcp report: one result per tool, a paid tool's
// findings those of its PaymentRequired (x402-lint/v1) and of its binding;
// a session that failed is one problem result for the server.
func FromMCPLint(r ops.MCPLintReport) []Result {
	var out []Result
	if r.Problem != "" {
		out = append(out, Problem(ops.OpLint, r.URL, r.Problem))
	}
	for _, t := range r.Tools {
		url := MCPToolURL(r.URL, t)
		switch t.Outcome {
		case ops.MCPPaymentRequired:
			conforms := t.Conforms != nil && *t.Conforms
			res := FromLint(url, lint.Result{Entries: t.Entries, Findings: t.Findings, Conforms: conforms}, LintRules())
			res.Outcome = t.Outcome + ", " + res.Outcome
			if b := t.Binding; b != nil {
				var fs []Finding
				add := func(bad bool, rule string) {
					if bad {
						fs = append(fs, Finding{Rule: rule, Level: LevelError, Field: "mcp:result", Leg: string(lint.LegMCP), Message: mcpRuleText[rule]})
					}
				}
				add(!b.StructuredContent, MCPRuleStructuredMissing)
				add(!b.TextContent, MCPRuleTextMissing)
				add(b.StructuredContent && b.TextContent && !b.Identical, MCPRuleContentDiffers)
				res.Cases = append(res.Cases, Case{Name: "mcp_binding", Findings: fs})
			}
			out = append(out, res)
		case ops.MCPCallFailed:
			out = append(out, Result{Op: ops.OpLint, URL: url, Outcome: t.Outcome, Cases: []Case{{Name: "mcp_call", Findings: []Finding{{
				Rule: MCPRuleCallFailed, Level: LevelNote, Field: "call", Message: mcpRuleText[MCPRuleCallFailed]}}}}})
		default:
			out = append(out, Result{Op: ops.OpLint, URL: url, Outcome: t.Outcome})
		}
	}
	return out
}
