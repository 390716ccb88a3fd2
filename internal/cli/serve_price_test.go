//go:build !quick

package cli

import "testing"

// TestUSDPrice: --price-preflight and --price-lint read decimal dollars
// into USDC atomic units, every edge refused with a usage error.
func TestUSDPrice(t *testing.T) {
	for in, want := range map[string]uint64{
		"0.02": 20000, "$0.01": 10000, "1": 1000000, "0.000001": 1, "1000": 1000000000, "1000.000000": 1000000000, "0.1": 100000,
	} {
		var p usdPrice
		if err := p.Set(in); err != nil || uint64(p) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, p, err, want)
		}
	}
	for _, in := range []string{"", "0", "0.0", "0.0000001", "1000.000001", "-1", "1e3", "0,02", ".5", "$", "1.2.3", " 1", "0x10", "99999999999999999999"} {
		var p usdPrice
		if err := p.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, p)
		}
	}
	for units, want := range map[usdPrice]string{20000: "0.02", 10000: "0.01", 1: "0.000001", 1500000: "1.50", 1000000: "1.00"} {
		if got := units.String(); got != want {
			t.Errorf("String(%d) = %q, want %q", units, got, want)
		}
	}
}

// FuzzUSDPrice: whatever the flag value, Set never panics; a value it
// takes is 1 to 1,000,000,000 units and reads back the same from String.
func FuzzUSDPrice(f *testing.F) {
	for _, s := range []string{"0.02", "$0.01", "1000", "0.000001", "0", "1e3", "", "..", "0.0000001", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var p usdPrice
		if p.Set(in) != nil {
			return
		}
		if p < 1 || p > 1000*1_000_000 {
			t.Fatalf("Set(%q) = %d units, out of range", in, p)
		}
		var back usdPrice
		if err := back.Set(p.String()); err != nil || back != p {
			t.Fatalf("Set(%q) = %d, String %q reads back as %d (%v)", in, p, p.String(), back, err)
		}
	})
}
