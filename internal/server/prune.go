package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// PruneEvery is how often a serving instance runs the store's prune job
// (store.Store's Prune: free-tier rows two days after their last call,
// settlement records two days after their creation; on SQLite also a
// checkpoint that truncates the -wal file).
const PruneEvery = time.Hour

// RunPruner prunes st at once and then at every tick, until ctx ends. The
// time of a prune is the tick's (now for the first). A failed prune is
// logged and tried again at the next tick; the log names counts only.
func RunPruner(ctx context.Context, st store.Store, ticks <-chan time.Time, now func() time.Time, logger *slog.Logger) {
	prune := func(at time.Time) {
		p, err := st.Prune(ctx, at)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			logger.Warn("store prune failed; retried at the next tick", "error", err.Error())
		case p.Free+p.FreeSources+p.Settlements > 0:
			logger.Info("store prune", "free_rows", p.Free, "free_source_rows", p.FreeSources, "settlement_rows", p.Settlements)
		}
	}
	prune(now())
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-ticks:
			prune(t)
		}
	}
}

// StartPruner runs RunPruner every PruneEvery in a goroutine of its own;
// stop ends it and waits for it.
func StartPruner(ctx context.Context, st store.Store, now func() time.Time, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	ticker := time.NewTicker(PruneEvery)
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunPruner(ctx, st, ticker.C, now, logger)
	}()
	return func() {
		cancel()
		<-done
		ticker.Stop()
	}
}
