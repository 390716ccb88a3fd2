package monitor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/lint"
	"github.com/exchangerebel/payability/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// reportNow is the golden report's clock: a UTC afternoon.
var reportNow = time.Date(2026, 3, 5, 15, 30, 0, 0, time.UTC)

// goldenGroups: 10 endpoints' newest preflight and 4 endpoints' newest lint,
// with a network, a scheme and a reason code of a seller's own (the canary)
// that must come out as "other".
func goldenGroups() map[string][]store.LatestGroup {
	return map[string][]store.LatestGroup{
		"preflight": {
			{Op: "preflight", State: "GO", Network: "eip155:8453", Scheme: "exact", X402Version: 2, Source: "config", Endpoints: 5},
			{Op: "preflight", State: "GO", Network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", Scheme: "exact", X402Version: 2, Source: "config", Endpoints: 1},
			{Op: "preflight", State: "HOLD", Network: "eip155:8453", Scheme: "exact", X402Version: 1, Source: "config", Reasons: []string{"lint_warnings", "method_open"}, Endpoints: 2},
			{Op: "preflight", State: "STOP", Network: "", Scheme: "", Source: "", Reasons: []string{"not_402"}, Endpoints: 1},
			{Op: "preflight", State: "STOP", Network: "solana:CANARYsellerTEXT", Scheme: "CANARYscheme", X402Version: 2, Source: "config", Reasons: []string{"fail_open", "CANARY-code"}, Endpoints: 1},
		},
		"lint": {
			{Op: "lint", State: "conforms", Network: "eip155:8453", Scheme: "exact", X402Version: 2, Source: "config", Endpoints: 2},
			{Op: "lint", State: "errors", Network: "eip155:8453", Scheme: "upto", X402Version: 2, Source: "config", Reasons: []string{firstRule(), "CANARY-rule"}, Endpoints: 1},
			{Op: "lint", State: "warnings", Network: "eip155:84532", Scheme: "exact", X402Version: 1, Source: "config", Endpoints: 1},
		},
	}
}

func firstRule() string { return lint.Rules().Rules[0].ID }

func goldenDays() []store.StateDay {
	d := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	return []store.StateDay{
		{Day: d, Op: "preflight", State: "GO", Checks: 30},
		{Day: d, Op: "preflight", State: "STOP", Checks: 10},
		{Day: d, Op: "lint", State: "conforms", Checks: 12},
		{Day: d.AddDate(0, 0, 1), Op: "preflight", State: "HOLD", Checks: 3},
		{Day: d.AddDate(0, 0, 1), Op: "preflight", State: "CANARYstate", Checks: 1},
		{Day: d.AddDate(0, 0, -9), Op: "preflight", State: "GO", Checks: 99}, // before the window
	}
}

func goldenReport() EcosystemReport {
	return ReportOf(goldenGroups(), goldenDays(), reportNow, 3*24*time.Hour)
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, got)
	}
	if bytes.Contains(bytes.ToLower(got), []byte("canary")) {
		t.Errorf("%s carries a seller's text (canary)", name)
	}
}

func TestReportGolden(t *testing.T) {
	r := goldenReport()
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "ecosystem-report.json", append(j, '\n'))
	var c, m bytes.Buffer
	if err := WriteReportCSV(&c, r); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "ecosystem-report.csv", c.Bytes())
	if err := WriteReportMarkdown(&m, r); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "ecosystem-report.md", m.Bytes())
}

func TestPortionOf(t *testing.T) {
	for _, tc := range []struct {
		count, of int64
		want      string // "" for null
	}{
		{0, 0, ""},
		{0, 3, "0.0"},
		{1, 3, "33.3"},
		{2, 3, "66.7"},
		{1, 8, "12.5"}, // half up
		{1, 16, "6.3"}, // 6.25 → 6.3
		{3, 3, "100.0"},
		{1, 2000, "0.1"}, // 0.05 → 0.1
		{1, 2001, "0.0"},
	} {
		p := PortionOf(tc.count, tc.of)
		got := ""
		if p.Percent != nil {
			got = *p.Percent
		}
		if got != tc.want || p.Count != tc.count || p.Of != tc.of {
			t.Errorf("PortionOf(%d, %d) = %+v (%q), want %q", tc.count, tc.of, p, got, tc.want)
		}
	}
}

// TestReportCounts: the denominators add up: the states of an op are its
// endpoints, every breakdown's endpoints sum to the op's, each value's
// states to its endpoints; a code counts an endpoint once; the window's
// days are all listed, the days before it left out.
func TestReportCounts(t *testing.T) {
	r := goldenReport()
	for _, o := range r.Ops {
		var sum int64
		for _, s := range o.States {
			sum += s.Count
			if s.Of != o.Endpoints {
				t.Errorf("%s %s: of %d, want %d", o.Op, s.State, s.Of, o.Endpoints)
			}
		}
		if sum != o.Endpoints {
			t.Errorf("%s: states sum to %d, want %d", o.Op, sum, o.Endpoints)
		}
		for _, d := range breakdowns(o) {
			var n int64
			for _, b := range d.rows {
				n += b.Endpoints.Count
				var s int64
				for _, st := range b.States {
					s += st.Count
				}
				if s != b.Endpoints.Count {
					t.Errorf("%s by %s %s: states sum %d, endpoints %d", o.Op, d.dim, b.Value, s, b.Endpoints.Count)
				}
			}
			if n != o.Endpoints {
				t.Errorf("%s by %s: %d endpoints, want %d", o.Op, d.dim, n, o.Endpoints)
			}
		}
	}
	if r.Ops[0].Endpoints != 10 || r.Ops[1].Endpoints != 4 {
		t.Errorf("endpoints %d, %d; want 10, 4", r.Ops[0].Endpoints, r.Ops[1].Endpoints)
	}
	if len(r.Daily) != 4 || r.Daily[0].Date != "2026-03-02" || r.Daily[3].Date != "2026-03-05" {
		t.Fatalf("daily %+v, want 2026-03-02 to 2026-03-05", r.Daily)
	}
	if d := r.Daily[2].Ops[0]; d.Checks != 4 || d.States[3].State != ValueOther || d.States[3].Count != 1 {
		t.Errorf("2026-03-04 preflight: %+v, want 4 checks, one other", d)
	}
	if d := r.Daily[0].Ops[0]; d.Checks != 0 || d.States[0].Percent != nil {
		t.Errorf("a day with no check: %+v, want 0 and null shares", d)
	}
}

func TestReportEmpty(t *testing.T) {
	r := ReportOf(nil, nil, reportNow, DefaultRetention)
	if len(r.Daily) != 31 || r.Window.Days != 31 {
		t.Errorf("days = %d, want 31", len(r.Daily))
	}
	for _, o := range r.Ops {
		if o.Endpoints != 0 || len(o.TopCodes) != 0 || o.States[0].Percent != nil || o.ByNetwork == nil {
			t.Errorf("%s: %+v, want nothing counted, null shares, empty lists", o.Op, o)
		}
	}
	var b bytes.Buffer
	if err := WriteReportMarkdown(&b, r); err != nil || !strings.Contains(b.String(), "None observed.") {
		t.Errorf("markdown of an empty report: %v\n%s", err, b.String())
	}
}

func TestLintEntryFacts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []lint.EntrySummary
		scheme  string
		version int
		network string
	}{
		{"none", nil, "", 0, ""},
		{"header first", []lint.EntrySummary{
			{Leg: lint.LegBody, X402Version: 1, Scheme: "exact", Network: "base"},
			{Leg: lint.LegHeader, X402Version: 2, Scheme: "upto", Network: "eip155:8453"},
		}, "upto", 2, "eip155:8453"},
		{"v1 body name mapped", []lint.EntrySummary{{Leg: lint.LegBody, X402Version: 1, Scheme: "exact", Network: "base-sepolia"}}, "exact", 1, "eip155:84532"},
		{"seller text kept out", []lint.EntrySummary{{Leg: lint.LegBody, X402Version: 7, Scheme: "CANARY scheme", Network: "CANARY network"}}, "other", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, v, n := LintEntryFacts(tc.entries)
			if s != tc.scheme || v != tc.version || n != tc.network {
				t.Errorf("got %q %d %q, want %q %d %q", s, v, n, tc.scheme, tc.version, tc.network)
			}
		})
	}
}
