package upstream

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gengate/gengate/internal/fetch"
)

// Credentials and the address guard.
//
// A provider's key goes only to a URL whose parsed scheme, host and port
// equal those of the provider's configured base URL: not to a host that
// merely starts with it (https://queue.fal.run.evil.tld), not to one
// hidden behind user info (https://queue.fal.run@evil.tld), not to
// another port or scheme. The check runs in the client's transport, so it
// holds for every hop of a redirect too, and for every header a provider
// sends its key in (x-goog-api-key is not one Go drops on redirects).
//
// Every request to another host (output files on a CDN, a redirect) goes
// through a transport whose dials refuse non-public addresses, the same
// check as input fetches (internal/fetch), unless AllowPrivate is set
// (--allow-private-inputs). The provider's own host is never guarded, so a
// ComfyUI server on the local network, or a fake on loopback in tests,
// works without it.

// origin is u's scheme://host:port, lower case, with the scheme's default
// port filled in; "" when u has no host or an unknown scheme without port.
func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	if host == "" || port == "" {
		return ""
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// Own reports whether u is on the provider's own origin: the same scheme,
// host and port as BaseURL. Only such URLs get the credentials.
func (c *Client) Own(u *url.URL) bool {
	o := c.baseOrigin
	if c.originOf != c.BaseURL || c.originOf == "" { // BaseURL set after NewClient, or no NewClient
		o = urlOrigin(c.BaseURL)
	}
	return o != "" && o == origin(u)
}

// urlOrigin is the origin of the URL s, "" when it has none.
func urlOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return origin(u)
}

// client is the HTTP client of one call: c.HTTP with a transport that adds
// the credentials on the provider's own origin only and sends every other
// request through the address guard.
func (c *Client) client() *http.Client {
	base := c.httpClient()
	cl := *base
	own := base.Transport
	if own == nil {
		own = http.DefaultTransport
	}
	other := own
	if !c.AllowPrivate {
		other = c.guard
		if other == nil { // a Client built without NewClient
			other = guardTransport(own, true)
		}
	}
	cl.Transport = &originTransport{c: c, own: own, other: other}
	return &cl
}

type originTransport struct {
	c          *Client
	own, other http.RoundTripper
}

func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.c.Own(req.URL) {
		return t.other.RoundTrip(req)
	}
	if t.c.Auth != nil {
		req = req.Clone(req.Context())
		t.c.Auth(req)
	}
	return t.own.RoundTrip(req)
}

// guardTransport is a transport like base (its TLS settings, timeouts)
// whose dials refuse non-public addresses, with no proxy: a proxy would
// connect on gengate's behalf and the check would see only the proxy.
// once makes it close each connection after its request, for a transport
// built for a single call.
func guardTransport(base http.RoundTripper, once bool) http.RoundTripper {
	var t *http.Transport
	if bt, ok := base.(*http.Transport); ok {
		t = bt.Clone()
	} else {
		t = &http.Transport{TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 90 * time.Second,
			MaxIdleConnsPerHost: 16, ForceAttemptHTTP2: true}
	}
	t.Proxy = nil
	t.DialTLSContext = nil
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		ControlContext: fetch.PublicOnly}).DialContext
	t.DisableKeepAlives = once
	return t
}
