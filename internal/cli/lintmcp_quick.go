//go:build quick

package cli

import "context"

// runLintMCP, in the quick build, hands lint --mcp to the full binary: the
// MCP SDK's client is not linked here.
func runLintMCP(ctx context.Context, e Env, args []string, _ *flagSet, _ string, _ bool, _ *outputFlags, _ *suppressFlags) int {
	return delegate(ctx, e, "lint", args)
}
