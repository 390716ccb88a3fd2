//go:build !unix

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// handOver runs path args... as a child with our standard streams and
// returns its exit status (no execve here). Ctrl-C reaches both processes
// through the console; this one waits for the child.
func handOver(_ context.Context, e Env, path string, args []string) int {
	cmd := exec.Command(path, args...)
	stdout := e.Stdout
	if c, ok := stdout.(*checkedWriter); ok {
		stdout = c.w // the child writes to our stdout itself (a console stays a console)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.Stdin, stdout, e.Stderr
	cmd.Env = append(os.Environ(), delegatedEnv+"=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: starting %s failed: %v\n", FullBinary, err)
		return ExitInternal
	}
	return ExitOK
}
