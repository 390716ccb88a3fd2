package server

import (
	"context"

	"github.com/exchangerebel/payability/internal/health"
	"github.com/exchangerebel/payability/internal/store"
)

// ReadyChecks are serve's readiness conditions (health.Probe): the store
// answers and its schema is this build's. The JWKS, which a load balancer
// was once told to probe, stays green with the store down; /readyz does not.
func (s *Server) ReadyChecks() []health.Check {
	return []health.Check{StoreCheck(s.cfg.Store)}
}

// StoreCheck is the readiness check of st: "store".
func StoreCheck(st store.Store) health.Check {
	return health.Check{Name: "store", Test: func(ctx context.Context) error {
		if r, ok := st.(store.Readier); ok {
			return r.Ready(ctx)
		}
		return nil
	}}
}
