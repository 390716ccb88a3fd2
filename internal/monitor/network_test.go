package monitor

import (
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/preflight"
)

// TestPreflightObservationNetwork: the observation keeps the CAIP-2 network
// of the entry preflight selected (the entry its terms hash is of), and
// nothing when no entry was selected or the network is not CAIP-2.
func TestPreflightObservationNetwork(t *testing.T) {
	hash := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name string
		r    preflight.Result
		want string
	}{
		{"selected Base entry", preflight.Result{Decision: preflight.Go, TermsSHA256: &hash,
			SelectedEntry: &preflight.SelectedEntry{Leg: "body", X402Version: 1, Scheme: "exact", Network: "eip155:8453"}}, "eip155:8453"},
		{"selected entry with incomplete terms keeps its network", preflight.Result{Decision: preflight.Hold,
			SelectedEntry: &preflight.SelectedEntry{Leg: "header", X402Version: 2, Scheme: "exact", Network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}}, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"},
		{"no entry selected", preflight.Result{Decision: preflight.Stop, Reasons: []preflight.Reason{preflight.ReasonNot402}}, ""},
		{"a network that is not CAIP-2 is not kept", preflight.Result{Decision: preflight.Hold,
			SelectedEntry: &preflight.SelectedEntry{Network: "base"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PreflightObservation(tc.r).Network; got != tc.want {
				t.Errorf("network %q, want %q", got, tc.want)
			}
		})
	}
}
