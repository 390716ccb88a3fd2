//go:build !quick

package cli

import "os"

// The full build clears the hand-over's mark, so that a quick build it
// starts in turn (from a shell, a hook) can hand over again; only the
// process a quick build handed to carries it.
func init() { os.Unsetenv(delegatedEnv) }
