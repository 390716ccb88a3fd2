package health

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProbes: /healthz is 200 while the process serves; /readyz is 200 only
// when every check passes and the process is not draining, and names the
// failing condition (never its error); other paths pass through.
func TestProbes(t *testing.T) {
	var storeDown bool
	p := New(Check{Name: "store", Test: func(context.Context) error {
		if storeDown {
			return errors.New("dial tcp 10.0.0.1:5432: secret dsn")
		}
		return nil
	}})
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "next") }))
	get := func(method, path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		setup        func()
		method, path string
		code         int
		body         string
	}{
		{func() {}, "GET", "/healthz", 200, `{"status":"live"}` + "\n"},
		{func() {}, "GET", "/readyz", 200, `{"status":"ready"}` + "\n"},
		{func() {}, "HEAD", "/readyz", 200, `{"status":"ready"}` + "\n"},
		{func() {}, "POST", "/readyz", 405, `{"error":"method_not_allowed"}` + "\n"},
		{func() {}, "GET", "/other", 200, "next"},
		{func() { storeDown = true }, "GET", "/readyz", 503, `{"status":"not_ready","failing":"store"}` + "\n"},
		{func() {}, "GET", "/healthz", 200, `{"status":"live"}` + "\n"},
		{func() { storeDown = false; p.Drain() }, "GET", "/readyz", 503, `{"status":"not_ready","failing":"draining"}` + "\n"},
		{func() {}, "GET", "/healthz", 200, `{"status":"live"}` + "\n"},
	} {
		tc.setup()
		if code, body := get(tc.method, tc.path); code != tc.code || body != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, code, body, tc.code, tc.body)
		}
	}
}
