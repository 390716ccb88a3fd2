package schedule_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/store"
)

// TestScheduledSetFollowsTheStore: the periodic checks are of the stored
// endpoint set: the file's seed at open, an endpoint added later (Refresh
// on this instance, the version poll on another), never a retired one.
func TestScheduledSetFollowsTheStore(t *testing.T) {
	h, db := openSQLite(t)
	cat := h.(store.EndpointCatalog)
	// Periodic checks of the seed run at start: every day, so they run once.
	m := newMonitor(config(24*time.Hour, "a", "b"), h, &counter{})
	m.Catalog = cat
	if err := m.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := start(t, schedule.Options{DB: db, Monitor: m, ResyncEvery: time.Hour})
	if got := s.Scheduled(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("scheduled at open %v, want [a b]", got)
	}
	if err := m.Add(context.Background(), []monitor.Endpoint{{ID: "c", URL: "http://127.0.0.1:1/c", Method: "GET", Ops: []string{"check"}, Every: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	// A poke (what the API does) refreshes on the watch's goroutine.
	s.Poke()
	deadline := time.Now().Add(60 * time.Second)
	for !slices.Equal(s.Scheduled(), []string{"a", "b", "c"}) {
		if time.Now().After(deadline) {
			t.Fatalf("scheduled after an add and a poke %v, want [a b c]", s.Scheduled())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The file drops b: reseeded, b is retired (no other source lists it).
	m.Config = config(24*time.Hour, "a")
	if err := m.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Scheduled(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("scheduled after a reseed %v, want [a c]", got)
	}
	// Another instance sees it at its next poll.
	m2 := newMonitor(config(24*time.Hour, "a"), h, &counter{})
	m2.Catalog = cat
	s2 := start(t, schedule.Options{DB: db, Monitor: m2, ResyncEvery: 10 * time.Millisecond})
	if got := s2.Scheduled(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("a second instance schedules %v, want [a c]", got)
	}
	if _, err := m.Delete(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for !slices.Equal(s2.Scheduled(), []string{"a"}) {
		if time.Now().After(deadline) {
			t.Fatalf("the second instance never saw the delete: %v", s2.Scheduled())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A retired endpoint's job that was queued before is cancelled, not run.
	if _, _, err := m.Check(context.Background(), "b", "check", 0); err != monitor.ErrUnknownEndpoint {
		t.Errorf("check of retired b: %v, want ErrUnknownEndpoint", err)
	}
}
