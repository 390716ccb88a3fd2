package monitor_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// TestSourceOf: an observation's source is read from the sources that
// list the endpoint in the store: the file first, then the API, then the
// first catalog by URL, named by its label (never its URL).
func TestSourceOf(t *testing.T) {
	const (
		catA = "https://facilitator.example/discovery/resources?token=SECRET"
		catB = "https://b.example/list.txt"
	)
	for _, tc := range []struct {
		name    string
		sources []string
		want    string
	}{
		{"no store catalog: the file", nil, "config"},
		{"the file wins", []string{"api", "config", catA}, "config"},
		{"then the API", []string{"api", catA}, "api"},
		{"then the first catalog by URL", []string{catA, catB}, monitor.SourceLabel(catB)},
	} {
		if got := monitor.SourceOf(monitor.Endpoint{ID: "a", Sources: tc.sources}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	l := monitor.SourceLabel(catA)
	if !store.ValidID(l) || l != monitor.SourceLabel(catA) || l[:len("facilitator.example-")] != "facilitator.example-" || len(l) != len("facilitator.example-")+12 {
		t.Errorf("label %q: want facilitator.example- and 12 hex, a valid id", l)
	}
}

// TestStoredEndpointsObservationsAndAlertPolicy: checks of endpoints the
// store holds record the store's source (the file's, the API's, a
// catalog's label), and follow the file's alert policy: the endpoint's own
// keys for one the file lists, the global keys for the others.
func TestStoredEndpointsObservationsAndAlertPolicy(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg, err := monitor.ParseConfig([]byte(`{"failures_before_alert": 3, "endpoints": [
		{"id": "file", "url": "https://f.example/", "ops": ["check"], "every": "1m", "failures_before_alert": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	m := &monitor.Monitor{Config: cfg, History: st, Catalog: st, Now: func() time.Time { return now },
		Observers: map[string]monitor.Observer{"check": observerFunc(func(context.Context, monitor.Endpoint) (monitor.Observation, error) {
			return monitor.Observation{Passing: true, State: "POPULATED"}, nil
		})}}
	if err := m.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	api := monitor.Endpoint{ID: "by-api", URL: "https://a.example/", Method: "GET", Ops: []string{"check"}, Every: time.Minute}
	if err := m.Add(ctx, []monitor.Endpoint{api}); err != nil {
		t.Fatal(err)
	}
	const catalog = "https://c.example/discovery/resources"
	imported := monitor.Endpoint{ID: "imported", URL: "https://i.example/", Method: "GET", Ops: []string{"check"}, Every: time.Minute}
	if err := st.PutEndpoints(ctx, []store.EndpointRecord{monitor.Record(imported)}, store.PutEndpoints{Source: catalog, Seen: now, Max: 10}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]struct {
		source string
		fail   int
	}{"file": {"config", 1}, "by-api": {"api", 3}, "imported": {monitor.SourceLabel(catalog), 3}} {
		e, ok, err := m.Endpoint(ctx, id)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", id, ok, err)
		}
		if e.Alert.FailuresBeforeAlert != want.fail || e.Alert.SuccessesBeforeResolve != monitor.DefaultSuccessesBeforeResolve {
			t.Errorf("%s: alert policy %+v, want %d failures before alert", id, e.Alert, want.fail)
		}
		rec, added, err := m.Check(ctx, id, "check", 60)
		if err != nil || !added {
			t.Fatalf("%s: %v %v", id, added, err)
		}
		if rec.Source != want.source {
			t.Errorf("%s: observation source %q, want %q", id, rec.Source, want.source)
		}
		got, err := st.Observations(ctx, id, "check", time.Time{}, 1)
		if err != nil || len(got) != 1 || got[0].Source != want.source {
			t.Errorf("%s: stored %+v %v, want source %q", id, got, err, want.source)
		}
	}
}

type observerFunc func(context.Context, monitor.Endpoint) (monitor.Observation, error)

func (f observerFunc) Observe(ctx context.Context, e monitor.Endpoint) (monitor.Observation, error) {
	return f(ctx, e)
}
