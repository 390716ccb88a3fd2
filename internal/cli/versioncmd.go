package cli

import (
	"context"
	"fmt"

	"github.com/exchangerebel/payability/internal/buildinfo"
)

func init() {
	register(command{"version", "print the version, module version, VCS revision and time, and Go version", runVersion})
}

// readBuildInfo is the build information; tests replace it.
var readBuildInfo = buildinfo.Read

func runVersion(_ context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "version", "version",
		"Prints payability's own version, then the module version, the VCS revision and commit time, and the Go version the binary was built with (runtime/debug.ReadBuildInfo). 'payability --version' is the same.")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "version takes no arguments")
	}
	for _, l := range readBuildInfo().Lines() {
		fmt.Fprintln(e.Stdout, l)
	}
	return ExitOK
}
