package scan

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// TestScanSharesTheHostLimit: a scan run whose per-host op bound (8) is
// above the process's host limit (2) never holds more connections to the
// seller than the limit. While the seller holds every request it has
// accepted exactly 2 connections (the run's pool holds no more than the
// limit; the other ops queue for them); released, every op is recorded.
func TestScanSharesTheHostLimit(t *testing.T) {
	const limit, perHost, urls = 2, 8, 24
	release := make(chan struct{})
	var mu sync.Mutex
	held, most := 0, 0
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		held++
		most = max(most, held)
		mu.Unlock()
		<-release
		mu.Lock()
		held--
		mu.Unlock()
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	hl := target.NewHostLimit(limit)
	runner := ops.Runner{Fetcher: target.New(target.Options{AllowPrivate: true, HostLimit: hl})}
	var in strings.Builder
	for i := range urls {
		fmt.Fprintf(&in, "%s/item/%d\n", srv.URL, i)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := New(Options{Op: ops.OpCheck, Runner: runner, Concurrency: urls, PerHost: perHost, Out: &out}).
			Run(context.Background(), NewInput(strings.NewReader(in.String())))
		done <- err
	}()
	deadline := time.Now().Add(time.Minute) // turns a hang into a failure only
	for {
		mu.Lock()
		h := held
		mu.Unlock()
		if h == limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %d, waiting %d", h, hl.Waiting("127.0.0.1"))
		}
		time.Sleep(time.Millisecond)
	}
	if n := opened.Load(); n != limit {
		t.Fatalf("the seller accepted %d connections, limit %d", n, limit)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != urls+1 { // the header record and one per URL
		t.Errorf("%d records", lines)
	}
	if most > limit {
		t.Errorf("the seller had %d requests in hand at once, limit %d", most, limit)
	}
}
