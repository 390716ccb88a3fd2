package monitorhttp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/monitorhttp"
)

func TestAPIShowsWhatWasObserved(t *testing.T) {
	good, bad := newSeller(t), newSeller(t)
	bad.broken.Store(true)
	h := newHarness(t, endpointsConfig(time.Minute,
		monitor.Endpoint{ID: "good", URL: good.URL + "/paid", Ops: []string{"check", "memo"}},
		monitor.Endpoint{ID: "bad", URL: bad.URL + "/paid", Ops: []string{"check"}},
	))
	if o := h.check("good", "check"); !o.Passing || o.State != "POPULATED" {
		t.Fatalf("good check: %+v", o)
	}
	if o := h.check("good", "memo"); !o.Passing || o.State != "BOUND" {
		t.Fatalf("good memo: %+v", o)
	}
	if o := h.check("bad", "check"); o.Passing || o.State != "NOT-A-402" {
		t.Fatalf("bad check: %+v", o)
	}

	var list struct{ Endpoints []monitorhttp.EndpointView }
	if code := h.getJSON("/api/v1/endpoints", &list); code != http.StatusOK || len(list.Endpoints) != 2 {
		t.Fatalf("list: %d %+v", code, list)
	}
	// The list is ordered by id.
	g := list.Endpoints[1]
	if g.ID != "good" || g.Latest["check"].Outcome != "passing" || g.Latest["memo"].State != "BOUND" || g.LastCheckedAt == nil {
		t.Errorf("good: %+v", g)
	}
	// No preflight or lint: the status is not rated.
	if g.Status != string(monitor.Unknown) || g.StatusSource != nil {
		t.Errorf("good status %s source %v, want unknown with no source", g.Status, g.StatusSource)
	}

	var one monitorhttp.EndpointView
	if code := h.getJSON("/api/v1/endpoints/bad", &one); code != http.StatusOK {
		t.Fatalf("bad: %d", code)
	}
	if c := one.Latest["check"]; c.Outcome != "failing" || c.State != "NOT-A-402" || strings.Join(c.Reasons, ",") != "status_not_402" || c.TermsSHA256 != nil {
		t.Errorf("bad check: %+v", c)
	}

	h.advance(time.Minute)
	good.broken.Store(true)
	h.check("good", "check")
	var hist struct {
		Endpoint     string
		Op           *string
		Observations []monitorhttp.ObservationView
	}
	if code := h.getJSON("/api/v1/endpoints/good/history?op=check", &hist); code != http.StatusOK {
		t.Fatalf("history: %d", code)
	}
	if len(hist.Observations) != 2 || hist.Observations[0].Outcome != "passing" || hist.Observations[1].Outcome != "failing" || *hist.Op != "check" {
		t.Errorf("history: %+v", hist)
	}
	since := hist.Observations[1].At
	if h.getJSON("/api/v1/endpoints/good/history?since="+since, &hist); len(hist.Observations) != 1 || hist.Observations[0].State != "NOT-A-402" {
		t.Errorf("history since the second check: %+v", hist.Observations)
	}
	if h.getJSON("/api/v1/endpoints/good/history", &hist); len(hist.Observations) != 3 || hist.Op != nil {
		t.Errorf("history of every op: %d rows, op %v", len(hist.Observations), hist.Op)
	}
}

func TestAPIErrors(t *testing.T) {
	s := newSeller(t)
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "a", URL: s.URL + "/paid", Ops: []string{"check"}}))
	for _, tc := range []struct {
		method, path string
		code         int
		err          string
	}{
		{"GET", "/api/v1/endpoints/nope", 404, "not_found"},
		{"GET", "/api/v1/endpoints/nope/history", 404, "not_found"},
		{"GET", "/api/v1/endpoints/a/history?op=probe", 400, "bad_op"},
		{"GET", "/api/v1/endpoints/a/history?op=scan", 400, "bad_op"},
		{"GET", "/api/v1/endpoints/a/history?since=yesterday", 400, "bad_since"},
		{"GET", "/api/v1/endpoints/a/history?limit=0", 400, "bad_limit"},
		{"GET", "/api/v1/endpoints/a/history?limit=5001", 400, "bad_limit"},
		{"GET", "/api/v1/endpoints?status=fine", 400, "bad_page"},
		{"PUT", "/api/v1/endpoints", 405, "method_not_allowed"},
		{"POST", "/api/v1/endpoints/a", 405, "method_not_allowed"},
		{"DELETE", "/api/v1/endpoints", 405, "method_not_allowed"},
		{"PATCH", "/api/v1/endpoints/a/history", 405, "method_not_allowed"},
		{"POST", "/api/v1/endpoints", 401, "unauthorized"},
		{"DELETE", "/api/v1/endpoints/a", 401, "unauthorized"},
	} {
		req, _ := http.NewRequest(tc.method, h.api.URL+tc.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := res.Body.Read(buf)
		b.Write(buf[:n])
		res.Body.Close()
		if res.StatusCode != tc.code || !strings.Contains(b.String(), `"error":"`+tc.err+`"`) {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, res.StatusCode, b.String(), tc.code, tc.err)
		}
	}
	if s.hits.Load() != 0 {
		t.Errorf("the API fetched the target %d times; it only reads the history", s.hits.Load())
	}
}
