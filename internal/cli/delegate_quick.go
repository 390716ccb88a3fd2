//go:build quick

package cli

import "context"

// The quick build registers each full-only command as a hand-over to the
// full binary.
func init() {
	for _, c := range fullOnly {
		name := c.name
		register(command{name, c.summary, func(ctx context.Context, e Env, args []string) int {
			return delegate(ctx, e, name, args)
		}})
	}
}
