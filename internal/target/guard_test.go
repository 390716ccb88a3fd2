package target

import (
	"net/netip"
	"testing"
)

// These tests call the guard as a function. They never dial: no packet goes
// to any address named here.
func TestAddressAllowed(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		// loopback, in every form
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false}, // IPv4-mapped
		{"::127.0.0.1", false},      // IPv4-compatible (deprecated)
		{"64:ff9b::7f00:1", false},  // NAT64
		{"64:ff9b:1::7f00:1", false},
		{"2002:7f00:1::", false}, // 6to4
		// private
		{"10.0.0.1", false},
		{"10.255.255.255", false},
		{"172.16.0.1", false},
		{"172.31.255.254", false},
		{"192.168.1.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:192.168.0.1", false},
		{"64:ff9b::a00:1", false},
		{"64:ff9b::c0a8:101", false},
		{"2002:a00:1::", false},
		{"2002:c0a8:101::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		// link-local, the cloud metadata address included
		{"169.254.169.254", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"2002:a9fe:a9fe::", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		// CGNAT
		{"100.64.0.1", false},
		{"100.127.255.254", false},
		{"::ffff:100.64.0.1", false},
		// multicast and broadcast
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"ff02::1", false},
		{"ff0e::1", false},
		// unspecified and "this network"
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"::ffff:0.0.0.0", false},
		// documentation
		{"192.0.2.1", false},
		{"198.51.100.1", false},
		{"203.0.113.1", false},
		{"2001:db8::1", false},
		{"3fff::1", false},
		// other special purpose
		{"198.18.0.1", false},
		{"192.0.0.8", false},
		{"240.0.0.1", false},
		{"2001::1", false},                              // Teredo
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false}, // Teredo embedding 127.0.0.1
		{"fec0::1", false},                              // deprecated site-local
		// transition forms are refused even when the embedded address is public
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::808:808", false},
		{"2002:808:808::", false},
		// public
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.215.14", true},
		{"100.63.255.255", true},  // just below CGNAT
		{"100.128.0.0", true},     // just above CGNAT
		{"172.15.255.255", true},  // just below 172.16/12
		{"172.32.0.0", true},      // just above 172.16/12
		{"2606:4700::1111", true}, // public IPv6
		{"2001:4860:4860::8888", true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ip, err := netip.ParseAddr(tt.addr)
			if err != nil {
				t.Fatalf("bad test address: %v", err)
			}
			if got := AddressAllowed(ip); got != tt.want {
				t.Fatalf("AddressAllowed(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if AddressAllowed(netip.Addr{}) {
		t.Error("the zero Addr is allowed")
	}
}

// The dial hook itself, called directly (no socket): refusals on any port,
// and only TCP.
func TestGuardControl(t *testing.T) {
	tests := []struct {
		network, address string
		wantErr          bool
	}{
		{"tcp4", "127.0.0.1:80", true},
		{"tcp4", "127.0.0.1:8080", true},
		{"tcp6", "[::1]:443", true},
		{"tcp6", "[::ffff:127.0.0.1]:80", true},
		{"tcp6", "[64:ff9b::7f00:1]:80", true},
		{"tcp6", "[2002:7f00:1::]:80", true},
		{"tcp4", "169.254.169.254:80", true},
		{"tcp6", "[fe80::1%eth0]:80", true},
		{"tcp4", "8.8.8.8:80", false},
		{"tcp4", "8.8.8.8:8443", false},
		{"tcp4", "8.8.8.8:1", false},
		{"tcp6", "[2606:4700::1111]:443", false},
		{"udp4", "8.8.8.8:53", true},
		{"tcp4", "not-an-address", true},
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.address, func(t *testing.T) {
			err := guardControl(tt.network, tt.address, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("guardControl = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && err != errGuard {
				t.Fatalf("refusal is not the closed-form error: %v", err)
			}
		})
	}
}
