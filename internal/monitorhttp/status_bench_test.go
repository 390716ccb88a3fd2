package monitorhttp_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
	"github.com/exchangerebel/payability/internal/store/sqlite"
	"github.com/exchangerebel/payability/internal/store/storetest"
)

// BenchmarkStatus1000Endpoints30Days: GET /status (a page of 100) and every
// page of 1,000 endpoints, each with 30 days of hourly history (720,000
// observations, written in bulk, the summary backfilled by its migration).
// The page reads the summary, so its cost does not grow with the history.
func BenchmarkStatus1000Endpoints30Days(b *testing.B) {
	const endpoints, hours = 1000, 30 * 24
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
	start := now.Add(-hours * time.Hour)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO observations (endpoint, op, slot, at_ms, passing, state, reasons, duration_ms, terms_sha256) VALUES (?, 'check', ?, ?, ?, ?, ?, 12, '')`)
	if err != nil {
		b.Fatal(err)
	}
	var eps []monitor.Endpoint
	for i := range endpoints {
		id := fmt.Sprintf("e%04d", i)
		eps = append(eps, monitor.Endpoint{ID: id, URL: "http://127.0.0.1:1/paid", Method: "GET", Ops: []string{"check"}, Every: time.Hour})
		for h := range hours {
			at := start.Add(time.Duration(h) * time.Hour)
			passing, state, reasons := 1, "POPULATED", ""
			if (h/50+i)%7 == 0 {
				passing, state, reasons = 0, "NOT-A-402", "status_not_402"
			}
			if _, err := ins.Exec(id, at.Unix()/3600*3600, at.UnixMilli(), passing, state, reasons); err != nil {
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
	st, err = sqlite.Open(context.Background(), path) // the migration backfills the summary
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m := &monitor.Monitor{Config: &monitor.Config{Endpoints: eps, Retention: monitor.DefaultRetention}, History: st, Catalog: st, Now: func() time.Time { return now }}
	if err := m.Seed(context.Background()); err != nil { // the endpoints live in the store
		b.Fatal(err)
	}
	h := monitorhttp.New(monitorhttp.Config{Monitor: m})
	get := func(path string) {
		rec := &discard{header: http.Header{}}
		req, _ := http.NewRequest("GET", path, nil)
		h.ServeHTTP(rec, req)
		if rec.code != 0 && rec.code != 200 {
			b.Fatalf("GET %s: %d", path, rec.code)
		}
	}
	b.Run("page_of_100", func(b *testing.B) {
		for b.Loop() {
			get("/status")
		}
	})
	b.Run("api_page_of_100", func(b *testing.B) {
		for b.Loop() {
			get("/api/v1/endpoints?page=5")
		}
	})
	b.Run("api_filtered_unknown", func(b *testing.B) {
		for b.Loop() {
			get("/api/v1/endpoints?status=unknown&page=3")
		}
	})
	b.Run("all_10_pages", func(b *testing.B) {
		for b.Loop() {
			for p := 1; p <= endpoints/monitorhttp.MaxPerPage; p++ {
				get(fmt.Sprintf("/status?page=%d", p))
			}
		}
	})
}

type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(c int)           { d.code = c }
func (d *discard) Write(p []byte) (int, error) { return io.Discard.Write(p) }
