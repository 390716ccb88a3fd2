package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// The command layout (docs/architecture.md, "Two builds of one command").
// The quick build (go build -tags quick ./cmd/payability, released as
// payability) starts in about twice a hello world's CPU, because it links
// nothing a quick command does not use; the full build (no tag, released as payabilityd,
// and what go install builds) has every command. The commands below link
// the HTTP server, Prometheus, the MCP SDK, the stores and the queue: the
// full build runs them, the quick build hands each to the full binary
// (delegate), as it does lint --mcp.
const (
	// FullBinary is the full build's file name in a release.
	FullBinary = "payabilityd"
	// delegatedEnv marks a process the quick build handed a command to, so
	// that a quick build found under the full build's name is refused
	// instead of handing the command on forever.
	delegatedEnv = "PAYABILITY_DELEGATED"
)

// fullOnly names the commands only the full build runs, with their
// summaries (both builds list them in their help).
var fullOnly = []struct{ name, summary string }{
	{"ledger", "the operator's accounting: ledger backfill | refund | export | tripwires"},
	{"mcp", "serve the MCP tools agents use (x402_preflight and seven more) over stdio or streamable HTTP"},
	{"monitor", "watch endpoints on a schedule: history, API, status page, badges, webhooks, metrics, signed records"},
	{"serve", "run the paid API of both services (x402 gate, free pre-check, signed reports, metrics)"},
	{"store", "manage the store: store migrate [--store sqlite:PATH|postgres://…]"},
}

// summaryOf is a full-only command's summary.
func summaryOf(name string) string {
	for _, c := range fullOnly {
		if c.name == name {
			return c.summary
		}
	}
	panic("cli: no full-only command " + name)
}

// errNoFull: the full binary is neither beside this one nor on PATH.
var errNoFull = errors.New("not found")

// findFull finds the full binary: beside this executable (symbolic links
// resolved), else on PATH.
func findFull() (string, error) {
	name := FullBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errNoFull
}

// delegate runs "FullBinary name args..." in place of this process (the
// same process id, signals, standard streams and environment; on Windows,
// as a child whose exit status becomes ours). It returns only when the
// hand-over could not happen.
func delegate(ctx context.Context, e Env, name string, args []string) int {
	if e.Getenv(delegatedEnv) != "" {
		fmt.Fprintf(e.Stderr, "payability: %q was handed to %s, which is a quick build too; install the full build as %s\n", name, FullBinary, FullBinary)
		return ExitInternal
	}
	path, err := findFull()
	if err != nil {
		fmt.Fprintf(e.Stderr, "payability: %q needs the full build, %s, which is neither beside this binary nor on PATH; it ships in the same release archive (or go install github.com/exchangerebel/payability/cmd/payability builds every command into one binary)\n", name, FullBinary)
		return ExitInternal
	}
	return handOver(ctx, e, path, append([]string{name}, args...))
}
