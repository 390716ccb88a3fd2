package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"

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

// MCPCall is one tool as an MCP session listed and called it: its name,
// and the unpaid call's result, or Failed when the call itself failed (a
// JSON-RPC error, the transport, the session's time).
type MCPCall struct {
	Name   string
	Failed bool
	// IsError is the result's isError.
	IsError bool
	// Structured is the result's structuredContent as JSON (nil: none).
	Structured []byte
	// Text is content[0].text when content[0] is a text item (nil: none).
	Text *string
}

// MCPSession connects to the MCP server at url through hc, lists at most
// max tools and calls each once with empty arguments and no payment
// (never _meta["x402/payment"]). problem is MCPConnectFailed or
// MCPListFailed when the session failed; truncated says more than max
// tools were listed. internal/mcp holds the one implementation (over the
// MCP SDK's client); ops grades what it saw.
type MCPSession func(ctx context.Context, url string, hc *http.Client, max int) (calls []MCPCall, problem string, truncated bool)

// LintMCP lints the paid tools of the MCP server at url (streamable HTTP):
// session lists the tools and calls each once without payment, then every
// PaymentRequired a tool answered with is linted (lint.LintMCP). hc is the
// guarded HTTP client (target.Client.StreamClient). The only error is a
// URL-policy refusal; a server that fails is a report with a problem.
func (r Runner) LintMCP(ctx context.Context, url string, hc *http.Client, session MCPSession) (MCPLintReport, error) {
	if err := target.CheckURL(url); err != nil {
		return MCPLintReport{}, err
	}
	rep := MCPLintReport{Op: OpLint, Mode: "mcp", Rules: LintRulesRef(), URL: url, Tools: []MCPTool{}}
	ctx, cancel := context.WithTimeout(ctx, MCPTimeout)
	defer cancel()
	calls, problem, truncated := session(ctx, url, hc, MaxMCPTools)
	rep.Problem, rep.Truncated = problem, truncated
	// The check-end time is read after every call, before grading.
	end := r.now()
	if problem == MCPConnectFailed {
		rep.CheckedAt = criteria.Timestamp(end)
		return rep, nil
	}
	for i, c := range calls {
		mt := MCPTool{Index: i, Outcome: MCPCallFailed}
		if isToolName(c.Name) {
			mt.Name = c.Name
		}
		if !c.Failed {
			doc, binding, ok := PaymentRequiredOf(c)
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
func PaymentRequiredOf(c MCPCall) ([]byte, MCPBinding, bool) {
	var b MCPBinding
	if c.Failed || !c.IsError {
		return nil, b, false
	}
	var structured, text map[string]any
	if c.Structured != nil && json.Unmarshal(c.Structured, &structured) == nil && isPaymentRequired(structured) {
		b.StructuredContent = true
	}
	if c.Text != nil && json.Unmarshal([]byte(*c.Text), &text) == nil && isPaymentRequired(text) {
		b.TextContent = true
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
