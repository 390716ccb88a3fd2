package server

import (
	"net/netip"
	"strconv"
	"testing"
)

func TestLegacyIPv4(t *testing.T) {
	tests := []struct {
		host string
		want string // "" when it is not an IPv4 form
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"192.168.257", "192.168.1.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"255.16777215", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"1.256.0.1", ""},
		{"1.2.65536", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"", ""},
		{"08.0.0.1", ""}, // not octal
		{"0xg", ""},
		{"seller.example", ""},
		{"1.2.3.example", ""},
		{"+1.2.3.4", ""},
	}
	for _, tt := range tests {
		got, ok := legacyIPv4(tt.host)
		if tt.want == "" {
			if ok {
				t.Errorf("legacyIPv4(%q) = %v, want no address", tt.host, got)
			}
			continue
		}
		if !ok || got != netip.MustParseAddr(tt.want) {
			t.Errorf("legacyIPv4(%q) = %v %v, want %s", tt.host, got, ok, tt.want)
		}
	}
}

// FuzzLegacyIPv4: never panics, and every dotted-decimal address reads as
// itself (the legacy forms only add readings, they never change the
// ordinary one); a number reads as the address of its 32 bits.
func FuzzLegacyIPv4(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f000001", "0177.0.0.1", "2130706433", "127.1", "1..2", "0x", "4294967296", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got, ok := legacyIPv4(host)
		if ip, err := netip.ParseAddr(host); err == nil && ip.Is4() {
			if !ok || got != ip {
				t.Fatalf("legacyIPv4(%q) = %v %v, want %v", host, got, ok, ip)
			}
		}
		if n, err := strconv.ParseUint(host, 10, 32); err == nil && (host == "0" || host[0] != '0') {
			want := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
			if !ok || got != want {
				t.Fatalf("legacyIPv4(%q) = %v %v, want %v", host, got, ok, want)
			}
		}
		if ok && !got.Is4() {
			t.Fatalf("legacyIPv4(%q) = %v, not IPv4", host, got)
		}
	})
}
