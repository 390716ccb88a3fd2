package server

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// countingStore counts every call that could write.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (c *countingStore) TakeFree(ctx context.Context, key string, now time.Time, perDay int, min time.Duration) (store.FreeDecision, error) {
	c.writes.Add(1)
	return c.Store.TakeFree(ctx, key, now, perDay, min)
}

func (c *countingStore) Claim(ctx context.Context, cl store.Claim) (store.ClaimResult, error) {
	c.writes.Add(1)
	return c.Store.Claim(ctx, cl)
}

// An unpaid flood must cost us no writes: issuing challenges touches no store.
func TestChallengesWriteNothing(t *testing.T) {
	h := newHarness(t, ServeAll)
	cs := &countingStore{Store: h.store}
	h.gate.Store = cs
	h.s.cfg.Store = cs
	for _, path := range allPaidRoutes {
		for range 20 {
			h.do(http.MethodGet, path, "", nil)
			h.do(http.MethodHead, path, "", nil)
			if res := h.do(http.MethodPost, path, `{"url":"https://seller.example/api"}`, nil); res.status != http.StatusPaymentRequired {
				t.Fatalf("%s: %d", path, res.status)
			}
		}
	}
	if n := cs.writes.Load(); n != 0 {
		t.Errorf("challenges made %d store calls, want 0", n)
	}
}
