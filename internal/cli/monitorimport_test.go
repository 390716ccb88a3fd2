//go:build !quick

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// TestMonitorImport: --dry-run lists what a loopback Bazaar would give and
// writes nothing; the import itself writes the endpoints, listed by the
// catalog, into the store a monitor on the same flags opens.
func TestMonitorImport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var items []map[string]any
		if r.URL.Query().Get("offset") == "0" {
			for i := range 3 {
				items = append(items, map[string]any{"resource": fmt.Sprintf("http://127.0.0.1:9/p/%d", i), "type": "http", "description": "secret words"})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items, "pagination": map[string]any{"total": 3}})
	}))
	defer srv.Close()
	dir := t.TempDir()
	from := srv.URL + "/discovery/resources"
	out, errOut, code := runCLI(t, nil, false, nil, "monitor", "import", "--from", from, "--dry-run", "--allow-private", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "(bazaar): 1 pages, 3 listed, would import 3 endpoints") ||
		!strings.Contains(out, monitor.DeriveID("GET", "http://127.0.0.1:9/p/2")+" GET http://127.0.0.1:9/p/2") || strings.Contains(out, "secret") {
		t.Fatalf("dry run: %d\n%s%s", code, out, errOut)
	}
	if _, err := filepath.Glob(filepath.Join(dir, "*.db")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.db")); len(m) != 0 {
		t.Errorf("a dry run created %v", m)
	}
	out, errOut, code = runCLI(t, nil, false, nil, "monitor", "import", "--from", from, "--ops", "lint,preflight", "--every", "30m", "--allow-private", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "imported 3 endpoints") || !strings.Contains(out, "retired: 0") {
		t.Fatalf("import: %d\n%s%s", code, out, errOut)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "payability.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps, total, err := st.ListEndpoints(context.Background(), store.EndpointQuery{Source: from})
	if err != nil || total != 3 || eps[0].Every.Minutes() != 30 || strings.Join(eps[0].Ops, ",") != "lint,preflight" {
		t.Errorf("stored: %d %+v %v", total, eps, err)
	}
	// Refusals: the guard without --allow-private (before any request),
	// bad flags.
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--from", from, "--data-dir", dir}, 1, "refused_url"},
		{[]string{"--data-dir", dir}, 2, "--from is required"},
		{[]string{"--from", "ftp://x/", "--data-dir", dir}, 2, "URL policy"},
		{[]string{"--from", from, "--ops", "lint,lint"}, 2, "--ops"},
		{[]string{"--from", from, "--every", "0s"}, 2, "--every"},
		{[]string{"--from", from, "--kind", "atlas"}, 2, "--kind"},
	} {
		_, errOut, code := runCLI(t, nil, false, nil, append([]string{"monitor", "import"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: %d %s, want %d %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
}

// TestMonitorOpsTokenEnv: the token's variable must be set and long enough.
func TestMonitorOpsTokenEnv(t *testing.T) {
	cfg := writeConfig(t, `{"endpoints":[{"id":"a","url":"http://127.0.0.1:9/","ops":["check"],"every":"1m"}]}`)
	for env, want := range map[string]string{"": "MON_TOKEN is not set", "short": "shorter than 16 bytes"} {
		_, errOut, code := runCLI(t, nil, false, map[string]string{"MON_TOKEN": env}, "monitor", "--config", cfg, "--ops-token-env", "MON_TOKEN", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir())
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("token %q: %d %s, want 2 %q", env, code, errOut, want)
		}
	}
}
