package server

import (
	"sync"
	"time"
)

// Limiter is a coarse per-client-address token bucket in front of the free
// tier: wallet names are free to invent, addresses less so. It is a shield,
// not the record: the store's atomic upsert is what counts the allowance.
type Limiter struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	now     func() time.Time
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewLimiter allows rate requests per second per address, with bursts of burst.
func NewLimiter(rate, burst float64, now func() time.Time) *Limiter {
	return &Limiter{rate: rate, burst: burst, now: now, buckets: map[string]*bucket{}}
}

// Allow takes one token for addr.
func (l *Limiter) Allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.sweep) > time.Minute {
		// Forget addresses whose buckets are full again: memory stays bounded
		// by the addresses of the last minute.
		for k, b := range l.buckets {
			if now.Sub(b.last).Seconds()*l.rate >= l.burst {
				delete(l.buckets, k)
			}
		}
		l.sweep = now
	}
	b, ok := l.buckets[addr]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[addr] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
