package target

import (
	"errors"
	"net/netip"
	"syscall"

	"code.dny.dev/ssrf"
)

// errGuard is the closed-form refusal of the address guard. It names neither
// the host nor the address.
var errGuard = errors.New("target: destination address refused by the address guard")

// guardian is the ssrf library's deny list (IANA special-purpose registries,
// and all IPv6 outside 2000::/3), on any port: the published policy limits
// addresses, not ports.
var guardian = ssrf.New(ssrf.WithAnyPort())

// guardControl is the net.Dialer Control hook. It runs after name resolution,
// on the exact address about to be connected, so a name that rebinds to a
// non-public address between checks cannot pass.
func guardControl(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return errGuard
	}
	if guardian.Safe(network, address, nil) != nil {
		return errGuard
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !AddressAllowed(ap.Addr()) {
		return errGuard
	}
	return nil
}

// AddressAllowed reports whether the address guard lets a connection go to ip.
// It is true only for public unicast addresses: both the ssrf library's list
// and our own checks below must agree. Our checks do not rely on the library
// refusing IPv6 transition forms wholesale: they also unwrap the IPv4 address
// embedded in IPv4-mapped, IPv4-compatible, NAT64, 6to4 and Teredo addresses
// and refuse the address when the embedded one is not public.
func AddressAllowed(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" { // a zone only exists on scoped addresses
		return false
	}
	if guardian.SafeAddr(ip) != nil {
		return false
	}
	if ip.Is4() {
		return publicV4(ip)
	}
	return publicV6(ip)
}

// Special-purpose IPv4 ranges that netip's predicates do not already name.
var deniedV4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (shared address space)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the limited broadcast address
}

func publicV4(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() ||
		ip.IsUnspecified() || !ip.IsGlobalUnicast() {
		return false
	}
	for _, p := range deniedV4 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

var (
	globalUnicastV6 = netip.MustParsePrefix("2000::/3")
	compatV6        = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible form
	nat64V6         = netip.MustParsePrefix("64:ff9b::/96")   // well-known NAT64 prefix
	nat64LocalV6    = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64 prefix
	sixToFourV6     = netip.MustParsePrefix("2002::/16")      // 6to4
	teredoV6        = netip.MustParsePrefix("2001::/32")      // Teredo
)

// Special-purpose IPv6 ranges inside 2000::/3.
var deniedV6 = []netip.Prefix{
	netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments (Teredo included)
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	sixToFourV6,                            // 6to4: a tunnel into IPv4 space; refused whole
	netip.MustParsePrefix("3fff::/20"),     // documentation
}

func publicV6(ip netip.Addr) bool {
	if v4, ok := embeddedV4(ip); ok && !publicV4(v4) {
		return false
	}
	if ip.Is4In6() || compatV6.Contains(ip) || nat64V6.Contains(ip) || nat64LocalV6.Contains(ip) {
		// Transition forms: never dial them as IPv6 even when the embedded
		// address is public; a resolver has no business returning them.
		return false
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() ||
		ip.IsUnspecified() || !globalUnicastV6.Contains(ip) {
		return false
	}
	for _, p := range deniedV6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// embeddedV4 returns the IPv4 address an IPv6 transition form carries.
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case ip.Is4In6(), compatV6.Contains(ip), nat64V6.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFourV6.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredoV6.Contains(ip): // the client address, stored inverted
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}
