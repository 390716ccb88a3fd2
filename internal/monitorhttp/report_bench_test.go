package monitorhttp_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

// BenchmarkEcosystemReport: one build of the ecosystem report (its
// aggregate queries) on SQLite over N endpoints (PAYABILITY_BENCH_ENDPOINTS,
// default 1,000) with H hours of hourly preflight history each
// (PAYABILITY_BENCH_HOURS, default 720: 30 days), written in bulk, the
// summaries backfilled by their migrations.
func BenchmarkEcosystemReport(b *testing.B) {
	endpoints, hours := envInt("PAYABILITY_BENCH_ENDPOINTS", 1000), envInt("PAYABILITY_BENCH_HOURS", 720)
	path := filepath.Join(b.TempDir(), "payability.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	start := now.Add(-time.Duration(hours) * time.Hour)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO observations (endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256, network, scheme, x402_version, source)
VALUES (?, 'preflight', ?, ?, ?, ?, ?, 12, '', ?, 'exact', ?, 'config')`)
	if err != nil {
		b.Fatal(err)
	}
	states := []struct{ state, reasons string }{{"GO", ""}, {"HOLD", "lint_warnings,method_open"}, {"STOP", "not_402"}}
	networks := []string{"eip155:8453", "eip155:84532", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}
	for i := range endpoints {
		id := fmt.Sprintf("e%06d", i)
		for h := range hours {
			at := start.Add(time.Duration(h) * time.Hour)
			s := states[(h/50+i)%len(states)]
			passing := 0
			if s.state == "GO" {
				passing = 1
			}
			if _, err := ins.Exec(id, at.Unix()/3600*3600, at.UnixMilli(), passing, s.state, s.reasons, networks[i%3], 1+i%2); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	for _, q := range append(slices.Clone(storetest.PaymentNetworkRollbackSQL["sqlite"]), storetest.SummaryRollbackSQL...) {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	st, err = sqlite.Open(context.Background(), path) // the migrations backfill the summaries
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	for b.Loop() {
		r, err := monitor.BuildReport(context.Background(), st, now, monitor.DefaultRetention)
		if err != nil || r.Ops[0].Endpoints != int64(endpoints) {
			b.Fatalf("report: %v, %d endpoints", err, r.Ops[0].Endpoints)
		}
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
