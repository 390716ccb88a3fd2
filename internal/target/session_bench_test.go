package target

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/benchcpu"
	"github.com/exchangerebel/payability/internal/capture"
)

// BenchmarkSessionGet measures one GET through a scope's reused connection
// against the same GET from a plain keep-alive net/http client, in the same
// run (the ratio is what matters: bench/, docs/performance.md). The target
// answers a 402 with a body of about the bench's challenge size. The target
// runs in this process, so allocations and cpu-ns/op (the process's CPU per
// request, which unlike ns/op hardly moves when other processes share the
// cores) count both sides, the same in both sub-benchmarks.
func BenchmarkSessionGet(b *testing.B) {
	body := strings.Repeat("x", 580)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	url := srv.URL + "/paid"

	b.Run("raw", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 1}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		perRequestCPU(b, func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		})
	})
	b.Run("session", func(b *testing.B) {
		s := privateClient().Session()
		defer s.Close()
		perRequestCPU(b, func() {
			if got := s.Get(context.Background(), url); got.Outcome != capture.OK {
				b.Fatalf("capture = %v (%s)", got.Outcome, got.Error)
			}
		})
	})
}

func perRequestCPU(b *testing.B, op func()) {
	b.ReportAllocs()
	defer benchcpu.Report(b)()
	for b.Loop() {
		op()
	}
}
