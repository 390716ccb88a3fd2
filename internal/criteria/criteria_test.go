package criteria

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEmbeddedMatchesSharedSpec(t *testing.T) {
	// The shared spec is the source; the embedded copy must not drift from it.
	for _, f := range []string{"payability.criteria.json", "rail-probe.criteria.json"} {
		shared, err := os.ReadFile("../../../shared/spec/" + f)
		if err != nil {
			t.Skipf("shared spec not beside the checkout: %v", err)
		}
		local, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shared, local) {
			t.Errorf("%s differs from ../shared/spec/%s", f, f)
		}
	}
}

func TestPublishedConstants(t *testing.T) {
	p, r := Payability(), RailProbe()
	if got, want := strings.Join(p.States, ","), "POPULATED,AMOUNTS-ONLY,UNCONFIGURED,HEADER-MISSING,RESOURCE-MISMATCH,NOT-A-402"; got != want {
		t.Errorf("check states = %s, want %s", got, want)
	}
	if got, want := strings.Join(p.MemoOp.States, ","), "BOUND,MEMO-REUSED,LEG-MISMATCH,MEMO-ABSENT,NOT-A-402"; got != want {
		t.Errorf("memo states = %s, want %s", got, want)
	}
	if got, want := strings.Join(r.Grades, ","), "PRESENT-FAIL-CLOSED,PRESENT-FAIL-DIRTY,ABSENT"; got != want {
		t.Errorf("grades = %s, want %s", got, want)
	}
	if p.TargetFetch.BodyCapBytes != 65536 || r.TargetFetch.BodyCapBytes != 65536 {
		t.Error("body cap is not 65,536")
	}
	if p.Timeout() != 5*time.Second || r.Timeout() != 5*time.Second {
		t.Error("timeout is not 5 s")
	}
	if p.InputContract.Caps.BodyBytes != 262144 {
		t.Error("request body cap is not 262,144")
	}
	if p.Price.USDCUnitsPerCall != 10000 || p.MemoOp.Price.USDCUnitsPerCall != 10000 || r.Price.USDCUnitsPerCall != 20000 {
		t.Error("prices differ from the published ones")
	}
	if len(r.ProbeInventory) != 7 {
		t.Errorf("probe inventory has %d probes", len(r.ProbeInventory))
	}
	if len(p.LedgerClosedFields()) != 9 || len(r.LedgerClosedFields()) != 10 || len(p.MemoOp.Ledger.ClosedFields) != 8 {
		t.Error("closed ledger field lists changed")
	}
}

func TestVerdictLines(t *testing.T) {
	end := time.Date(2026, 11, 29, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	tests := []struct{ got, want string }{
		{CheckLine("POPULATED", end), "CHALLENGE PAYABILITY VERDICT — state: POPULATED — 2026-11-29T14:04:05.123Z"},
		{MemoLine("BOUND", end), "MEMO BINDING VERDICT — state: BOUND — 2026-11-29T14:04:05.123Z"},
		{ProbeLine("ABSENT", "UNGRADED", end), "RAIL PROBE VERDICT — direct: ABSENT · facilitator: UNGRADED — 2026-11-29T14:04:05.123Z"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestWithPinChangesOnlyThePin(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, svc := range []string{ServicePayability, ServiceRailProbe} {
		raw := Raw(svc)
		got, err := WithPin(raw, pin)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(raw) {
			t.Fatalf("length changed: %d vs %d", len(got), len(raw))
		}
		var d Doc
		if err := json.Unmarshal(got, &d); err != nil {
			t.Fatal(err)
		}
		if d.Corpus.SHA256 != pin {
			t.Errorf("%s pin = %s", svc, d.Corpus.SHA256)
		}
		diff := 0
		for i := range raw {
			if raw[i] != got[i] {
				diff++
			}
		}
		if diff > 64 {
			t.Errorf("%d bytes changed", diff)
		}
	}
	if _, err := WithPin(Raw(ServicePayability), "XYZ"); err == nil {
		t.Error("a malformed pin was accepted")
	}
}
