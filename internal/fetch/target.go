package fetch

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/gengate/gengate"
)

// TargetGuard returns the check of a URL the server will call back (a
// webhookUrl): its host must resolve only to public addresses, under the
// same rule as input fetches, unless allowPrivate (--allow-private-inputs)
// is set. The delivery client (TargetClient) checks again at each dial, so a
// name that later resolves elsewhere gains nothing.
func TargetGuard(allowPrivate bool) func(ctx context.Context, rawURL string) error {
	return func(ctx context.Context, rawURL string) error {
		if allowPrivate {
			return nil
		}
		u, err := url.Parse(rawURL)
		if err != nil {
			return gengate.Errorf(gengate.FieldValue, "is not a URL")
		}
		host := u.Hostname()
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else {
			addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			if err != nil || len(addrs) == 0 {
				return gengate.Errorf(gengate.InputFetchFailed, "host %q does not resolve", host)
			}
		}
		for _, a := range addrs {
			if !publicAddr(a.Unmap()) {
				return gengate.Errorf(gengate.InputNotAllowed, "resolves to a private or loopback address, which is not allowed; "+
					"an operator who trusts every client can allow it with --allow-private-inputs")
			}
		}
		return nil
	}
}

// TargetClient returns an HTTP client for calls back to client-given URLs
// (webhook deliveries): no proxy, no redirects followed, every dial checked
// against the public-address rule unless allowPrivate is set, and timeout
// for the whole exchange.
func TargetClient(allowPrivate bool, timeout time.Duration) *http.Client {
	var allow func(netip.AddrPort) bool
	if !allowPrivate {
		allow = publicAddrPort
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, ControlContext: dialControl(allow)}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: 64 << 10, MaxIdleConns: 16, IdleConnTimeout: 90 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
