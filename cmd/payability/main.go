// Command payability tells whether an x402 payment endpoint is payable and
// fails closed. Everything lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/exchangerebel/payability/internal/cli"
)

func main() {
	// SIGHUP's default is to terminate: ignored from the start, then handled
	// by the daemons while they serve (a reload, or a logged no-op).
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
