package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/gengate/gengate"
)

// Config holds the fetcher's limits. A zero field takes its default.
type Config struct {
	// AllowPrivate switches off the address check so that inputs may be
	// fetched from loopback and private networks (--allow-private-inputs).
	// Only for setups where every client is trusted.
	AllowPrivate bool
	// MaxBytes is the largest image accepted, in bytes. Default 25 MB.
	MaxBytes int64
	// MaxPixels is the largest width*height of an image. Default 50 million.
	MaxPixels int64
	// MaxVideoBytes is the largest video accepted, in bytes. Default 100 MB.
	MaxVideoBytes int64
	// MaxInputMemory is the most one image may cost to decode, in bytes,
	// estimated from its header (see decodeCost). Default 256 MiB.
	MaxInputMemory int64
	// MaxDecodeMemory bounds the inputs in flight: the size limit of each
	// file being fetched and the decode cost of each image being checked
	// count against it, and a fetch or check that would go over it is
	// refused at once with OVERLOADED. Default 1 GiB; it is raised to what
	// the largest single input needs.
	MaxDecodeMemory int64
	// Timeout bounds a whole fetch: connecting, redirects and reading the
	// body. Default 30 s.
	Timeout time.Duration
	// MaxRedirects is how many redirects a fetch follows. Default 5;
	// negative follows none.
	MaxRedirects int
	// UserAgent is sent with every request. Default "gengate/1".
	UserAgent string
}

// Defaults of Config.
const (
	DefaultMaxBytes      = 25_000_000
	DefaultMaxPixels     = 50_000_000
	DefaultMaxVideoBytes = 100_000_000
	DefaultTimeout       = 30 * time.Second
	DefaultMaxRedirects  = 5
	DefaultUserAgent     = "gengate/1"
)

// Validate reports the first field of c that holds an impossible value.
func (c Config) Validate() error {
	switch {
	case c.MaxBytes < 0:
		return fmt.Errorf("fetch: MaxBytes must not be negative, got %d", c.MaxBytes)
	case c.MaxPixels < 0:
		return fmt.Errorf("fetch: MaxPixels must not be negative, got %d", c.MaxPixels)
	case c.MaxVideoBytes < 0:
		return fmt.Errorf("fetch: MaxVideoBytes must not be negative, got %d", c.MaxVideoBytes)
	case c.MaxInputMemory < 0:
		return fmt.Errorf("fetch: MaxInputMemory must not be negative, got %d", c.MaxInputMemory)
	case c.MaxDecodeMemory < 0:
		return fmt.Errorf("fetch: MaxDecodeMemory must not be negative, got %d", c.MaxDecodeMemory)
	case c.Timeout < 0:
		return fmt.Errorf("fetch: Timeout must not be negative, got %s", c.Timeout)
	}
	return nil
}

// withDefaults returns c with its zero (or negative) limits replaced by the
// defaults.
func (c Config) withDefaults() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = DefaultMaxPixels
	}
	if c.MaxVideoBytes <= 0 {
		c.MaxVideoBytes = DefaultMaxVideoBytes
	}
	if c.MaxInputMemory <= 0 {
		c.MaxInputMemory = DefaultMaxInputMemory
	}
	if c.MaxDecodeMemory <= 0 {
		c.MaxDecodeMemory = DefaultMaxDecodeMemory
	}
	// One input of each kind at its limit must fit on its own.
	c.MaxDecodeMemory = max(c.MaxDecodeMemory, c.MaxVideoBytes, c.MaxBytes+c.MaxInputMemory)
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	return c
}

// Fetcher fetches and checks input files. It is safe for concurrent use.
type Fetcher struct {
	cfg    Config
	client *http.Client
	// sem holds the decode memory (Config.MaxDecodeMemory) that fetches
	// and checks in flight have taken.
	sem *semaphore.Weighted
}

var _ gengate.Fetcher = (*Fetcher)(nil)

// New returns a Fetcher with its own HTTP client, which refuses to connect
// to non-public addresses unless cfg.AllowPrivate is set.
func New(cfg Config) *Fetcher {
	var allow func(netip.AddrPort) bool
	if !cfg.AllowPrivate {
		allow = publicAddrPort
	}
	return newFetcher(cfg, allow, nil)
}

// newFetcher returns a Fetcher whose dials are checked by allow (nil allows
// all) and resolved by resolver (nil for the default). Tests use it to put
// the check at a boundary other than public/private.
func newFetcher(cfg Config, allow func(netip.AddrPort) bool, resolver *net.Resolver) *Fetcher {
	cfg = cfg.withDefaults()
	dialer := &net.Dialer{
		Timeout:        cfg.Timeout,
		KeepAlive:      30 * time.Second,
		Resolver:       resolver,
		ControlContext: dialControl(allow),
	}
	transport := &http.Transport{
		// No proxy, even from the environment: a proxy would connect on
		// our behalf and the address check would see only the proxy.
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// Without transparent gzip, Content-Length is the real size and
		// the read limit counts the bytes that arrive.
		DisableCompression: true,
		MaxIdleConns:       64,
		IdleConnTimeout:    90 * time.Second,
	}
	f := &Fetcher{cfg: cfg, sem: semaphore.NewWeighted(cfg.MaxDecodeMemory)}
	f.client = &http.Client{Transport: transport, CheckRedirect: f.checkRedirect}
	return f
}

// Fetch fetches the file named by rawURL, an http, https or data: URL, and
// checks that it is of the given kind: a PNG, JPEG, GIF or WebP image that
// decodes and is within the pixel limit, or an MP4/QuickTime or
// WebM/Matroska video. Its errors are *gengate.Error values with input field
// codes.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, kind gengate.InputKind) (gengate.Input, error) {
	var limit int64
	switch kind {
	case gengate.KindImage:
		limit = f.cfg.MaxBytes
	case gengate.KindVideo:
		limit = f.cfg.MaxVideoBytes
	default:
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported, "inputs of kind %q are not fetched", kind)
	}
	// The file being read counts against the decode memory at its limit
	// until it is checked.
	release, err := f.reserve(ctx, limit)
	if err != nil {
		return gengate.Input{}, err
	}
	defer release()
	var data []byte
	if len(rawURL) >= len("data:") && strings.EqualFold(rawURL[:len("data:")], "data:") {
		data, err = decodeDataURL(rawURL, limit)
	} else {
		data, err = f.get(ctx, rawURL, kind, limit)
	}
	if err != nil {
		return gengate.Input{}, err
	}
	if kind == gengate.KindVideo {
		return checkVideo(data)
	}
	return f.checkImage(ctx, data, limit)
}

// get fetches an http or https URL, reading at most limit bytes.
func (f *Fetcher) get(ctx context.Context, rawURL string, kind gengate.InputKind, limit int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "input URL is malformed")
	}
	switch u.Scheme {
	case "http", "https":
	case "":
		return nil, gengate.Errorf(gengate.InputNotSupported, "input URL must be an http, https or data: URL")
	default:
		return nil, gengate.Errorf(gengate.InputNotSupported, "input URL scheme %q is not supported; use http, https or data", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "input URL is malformed: it has no host")
	}

	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "input URL is malformed")
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	if kind == gengate.KindVideo {
		req.Header.Set("Accept", "video/mp4, video/quicktime, video/webm, video/x-matroska")
	} else {
		req.Header.Set("Accept", "image/png, image/jpeg, image/gif, image/webp")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.requestError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "input URL answered with HTTP status %d", resp.StatusCode)
	}
	tooLarge := gengate.Errorf(gengate.InputTooLarge, "input is larger than the %d bytes allowed", limit)
	if resp.ContentLength > limit {
		return nil, tooLarge
	}
	// Read one byte past the limit to tell "exactly at the limit" from
	// "over it" when the server sent no Content-Length, or a false one.
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, f.requestError(ctx, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// checkRedirect is the client's redirect policy: at most MaxRedirects hops,
// each to an http or https URL. The address of every hop is checked when it
// is dialed.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > max(f.cfg.MaxRedirects, 0) {
		return errTooManyRedirects
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return errRedirectScheme
	}
	return nil
}

// requestError turns an error of the HTTP client into a client-safe
// *gengate.Error. ctx is the fetch's own context.
func (f *Fetcher) requestError(ctx context.Context, err error) error {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, errAddrNotAllowed):
		return gengate.Errorf(gengate.InputNotAllowed, "input URL resolves to a private or loopback address, which is not allowed; an operator who trusts every client can allow it with --allow-private-inputs")
	case errors.Is(err, errTooManyRedirects):
		return gengate.Errorf(gengate.InputFetchFailed, "input URL redirected more than %d times", max(f.cfg.MaxRedirects, 0))
	case errors.Is(err, errRedirectScheme):
		return gengate.Errorf(gengate.InputNotSupported, "input URL redirected to a URL that is not http or https")
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return gengate.Errorf(gengate.InputFetchFailed, "fetching the input URL timed out")
	case ctx.Err() != nil:
		return gengate.Errorf(gengate.InputFetchFailed, "fetching the input URL was canceled")
	case errors.As(err, &dnsErr):
		return gengate.Errorf(gengate.InputFetchFailed, "input URL host could not be resolved")
	}
	return gengate.Errorf(gengate.InputFetchFailed, "input URL could not be fetched")
}
