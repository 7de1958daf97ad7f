package fetch

import (
	"context"
	"net/netip"
	"syscall"
)

// fetchError is an internal sentinel error. Being a string type, its values
// can be constants, so the package holds no error variables.
type fetchError string

func (e fetchError) Error() string { return string(e) }

// Sentinels raised inside the HTTP client and mapped to client-facing codes
// by Fetch.
const (
	errAddrNotAllowed   fetchError = "fetch: address not allowed"
	errTooManyRedirects fetchError = "fetch: too many redirects"
	errRedirectScheme   fetchError = "fetch: redirect to a non-http(s) URL"
)

// dialControl returns the net.Dialer ControlContext function of a fetcher.
// It runs after the socket is created and before it connects, with the
// resolved address actually being dialed, so no packet leaves for a refused
// address and a host name cannot resolve to one address when checked and to
// another when used. allow reports whether an address may be dialed; nil
// allows every address.
func dialControl(allow func(netip.AddrPort) bool) func(ctx context.Context, network, address string, c syscall.RawConn) error {
	return func(_ context.Context, network, address string, _ syscall.RawConn) error {
		switch network {
		case "tcp", "tcp4", "tcp6":
		default:
			return errAddrNotAllowed
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return errAddrNotAllowed
		}
		if allow != nil && !allow(ap) {
			return errAddrNotAllowed
		}
		return nil
	}
}

// publicAddrPort reports whether ap's address is public; see publicAddr.
func publicAddrPort(ap netip.AddrPort) bool { return publicAddr(ap.Addr()) }

// publicAddr reports whether a is a public unicast address that a fetch may
// connect to. It refuses loopback, private, link-local, CGNAT, multicast,
// broadcast, unspecified, reserved and documentation ranges, and looks
// through the IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64
// 64:ff9b::/96 and 6to4 2002::/16) to judge the embedded address.
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	// A zone only qualifies scoped (link-local) addresses, which are refused
	// anyway; drop it because a zoned address never matches a prefix.
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return publicV4(a)
	}
	// NAT64 (RFC 6052): the IPv4 address is in the last 32 bits.
	if pfx6(0x0064, 0xff9b, 0, 0, 0, 0, 96).Contains(a) {
		b := a.As16()
		return publicV4(netip.AddrFrom4([4]byte(b[12:16])))
	}
	// 6to4 (RFC 3056): the IPv4 address is in bits 16 to 48.
	if pfx6(0x2002, 0, 0, 0, 0, 0, 16).Contains(a) {
		b := a.As16()
		return publicV4(netip.AddrFrom4([4]byte(b[2:6])))
	}
	// Every allocated global unicast IPv6 address is in 2000::/3; this
	// refuses ::, ::1, IPv4-compatible ::/96, 100::/64, 64:ff9b:1::/48,
	// fc00::/7, fe80::/10, fec0::/10 and ff00::/8 at once.
	if !pfx6(0x2000, 0, 0, 0, 0, 0, 3).Contains(a) {
		return false
	}
	for _, p := range [...]netip.Prefix{
		pfx6(0x2001, 0x0000, 0, 0, 0, 0, 32), // Teredo: embeds an obfuscated IPv4 address
		pfx6(0x2001, 0x0002, 0, 0, 0, 0, 48), // benchmarking
		pfx6(0x2001, 0x0db8, 0, 0, 0, 0, 32), // documentation
		pfx6(0x3fff, 0x0000, 0, 0, 0, 0, 20), // documentation (RFC 9637)
	} {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// publicV4 reports whether the IPv4 address a is public.
func publicV4(a netip.Addr) bool {
	for _, p := range [...]netip.Prefix{
		pfx4(0, 0, 0, 0, 8),       // "this network", including 0.0.0.0
		pfx4(10, 0, 0, 0, 8),      // private
		pfx4(100, 64, 0, 0, 10),   // carrier-grade NAT
		pfx4(127, 0, 0, 0, 8),     // loopback
		pfx4(169, 254, 0, 0, 16),  // link-local, including 169.254.169.254 metadata
		pfx4(172, 16, 0, 0, 12),   // private
		pfx4(192, 0, 0, 0, 24),    // IETF protocol assignments
		pfx4(192, 0, 2, 0, 24),    // documentation (TEST-NET-1)
		pfx4(192, 88, 99, 0, 24),  // 6to4 relay anycast
		pfx4(192, 168, 0, 0, 16),  // private
		pfx4(198, 18, 0, 0, 15),   // benchmarking
		pfx4(198, 51, 100, 0, 24), // documentation (TEST-NET-2)
		pfx4(203, 0, 113, 0, 24),  // documentation (TEST-NET-3)
		pfx4(224, 0, 0, 0, 4),     // multicast
		pfx4(240, 0, 0, 0, 4),     // reserved, including 255.255.255.255 broadcast
	} {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func pfx4(a, b, c, d byte, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{a, b, c, d}), bits)
}

// pfx6 builds an IPv6 prefix from its first six 16-bit groups.
func pfx6(g0, g1, g2, g3, g4, g5 uint16, bits int) netip.Prefix {
	var b [16]byte
	for i, g := range [...]uint16{g0, g1, g2, g3, g4, g5} {
		b[2*i], b[2*i+1] = byte(g>>8), byte(g)
	}
	return netip.PrefixFrom(netip.AddrFrom16(b), bits)
}
