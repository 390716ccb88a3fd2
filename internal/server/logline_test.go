package server

import (
	"net/http"
	"strings"
	"testing"
)

// The request log line names the method from a closed set: a client may send
// any token as its method, and the log is a custody surface.
func TestLogLineNeverEchoesAnInventedMethod(t *testing.T) {
	h := newHarness(t, ServeAll)
	const canary = "CANARY-METHOD-4c1d"
	for _, path := range []string{"/toll/payability/check", "/nowhere"} {
		res := h.do(canary, path, "", nil)
		if res.status < 400 {
			t.Errorf("%s %s: %d", canary, path, res.status)
		}
	}
	h.do(http.MethodHead, "/toll/payability/check", "", nil)
	logs := h.logs.String()
	if strings.Contains(logs, canary) {
		t.Errorf("the log echoes the method: %s", logs)
	}
	if !strings.Contains(logs, "method=HEAD") || !strings.Contains(logs, "method=other") {
		t.Errorf("the log does not name the methods: %s", logs)
	}
}
