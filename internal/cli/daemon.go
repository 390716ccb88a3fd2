package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/exchangerebel/payability/internal/health"
)

// daemon is what serveUntilDone needs of a long-running command besides its
// handler: its probes (/healthz, /readyz; nil for none) and what SIGHUP
// does (reload; nil: a logged no-op).
type daemon struct {
	name   string // "serve", "monitor", "mcp"
	probe  *health.Probe
	reload func() error
}

// watchHangups handles SIGHUP until ctx ends or the returned stop is
// called: each one runs d.reload (a logged no-op without one), so that
// `kill -HUP` never kills the daemon. After stop, SIGHUP stays ignored (the
// process is shutting down; main ignores it from the start).
func watchHangups(ctx context.Context, e Env, d daemon) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-ch:
				if d.reload == nil {
					fmt.Fprintf(e.Stderr, "payability %s: SIGHUP: nothing to reload; still serving\n", d.name)
					continue
				}
				if err := d.reload(); err != nil {
					fmt.Fprintf(e.Stderr, "payability %s: SIGHUP: reload refused, keeping the running configuration: %v\n", d.name, err)
					continue
				}
				fmt.Fprintf(e.Stderr, "payability %s: SIGHUP: configuration reloaded\n", d.name)
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Ignore(syscall.SIGHUP)
		signal.Stop(ch)
		close(done)
		<-finished
	}
}
