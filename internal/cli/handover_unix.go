//go:build unix

package cli

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// handOver replaces this process with path args... (execve): the full
// binary keeps our process id, so a container's PID 1, a supervisor's
// signals and SIGHUP reloads reach it unchanged.
func handOver(_ context.Context, e Env, path string, args []string) int {
	env := append(os.Environ(), delegatedEnv+"=1")
	err := syscall.Exec(path, append([]string{path}, args...), env)
	fmt.Fprintf(e.Stderr, "payability: starting %s failed: %v\n", FullBinary, err)
	return ExitInternal
}
