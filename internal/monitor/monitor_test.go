package monitor_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

type script struct {
	mu    sync.Mutex
	calls int
	seq   []bool
}

func (s *script) Observe(context.Context, monitor.Endpoint) (monitor.Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.seq[s.calls]
	s.calls++
	if p {
		return monitor.Observation{Passing: true, State: "POPULATED"}, nil
	}
	return monitor.Observation{State: "NOT-A-402", Reasons: []string{"timeout"}}, nil
}

func newMonitor(t *testing.T, seq ...bool) (*monitor.Monitor, *script) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &script{seq: seq}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	cfg := &monitor.Config{Endpoints: []monitor.Endpoint{{ID: "a", URL: "http://127.0.0.1:1/", Ops: []string{"check"}, Every: time.Minute}}, Retention: monitor.DefaultRetention}
	return &monitor.Monitor{Config: cfg, History: st, Observers: map[string]monitor.Observer{"check": s}, Now: func() time.Time { now = now.Add(time.Second); return now }}, s
}

// TestChangesAreToldOncePerChange: passing, passing, failing, failing,
// passing tells two changes; the first observation is none.
func TestChangesAreToldOncePerChange(t *testing.T) {
	m, _ := newMonitor(t, true, true, false, false, true)
	var got []string
	recorded := 0
	m.Recorded = func(store.Observation) { recorded++ }
	m.Changed = func(_ context.Context, prev, cur store.Observation) error {
		got = append(got, string(monitor.OutcomeOf(prev))+">"+string(monitor.OutcomeOf(cur)))
		return nil
	}
	for slot := int64(1); slot <= 5; slot++ {
		if _, added, err := m.Check(context.Background(), "a", "check", slot*60); err != nil || !added {
			t.Fatalf("slot %d: added %v err %v", slot, added, err)
		}
	}
	if len(got) != 2 || got[0] != "passing>failing" || got[1] != "failing>passing" || recorded != 5 {
		t.Errorf("changes %v, recorded %d", got, recorded)
	}
}

// TestRetryAfterAFailedTellDoesNotObserveAgain: the change's telling fails
// once; the retried job does not fetch again and tells the same change.
func TestRetryAfterAFailedTellDoesNotObserveAgain(t *testing.T) {
	m, s := newMonitor(t, true, false)
	fail := true
	var told []int64
	m.Changed = func(_ context.Context, _, cur store.Observation) error {
		told = append(told, cur.Slot)
		if fail {
			fail = false
			return errors.New("queue down")
		}
		return nil
	}
	if _, _, err := m.Check(context.Background(), "a", "check", 60); err != nil {
		t.Fatal(err)
	}
	if _, added, err := m.Check(context.Background(), "a", "check", 120); err == nil || !added {
		t.Fatalf("first attempt: added %v err %v, want recorded and an error", added, err)
	}
	if _, added, err := m.Check(context.Background(), "a", "check", 120); err != nil || added {
		t.Fatalf("retry: added %v err %v, want no new record and no error", added, err)
	}
	if s.calls != 2 || len(told) != 2 || told[0] != 120 || told[1] != 120 {
		t.Errorf("observer ran %d times, told %v; want 2 runs and slot 120 told twice", s.calls, told)
	}
}

func TestLateOlderSlotTellsNoChange(t *testing.T) {
	m, _ := newMonitor(t, true, false)
	told := 0
	m.Changed = func(context.Context, store.Observation, store.Observation) error { told++; return nil }
	m.Check(context.Background(), "a", "check", 120)
	m.Check(context.Background(), "a", "check", 60)
	if told != 0 {
		t.Errorf("a late job of an older slot told %d changes", told)
	}
}

func TestCheckOfAnEndpointNotConfigured(t *testing.T) {
	m, _ := newMonitor(t, true)
	for _, c := range [][2]string{{"nope", "check"}, {"a", "memo"}} {
		if _, _, err := m.Check(context.Background(), c[0], c[1], 60); !errors.Is(err, monitor.ErrUnknownEndpoint) {
			t.Errorf("%v: %v", c, err)
		}
	}
}
