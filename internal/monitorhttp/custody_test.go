package monitorhttp_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
)

// TestCustodyCanary: a seller puts a unique canary in every field it
// serves (payee, description, memo, error, the plain body once broken); the
// monitor checks it with every op, and the canary (nor its SHA-256 or base64)
// is found nowhere: not in the API, not in the logs, not in the database
// file.
func TestCustodyCanary(t *testing.T) {
	const canary = "CANARY-5b1d-monitor-custody"
	sum := sha256.Sum256([]byte(canary))
	needles := []string{canary, hex.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:]),
		base64.StdEncoding.EncodeToString([]byte(canary))}
	s := newSeller(t)
	s.canary = canary
	h := newHarness(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "c", URL: s.URL + "/paid", Ops: []string{"preflight", "lint", "check", "memo", "probe"}}))
	logs := h.logs
	for _, op := range []string{"preflight", "lint", "check", "memo", "probe"} {
		h.check("c", op)
	}
	h.advance(time.Minute)
	s.broken.Store(true)
	h.check("c", "check")

	var seen strings.Builder
	for _, p := range []string{"/api/v1/endpoints", "/api/v1/endpoints/c", "/api/v1/endpoints/c/history", "/api/v1/reliability/c", "/status", "/status/c", "/badge/c.svg", "/badge/c.json", "/metrics", "/probe?target=c&module=check", "/report", "/api/v1/report"} {
		_, _, b := h.get(p)
		seen.Write(b)
	}
	seen.WriteString(logs.String())
	// The database file and its WAL, as bytes.
	dir := filepath.Dir(h.dbPath())
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		seen.Write(b)
	}
	if !strings.Contains(seen.String(), `"id":"c"`) || !strings.Contains(logs.String(), "msg=check") {
		t.Fatal("the test saw nothing: the API and the logs must be in the haystack")
	}
	for _, n := range needles {
		if strings.Contains(seen.String(), n) {
			t.Errorf("found %q", n)
		}
	}
}
