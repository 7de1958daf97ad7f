package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The client's address behind a proxy. A request's peer is the proxy's
// address, so without this every client behind one proxy shares its
// sign-in budget and its log lines. Only when the peer is one of the
// operator's trusted proxies (serve --trusted-proxies) are its
// X-Forwarded-For (or, without one, Forwarded) headers believed: the
// client is the last address in the chain that is not itself a trusted
// proxy, read from the right, so that addresses a client writes into the
// header itself (which the proxy appends to) are never taken. From any
// other peer the headers are ignored. The address found replaces the
// request's RemoteAddr before any route sees it, so that the sign-in
// limits, any limit by address, and the request log all count the client.

// TrustedProxies are the networks whose forwarding headers are believed.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads a comma-separated list of CIDR prefixes or
// single addresses ("10.0.0.0/8, 127.0.0.1").
func ParseTrustedProxies(s string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR prefix", part)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR prefix", part)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (t TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the request's client address (host only): the peer's, or
// behind a trusted proxy the one its forwarding headers name.
func (t TrustedProxies) ClientAddr(r *http.Request) string {
	peer := hostOf(r.RemoteAddr)
	pa, err := netip.ParseAddr(peer)
	if err != nil || len(t) == 0 || !t.trusts(pa) {
		return peer
	}
	chain := forwardedChain(r.Header)
	client := pa
	for i := len(chain) - 1; i >= 0; i-- {
		a, ok := parseForwardedAddr(chain[i])
		if !ok {
			break // a garbled hop: stop at the last address known good
		}
		client = a.Unmap()
		if !t.trusts(client) {
			break
		}
	}
	return client.String()
}

// forwardedChain lists the addresses of X-Forwarded-For (all its lines,
// in order) or, when it has none, of Forwarded's for= parameters.
func forwardedChain(h http.Header) []string {
	var chain []string
	for _, line := range h.Values("X-Forwarded-For") {
		for _, a := range strings.Split(line, ",") {
			if a = strings.TrimSpace(a); a != "" {
				chain = append(chain, a)
			}
		}
	}
	if len(chain) > 0 {
		return chain
	}
	for _, line := range h.Values("Forwarded") {
		for _, elem := range strings.Split(line, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(k, "for") {
					chain = append(chain, strings.Trim(v, `"`))
				}
			}
		}
	}
	return chain
}

// parseForwardedAddr reads one hop: 192.0.2.1, 192.0.2.1:4711,
// 2001:db8::1, [2001:db8::1]:4711. Obfuscated names ("unknown", "_x")
// are not addresses.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a, true
	}
	return netip.Addr{}, false
}

func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}
