package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/store/sqlite"
)

// seedReportStore writes a few preflight and lint observations, one with a
// network of a seller's own characters (the canary), in dir's store.
func seedReportStore(t *testing.T, dir string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "payability.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := fixedEnd.Add(-time.Hour)
	for _, o := range []store.Observation{
		{Endpoint: "a", Op: "preflight", Slot: 1, At: at, Passing: true, State: "GO", Network: "eip155:8453", Scheme: "exact", X402Version: 2, Source: "config"},
		{Endpoint: "b", Op: "preflight", Slot: 1, At: at, State: "STOP", Reasons: []string{"not_402"}, Source: "config"},
		{Endpoint: "c", Op: "preflight", Slot: 1, At: at, State: "HOLD", Reasons: []string{"lint_warnings"}, Network: "solana:CANARYsellerChosen", Scheme: "other", X402Version: 2, Source: "config"},
		{Endpoint: "a", Op: "lint", Slot: 1, At: at, Passing: true, State: "conforms", Network: "eip155:8453", Scheme: "exact", X402Version: 2, Source: "config"},
	} {
		if _, err := st.AddObservation(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMonitorReportJSONSignedAndVerifiable(t *testing.T) {
	dir := t.TempDir()
	seedReportStore(t, dir)
	out, stderr, code := runCLI(t, nil, false, nil, "monitor", "report", "--data-dir", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	keys, err := report.LoadKeySet(dir, mustKey(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Verify([]byte(out), keys); err != nil {
		t.Fatalf("Verify: %v\n%s", err, out)
	}
	var r monitor.EcosystemReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	pf := r.Ops[0]
	if r.Kind != monitor.ReportKind || pf.Op != "preflight" || pf.Endpoints != 3 || pf.States[0].Count != 1 || r.Ops[1].Endpoints != 1 {
		t.Errorf("report %+v, want 3 preflight endpoints (1 GO) and 1 lint", r)
	}
	if r.Window.Days != 31 || r.GeneratedAt != "2026-11-29T12:00:00.123Z" {
		t.Errorf("window %+v at %s, want 31 days at the clock's now", r.Window, r.GeneratedAt)
	}
	if strings.Contains(strings.ToLower(out), "canary") {
		t.Errorf("the report carries a seller's text:\n%s", out)
	}
}

func mustKey(t *testing.T, dir string) report.Key {
	t.Helper()
	k, _, err := report.LoadOrCreateKey(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestMonitorReportCSVAndMarkdown(t *testing.T) {
	dir := t.TempDir()
	seedReportStore(t, dir)
	csv, stderr, code := runCLI(t, nil, false, nil, "monitor", "report", "--data-dir", dir, "--format", "csv")
	if code != ExitOK || !strings.HasPrefix(csv, strings.Join(monitor.CSVHeader, ",")+"\n") ||
		!strings.Contains(csv, "states,preflight,,,GO,1,3,33.3\n") || !strings.Contains(csv, "by_network,preflight,network,other,,1,3,33.3\n") {
		t.Errorf("csv: exit %d %s\n%s", code, stderr, csv)
	}
	md, stderr, code := runCLI(t, nil, false, nil, "monitor", "report", "--data-dir", dir, "--format", "markdown")
	if code != ExitOK || !strings.Contains(md, "| GO | 1 of 3 (33.3%) |") || !strings.Contains(md, "| `not_402` | 1 of 3 (33.3%) |") {
		t.Errorf("markdown: exit %d %s\n%s", code, stderr, md)
	}
	for _, s := range []string{csv, md} {
		if strings.Contains(strings.ToLower(s), "canary") {
			t.Errorf("a rendering carries a seller's text:\n%s", s)
		}
	}
}

func TestMonitorReportUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"monitor", "report", "--format", "xml", "--data-dir", dir},
		{"monitor", "report", "extra", "--data-dir", dir},
		{"monitor", "report", "--store", "mysql://x"},
		{"monitor", "report", "--config", filepath.Join(dir, "missing.json"), "--data-dir", dir},
	} {
		if _, _, code := runCLI(t, nil, false, nil, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
