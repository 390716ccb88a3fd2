package chain

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
)

// evmQueries are n entries with distinct payTo (distinct look-ups), each
// listed twice (the second a duplicate).
func evmQueries(n int) []lint.ChainQuery {
	var qs []lint.ChainQuery
	for i := range 2 * n {
		qs = append(qs, lint.ChainQuery{Leg: lint.LegHeader, Entry: i, Family: lint.FamilyEVM, Network: "eip155:84532",
			PayTo: fmt.Sprintf("0x%040x", i%n), Asset: usdc})
	}
	return qs
}

func evmNode() *fakeNode {
	return &fakeNode{chainID: "0x14a34", calls: map[string]string{selectorName: abi("USDC"), selectorVersion: abi("2")}}
}

// TestObserveCapsDistinctLookups is the finding's repro, counted in calls:
// a 60-entry challenge (120 entries, 60 distinct look-ups) costs the node
// MaxLookups × 3 calls, not 60 × 3, and every entry beyond the cap is
// observed Skipped (lint grades each chain_lookup_skipped).
func TestObserveCapsDistinctLookups(t *testing.T) {
	node := evmNode()
	srv := httptest.NewServer(node)
	defer srv.Close()
	qs := evmQueries(60)
	facts := client(t, "", srv.URL, true).Observe(context.Background(), qs)
	if got := node.n.Load(); got != MaxLookups*3 {
		t.Errorf("%d calls to the node, want %d (3 per look-up, %d look-ups)", got, MaxLookups*3, MaxLookups)
	}
	if len(facts.Observations) != len(qs) {
		t.Fatalf("%d observations for %d queries", len(facts.Observations), len(qs))
	}
	skipped := 0
	for i, o := range facts.Observations {
		inCap := i%60 < MaxLookups
		if o.Entry != i || o.Skipped == inCap || (inCap && (!o.NameRead || o.Name != "USDC")) {
			t.Errorf("entry %d: %+v", i, o)
		}
		if o.Skipped {
			skipped++
		}
	}
	if skipped != 2*(60-MaxLookups) {
		t.Errorf("%d entries skipped", skipped)
	}
}

// TestObserveRunsBoundedParallel: the node holds every call until
// MaxParallel are in hand (a handshake); it never has more.
func TestObserveRunsBoundedParallel(t *testing.T) {
	node := evmNode()
	var mu sync.Mutex
	inFlight, most := 0, 0
	full := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == MaxParallel {
			once.Do(func() { close(full) })
		}
		mu.Unlock()
		<-full
		node.ServeHTTP(w, r)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	defer srv.Close()
	facts := client(t, "", srv.URL, true).Observe(context.Background(), evmQueries(MaxLookups))
	if most != MaxParallel {
		t.Errorf("at most %d calls at once, want %d", most, MaxParallel)
	}
	for _, o := range facts.Observations {
		if o.Unavailable || o.Skipped {
			t.Errorf("%+v", o)
		}
	}
}

// TestObserveHasATotalBudget: a node that never answers costs one budget,
// not one call timeout per look-up; every look-up it cut is Unavailable.
// The node answers nothing until the test ends, so the outcome does not
// depend on how long anything takes.
func TestObserveHasATotalBudget(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	c := client(t, "", srv.URL, true)
	c.budget = time.Millisecond
	facts := c.Observe(context.Background(), evmQueries(MaxLookups))
	for _, o := range facts.Observations {
		if !o.Unavailable {
			t.Errorf("%+v", o)
		}
	}
}
