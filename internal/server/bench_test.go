package server

import (
	"runtime"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/postgres"
)

// BenchmarkPaidCall measures paid-call throughput on each store backend: one
// instance on loopback, the fake chain, a loopback seller as the target, and
// a buyer's whole paid flow per operation (the challenge, the payment, the
// paid POST that claims the payment, runs the check op, signs the report and
// records delivery with the ledger entry). It reports paid calls per second;
// it asserts nothing about time.
//
//	go test -run '^$' -bench BenchmarkPaidCall -benchtime 5s ./internal/server/
//
// "serial" is one buyer at a time (the latency of a paid call); "16-buyers"
// is sixteen at once (what the store's write path sustains).
func BenchmarkPaidCall(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B, c *cluster) store.Store
	}{
		{"sqlite", func(b *testing.B, _ *cluster) store.Store { return openSQLite(b) }},
		{"postgres", func(b *testing.B, c *cluster) store.Store {
			return openPG(b, c.dsn(), postgres.Options{UseDBClock: true})
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			b.Run("serial", func(b *testing.B) {
				c := newCluster(b)
				n := c.start(be.name, nodeOptions{Store: be.open(b, c), Now: time.Now})
				for b.Loop() {
					if err := n.paidCall(c.chain, "/toll/payability/check", c.seller); err != nil {
						b.Fatal(err)
					}
				}
				reportRate(b)
			})
			b.Run("16-buyers", func(b *testing.B) {
				c := newCluster(b)
				n := c.start(be.name, nodeOptions{Store: be.open(b, c), Now: time.Now})
				b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := n.paidCall(c.chain, "/toll/payability/check", c.seller); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportRate(b)
			})
		})
	}
}

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "paid-calls/s")
	}
}
