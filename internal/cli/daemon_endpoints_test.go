//go:build !quick

package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSIGHUPReseedKeepsAPIEndpoints: a reload reseeds the store from the
// file: an endpoint the file no longer lists (and nothing else lists) is
// retired, one added through the API stays, and the API changes the set
// only with the token of --ops-token-env.
func TestSIGHUPReseedKeepsAPIEndpoints(t *testing.T) {
	target := loopbackTarget(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "monitor.json")
	writeMonitorConfig(t, cfg, target, "a", "b")
	const token = "daemon-test-token-0123456789"
	p := startDaemon(t, []string{"MON_OPS_TOKEN=" + token}, "monitor", "--config", cfg, "--data-dir", dir, "--addr", "127.0.0.1:0",
		"--allow-private", "--ops-token-env", "MON_OPS_TOKEN")
	post := func(auth string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+p.addr+"/api/v1/endpoints",
			strings.NewReader(`{"id":"api1","url":"`+target+`","ops":["check"],"every":"1h"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", auth)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("Bearer wrong-token-0123456789"); code != 401 {
		t.Fatalf("POST with a wrong token: %d, want 401", code)
	}
	if code := post("Bearer " + token); code != 201 {
		t.Fatalf("POST with the token: %d, want 201", code)
	}
	list := func(q string) string {
		t.Helper()
		code, body := p.get(t, "/api/v1/endpoints"+q)
		var v struct{ Endpoints []struct{ ID string } }
		if err := json.Unmarshal([]byte(body), &v); err != nil || code != 200 {
			t.Fatalf("GET /api/v1/endpoints%s: %d %v", q, code, err)
		}
		var ids []string
		for _, e := range v.Endpoints {
			ids = append(ids, e.ID)
		}
		return strings.Join(ids, ",")
	}
	if got := list(""); got != "a,api1,b" {
		t.Fatalf("endpoints %s, want a,api1,b", got)
	}
	writeMonitorConfig(t, cfg, target, "a")
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitLine(t, "SIGHUP: configuration reloaded")
	if got := list(""); got != "a,api1" {
		t.Errorf("after the reload: %s, want a,api1", got)
	}
	if got := list("?status=retired"); got != "b" {
		t.Errorf("retired after the reload: %s, want b", got)
	}
	if got := list("?source=api"); got != "api1" {
		t.Errorf("source=api: %s, want api1", got)
	}
	p.terminate(t)
}
