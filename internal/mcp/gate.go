package mcp

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"
)

// gate bounds the tool calls running at once over the whole server: a call
// beyond the bound waits in line, and fails busy when no slot frees within
// the wait or when the line is full.
type gate struct {
	slots   chan struct{}
	wait    time.Duration
	waiting atomic.Int64
	maxWait int64
	busy    error
}

func newGate(n int, wait time.Duration) *gate {
	if n <= 0 {
		n = DefaultMaxCalls
	}
	if wait == 0 {
		wait = DefaultCallWait
	}
	return &gate{
		slots: make(chan struct{}, n), wait: max(wait, 0), maxWait: 4 * int64(n),
		busy: errors.New("busy: " + strconv.Itoa(n) + " tool calls are running, this server's limit (--max-calls); try again later"),
	}
}

// enter takes a slot, or returns the busy error; done gives the slot back.
func (g *gate) enter(ctx context.Context) (done func(), err error) {
	done = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return done, nil
	default:
	}
	if g.wait == 0 || g.waiting.Add(1) > g.maxWait {
		if g.wait != 0 {
			g.waiting.Add(-1)
		}
		return nil, g.busy
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return done, nil
	case <-t.C:
		return nil, g.busy
	case <-ctx.Done():
		return nil, g.busy
	}
}
