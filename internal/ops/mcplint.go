package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/target"
)

// Limits of lint --mcp.
const (
	// MaxMCPTools is the most tools listed and called; past it the report
	// says it was truncated.
	MaxMCPTools = 64
	// MCPTimeout bounds the whole session: connect, list, every call.
	MCPTimeout = 60 * time.Second
	// MCPBodyCap bounds each HTTP response body of the session.
	MCPBodyCap = 1 << 20
)

// Outcomes of one MCP tool.
const (
	// MCPPaymentRequired: the unpaid call answered with an x402
	// PaymentRequired (the tool-result binding), which was linted.
	MCPPaymentRequired = "payment_required"
	// MCPNoPayment: the call answered without a payment requirement (a
	// free tool, or one that refused the empty arguments first).
	MCPNoPayment = "no_payment_required"
	// MCPCallFailed: the call failed (a JSON-RPC error, the transport, the
	// session's time).
	MCPCallFailed = "call_failed"
)

// MCP session problems (a report with no tools).
const (
	MCPConnectFailed = "connect_failed"
	MCPListFailed    = "list_failed"
)

// MCPBinding is what the tool result carried, per the tool-result binding
// (specs/transports-v2/mcp.md, "Server Requirements"): the PaymentRequired
// in structuredContent, its JSON in content[0].text, and whether the two
// are the same object.
type MCPBinding struct {
	StructuredContent bool `json:"structured_content"`
	TextContent       bool `json:"text_content"`
	Identical         bool `json:"identical"`
}

// MCPTool is one tool's result. Name is the tool's name when it is an
// identifier (the MCP spec's tool-name characters, 1 to 128 of
// A-Z a-z 0-9 _ - .), else "" (custody: no other seller text).
type MCPTool struct {
	Index    int                 `json:"index"`
	Name     string              `json:"name"`
	Outcome  string              `json:"outcome"`
	Binding  *MCPBinding         `json:"binding,omitempty"`
	Entries  []lint.EntrySummary `json:"entries,omitempty"`
	Findings []lint.Finding      `json:"findings,omitempty"`
	Conforms *bool               `json:"conforms,omitempty"`
}

// MCPLintReport is lint --mcp's report: every tool listed (at most
// MaxMCPTools), each called once without payment.
type MCPLintReport struct {
	Op        string    `json:"op"`
	Mode      string    `json:"mode"`
	Rules     LintRules `json:"rules"`
	URL       string    `json:"url"`
	Problem   string    `json:"problem,omitempty"`
	Tools     []MCPTool `json:"tools"`
	Truncated bool      `json:"truncated"`
	CheckedAt string    `json:"checked_at"`
}

// isToolName reports whether s is 1 to 128 of the MCP spec's tool-name
// characters (A-Z a-z 0-9 _ - .).
func isToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Label names tool i of a report: its name, or tool[i].
func (t MCPTool) Label() string {
	if t.Name != "" {
		return t.Name
	}
	return "tool[" + strconv.Itoa(t.Index) + "]"
}

// LintMCP lints the paid tools of the MCP server at url (streamable HTTP):
// it lists the tools and calls each once with empty arguments and no
// payment (never _meta["x402/payment"]), then lints every PaymentRequired
// a tool answered with (lint.LintMCP). hc is the guarded HTTP client
// (target.Client.StreamClient). The only error is a URL-policy refusal;
// a server that fails is a report with a problem.
func (r Runner) LintMCP(ctx context.Context, url string, hc *http.Client) (MCPLintReport, error) {
	if err := target.CheckURL(url); err != nil {
		return MCPLintReport{}, err
	}
	rep := MCPLintReport{Op: OpLint, Mode: "mcp", Rules: LintRulesRef(), URL: url, Tools: []MCPTool{}}
	ctx, cancel := context.WithTimeout(ctx, MCPTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "payability", Version: buildinfo.Version}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		rep.Problem = MCPConnectFailed
		rep.CheckedAt = criteria.Timestamp(r.now())
		return rep, nil
	}
	defer cs.Close()
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			rep.Problem = MCPListFailed
			break
		}
		if len(tools) == MaxMCPTools {
			rep.Truncated = true
			break
		}
		tools = append(tools, t)
	}
	type called struct {
		res *sdk.CallToolResult
		err error
	}
	calls := make([]called, len(tools))
	for i, t := range tools {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: t.Name, Arguments: map[string]any{}})
		calls[i] = called{res, err}
	}
	// The check-end time is read after every call, before grading.
	end := r.now()
	for i, t := range tools {
		mt := MCPTool{Index: i, Outcome: MCPCallFailed}
		if isToolName(t.Name) {
			mt.Name = t.Name
		}
		if c := calls[i]; c.err == nil {
			doc, binding, ok := PaymentRequiredOf(c.res)
			switch {
			case ok:
				res := lint.LintMCP(doc, end)
				conforms := res.Conforms
				mt.Outcome, mt.Binding, mt.Entries, mt.Findings, mt.Conforms = MCPPaymentRequired, &binding, res.Entries, res.Findings, &conforms
			default:
				mt.Outcome = MCPNoPayment
			}
		}
		rep.Tools = append(rep.Tools, mt)
	}
	rep.CheckedAt = criteria.Timestamp(end)
	return rep, nil
}

// PaymentRequiredOf finds the PaymentRequired of a tool result (the
// tool-result binding): a result with isError whose structuredContent, or
// else whose content[0].text as JSON, is an object with x402Version and
// accepts. It returns the object's JSON and what the result carried.
func PaymentRequiredOf(res *sdk.CallToolResult) ([]byte, MCPBinding, bool) {
	var b MCPBinding
	if res == nil || !res.IsError {
		return nil, b, false
	}
	var structured, text map[string]any
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err == nil && json.Unmarshal(raw, &structured) == nil && isPaymentRequired(structured) {
			b.StructuredContent = true
		}
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok && json.Unmarshal([]byte(tc.Text), &text) == nil && isPaymentRequired(text) {
			b.TextContent = true
		}
	}
	b.Identical = b.StructuredContent && b.TextContent && reflect.DeepEqual(structured, text)
	doc := structured
	if !b.StructuredContent {
		doc = text
	}
	if !b.StructuredContent && !b.TextContent {
		return nil, b, false
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, b, false
	}
	return raw, b, true
}

func isPaymentRequired(m map[string]any) bool {
	_, v := m["x402Version"]
	_, a := m["accepts"]
	return v && a
}
