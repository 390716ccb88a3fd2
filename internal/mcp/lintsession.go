package mcp

import (
	"context"
	"encoding/json"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/ops"
)

// LintSession is ops.MCPSession over the MCP SDK's client and its
// streamable HTTP transport (no standalone SSE stream, no retries): lint
// --mcp's one way of talking to a seller's MCP server. ops grades what it
// returns; this package is the only one of lint's that links the SDK, so
// the commands that do not serve or lint MCP start without it.
func LintSession(ctx context.Context, url string, hc *http.Client, max int) ([]ops.MCPCall, string, bool) {
	client := sdk.NewClient(&sdk.Implementation{Name: "payability", Version: buildinfo.Version}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return nil, ops.MCPConnectFailed, false
	}
	defer cs.Close()
	var (
		tools     []*sdk.Tool
		problem   string
		truncated bool
	)
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			problem = ops.MCPListFailed
			break
		}
		if len(tools) == max {
			truncated = true
			break
		}
		tools = append(tools, t)
	}
	calls := make([]ops.MCPCall, len(tools))
	for i, t := range tools {
		calls[i].Name = t.Name
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: t.Name, Arguments: map[string]any{}})
		if err != nil || res == nil {
			calls[i].Failed = err != nil
			continue
		}
		calls[i].IsError = res.IsError
		if res.StructuredContent != nil {
			if raw, err := json.Marshal(res.StructuredContent); err == nil {
				calls[i].Structured = raw
			}
		}
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				text := tc.Text
				calls[i].Text = &text
			}
		}
	}
	return calls, problem, truncated
}
