package fetch

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// serveBytes serves b with the given Content-Type and an explicit
// Content-Length.
func serveBytes(contentType string, b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
}

// serveChunked serves b in flushed pieces, so without Content-Length.
func serveChunked(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for len(b) > 0 {
			n := min(len(b), 512)
			w.Write(b[:n])
			w.(http.Flusher).Flush()
			b = b[n:]
		}
	})
}

// serveEndless streams bytes until the client goes away.
func serveEndless() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 4096)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
}

// serveHugeLength claims a huge Content-Length, sends a few bytes and then
// stalls: only a client that trusts the header without reading returns
// quickly with the right code.
func serveHugeLength() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000000")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
}

// serveSlow answers nothing until the client goes away.
func serveSlow() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
}

func serveStatus(code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, http.StatusText(code), code)
	})
}

func redirectTo(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
}

// serveRedirectChain serves /r/N as a redirect to /r/N-1 and /r/0 as b.
func serveRedirectChain(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
			return
		}
		w.Write(b)
	})
}

// countHits wraps h and counts the requests it receives.
func countHits(h http.Handler, hits *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	})
}

// TestFetchRefusesPrivateAddresses checks that a default fetcher refuses
// loopback, private and metadata addresses at connect time, before any
// request is sent.
func TestFetchRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int64
	s := serve(t, countHits(serveBytes("image/png", pngBytes(t, 8, 8)), &hits))
	port := s.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	f := New(Config{Timeout: 3 * time.Second})

	tests := []struct {
		name string
		url  string
	}{
		{"loopback", s.URL + "/a.png"},
		{"localhost name", fmt.Sprintf("http://localhost:%d/a.png", port)},
		{"IPv6 loopback", fmt.Sprintf("http://[::1]:%d/a.png", port)},
		{"IPv4-mapped loopback", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/a.png", port)},
		{"unspecified", fmt.Sprintf("http://0.0.0.0:%d/a.png", port)},
		{"https loopback", fmt.Sprintf("https://127.0.0.1:%d/a.png", port)},
		{"metadata", "http://169.254.169.254/latest/meta-data/"},
		// Unroutable here: a dial would hang until the timeout and
		// report INPUT_FETCH_FAILED, so the code proves the refusal
		// came first.
		{"private", "http://10.0.0.1/a.png"},
		{"CGNAT", "http://100.64.0.1/a.png"},
		{"NAT64 of private", "http://[64:ff9b::a00:1]/a.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := f.Fetch(t.Context(), tt.url, gengate.KindImage)
			wantCode(t, err, gengate.InputNotAllowed)
			if d := time.Since(start); d > time.Second {
				t.Errorf("refusal took %s, want it at once", d)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

// TestFetchChecksResolvedAddress checks that the address a name resolves
// to is what is judged, using a DNS server that answers what the test says.
func TestFetchChecksResolvedAddress(t *testing.T) {
	var hits atomic.Int64
	png := pngBytes(t, 8, 8)
	s := serve(t, countHits(serveBytes("image/png", png), &hits))
	port := s.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	url := fmt.Sprintf("http://rebind.test:%d/a.png", port)

	tests := []struct {
		name     string
		v4, v6   netip.Addr
		allow    func(netip.AddrPort) bool
		wantCode string
	}{
		{"name to loopback", netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1"), publicAddrPort, gengate.InputNotAllowed},
		{"name to private", netip.MustParseAddr("10.0.0.1"), netip.Addr{}, publicAddrPort, gengate.InputNotAllowed},
		{"name to metadata", netip.MustParseAddr("169.254.169.254"), netip.Addr{}, publicAddrPort, gengate.InputNotAllowed},
		{"name to mapped loopback", netip.Addr{}, netip.MustParseAddr("::ffff:127.0.0.1"), publicAddrPort, gengate.InputNotAllowed},
		// The same name and DNS server with the check off reaches the
		// server, so the refusals above come from the check.
		{"name to loopback, private allowed", netip.MustParseAddr("127.0.0.1"), netip.Addr{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			f := newFetcher(Config{Timeout: 3 * time.Second}, tt.allow, fakeDNS(t, tt.v4, tt.v6))
			in, err := f.Fetch(t.Context(), url, gengate.KindImage)
			wantCode(t, err, tt.wantCode)
			if tt.wantCode != "" {
				if n := hits.Load(); n != 0 {
					t.Errorf("server got %d requests, want none", n)
				}
				return
			}
			if !bytes.Equal(in.Data, png) {
				t.Errorf("got %d bytes, want the served PNG", len(in.Data))
			}
		})
	}
}

// TestFetchChecksEveryRedirectHop checks that a redirect's target is
// checked when it is dialed. Both servers are on loopback, so the check is
// put at a port boundary: only the ports the case allows may be dialed.
func TestFetchChecksEveryRedirectHop(t *testing.T) {
	png := pngBytes(t, 8, 8)
	var hitsB atomic.Int64
	b := serve(t, countHits(serveBytes("image/png", png), &hitsB))
	mux := http.NewServeMux()
	mux.Handle("/a.png", serveBytes("image/png", png))
	mux.Handle("/to-b", redirectTo(b.URL+"/a.png"))
	a := serve(t, mux)
	portOf := func(u string) uint16 {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(pu.Port())
		if err != nil {
			t.Fatal(err)
		}
		return uint16(p)
	}
	portA, portB := portOf(a.URL), portOf(b.URL)
	onlyA := func(ap netip.AddrPort) bool { return ap.Port() == portA }
	aAndB := func(ap netip.AddrPort) bool { return ap.Port() == portA || ap.Port() == portB }

	tests := []struct {
		name      string
		allow     func(netip.AddrPort) bool
		url       string
		wantCode  string
		wantHitsB int64
	}{
		{"allowed server", onlyA, a.URL + "/a.png", "", 0},
		{"redirect to refused server", onlyA, a.URL + "/to-b", gengate.InputNotAllowed, 0},
		{"refused server directly", onlyA, b.URL + "/a.png", gengate.InputNotAllowed, 0},
		{"redirect to allowed server", aAndB, a.URL + "/to-b", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hitsB.Store(0)
			f := newFetcher(Config{Timeout: 3 * time.Second}, tt.allow, nil)
			_, err := f.Fetch(t.Context(), tt.url, gengate.KindImage)
			wantCode(t, err, tt.wantCode)
			if n := hitsB.Load(); n != tt.wantHitsB {
				t.Errorf("server B got %d requests, want %d", n, tt.wantHitsB)
			}
		})
	}
}

// TestFetchHTTP fetches real files from a loopback server with the address
// check off.
func TestFetchHTTP(t *testing.T) {
	png := pngBytes(t, 64, 48)
	webpLossy := webpBytes(t, 40, 30, false)
	webpLossless := webpBytes(t, 41, 31, true)
	mp4 := mp4Bytes("isom")
	html := []byte("<!doctype html><html><body><img src=a.png></body></html>")

	tests := []struct {
		name     string
		body     []byte       // served with Content-Length unless handler is set
		handler  http.Handler // overrides body
		path     string
		kind     gengate.InputKind
		cfg      Config
		wantCode string
		wantMsg  string // a part of the error message
		wantType string
		wantW    int
		wantH    int
	}{
		{name: "PNG", body: png, kind: gengate.KindImage, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "JPEG", body: jpegBytes(t, 33, 17), kind: gengate.KindImage, wantType: "image/jpeg", wantW: 33, wantH: 17},
		{name: "GIF", body: gifBytes(t, 20, 10), kind: gengate.KindImage, wantType: "image/gif", wantW: 20, wantH: 10},
		{name: "WebP lossy", body: webpLossy, kind: gengate.KindImage, wantType: "image/webp", wantW: 40, wantH: 30},
		{name: "WebP lossless", body: webpLossless, kind: gengate.KindImage, wantType: "image/webp", wantW: 41, wantH: 31},
		{name: "PNG without Content-Length", body: png, handler: serveChunked(png), kind: gengate.KindImage, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "PNG exactly at MaxBytes", body: png, kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png))}, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "PNG labelled as HTML", body: png, handler: serveBytes("text/html", png), kind: gengate.KindImage, wantType: "image/png", wantW: 64, wantH: 48},

		{name: "HTML page", body: html, handler: serveBytes("text/html", html), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "HTML labelled as PNG", handler: serveBytes("image/png", html), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "plain text", handler: serveBytes("text/plain", []byte("hello")), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "PDF", handler: serveBytes("application/pdf", []byte("%PDF-1.7\n1 0 obj\n")), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "BMP", handler: serveBytes("image/bmp", bmpBytes(t, 8, 8)), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "TIFF", handler: serveBytes("image/tiff", tiffBytes(t, 8, 8)), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "empty body", handler: serveBytes("image/png", nil), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "truncated PNG", handler: serveBytes("image/png", png[:len(png)/2]), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		{name: "truncated JPEG", handler: serveBytes("image/jpeg", jpegBytes(t, 64, 64)[:1000]), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		{name: "truncated WebP", handler: serveBytes("image/webp", webpLossy[:len(webpLossy)/2]), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		{name: "PNG header only", handler: serveBytes("image/png", pngHeaderOnly(10, 10)), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		{name: "GIF of 0x0", handler: serveBytes("image/gif", gifZeroSize()), kind: gengate.KindImage, wantCode: gengate.InputUndecodable},
		// The header alone claims 100M pixels; with no pixel data a
		// decode would fail as undecodable, so TOO_LARGE shows the pixel
		// check came first.
		{name: "PNG claiming 10000x10000", handler: serveBytes("image/png", pngHeaderOnly(10000, 10000)), kind: gengate.KindImage, wantCode: gengate.InputTooLarge},
		{name: "PNG over MaxPixels", body: png, kind: gengate.KindImage, cfg: Config{MaxPixels: 64*48 - 1}, wantCode: gengate.InputTooLarge},
		{name: "PNG at MaxPixels", body: png, kind: gengate.KindImage, cfg: Config{MaxPixels: 64 * 48}, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "over MaxBytes with Content-Length", body: png, kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png)) - 1}, wantCode: gengate.InputTooLarge},
		{name: "over MaxBytes without Content-Length", handler: serveChunked(png), kind: gengate.KindImage, cfg: Config{MaxBytes: int64(len(png)) - 1}, wantCode: gengate.InputTooLarge},
		{name: "endless body", handler: serveEndless(), kind: gengate.KindImage, cfg: Config{MaxBytes: 10_000, Timeout: 2 * time.Second}, wantCode: gengate.InputTooLarge},
		{name: "huge Content-Length then stall", handler: serveHugeLength(), kind: gengate.KindImage, cfg: Config{Timeout: 2 * time.Second}, wantCode: gengate.InputTooLarge},

		{name: "404", handler: serveStatus(http.StatusNotFound), kind: gengate.KindImage, wantCode: gengate.InputFetchFailed, wantMsg: "HTTP status 404"},
		{name: "500", handler: serveStatus(http.StatusInternalServerError), kind: gengate.KindImage, wantCode: gengate.InputFetchFailed},
		{name: "timeout", handler: serveSlow(), kind: gengate.KindImage, cfg: Config{Timeout: 200 * time.Millisecond}, wantCode: gengate.InputFetchFailed, wantMsg: "timed out"},
		{name: "redirect loop", handler: redirectTo("/"), kind: gengate.KindImage, cfg: Config{Timeout: 2 * time.Second}, wantCode: gengate.InputFetchFailed, wantMsg: "redirected more than 5 times"},
		{name: "5 redirects", body: png, handler: serveRedirectChain(png), path: "/r/5", kind: gengate.KindImage, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "6 redirects", handler: serveRedirectChain(png), path: "/r/6", kind: gengate.KindImage, wantCode: gengate.InputFetchFailed, wantMsg: "redirected more than 5 times"},
		{name: "2 redirects, MaxRedirects 2", body: png, handler: serveRedirectChain(png), path: "/r/2", kind: gengate.KindImage, cfg: Config{MaxRedirects: 2}, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "3 redirects, MaxRedirects 2", handler: serveRedirectChain(png), path: "/r/3", kind: gengate.KindImage, cfg: Config{MaxRedirects: 2}, wantCode: gengate.InputFetchFailed},
		{name: "no redirect, none allowed", body: png, handler: serveRedirectChain(png), path: "/r/0", kind: gengate.KindImage, cfg: Config{MaxRedirects: -1}, wantType: "image/png", wantW: 64, wantH: 48},
		{name: "1 redirect, none allowed", handler: serveRedirectChain(png), path: "/r/1", kind: gengate.KindImage, cfg: Config{MaxRedirects: -1}, wantCode: gengate.InputFetchFailed},
		{name: "redirect to file:", handler: redirectTo("file:///etc/passwd"), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
		{name: "redirect to ftp:", handler: redirectTo("ftp://example.com/a.png"), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},

		{name: "MP4", body: mp4, kind: gengate.KindVideo, wantType: "video/mp4"},
		{name: "QuickTime", body: mp4Bytes("qt  "), kind: gengate.KindVideo, wantType: "video/mp4"},
		{name: "WebM", body: webmBytes(), kind: gengate.KindVideo, wantType: "video/webm"},
		{name: "video over MaxBytes but within MaxVideoBytes", body: mp4, kind: gengate.KindVideo, cfg: Config{MaxBytes: 10}, wantType: "video/mp4"},
		{name: "video over MaxVideoBytes", handler: serveBytes("video/mp4", mp4), kind: gengate.KindVideo, cfg: Config{MaxVideoBytes: int64(len(mp4)) - 1}, wantCode: gengate.InputTooLarge},
		{name: "PNG as video", handler: serveBytes("video/mp4", png), kind: gengate.KindVideo, wantCode: gengate.InputNotSupported},
		{name: "AVIF as video", handler: serveBytes("video/mp4", mp4Bytes("avif")), kind: gengate.KindVideo, wantCode: gengate.InputNotSupported},
		{name: "HTML as video", handler: serveBytes("video/mp4", html), kind: gengate.KindVideo, wantCode: gengate.InputNotSupported},
		{name: "MP4 as image", handler: serveBytes("image/png", mp4), kind: gengate.KindImage, wantCode: gengate.InputNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.handler
			if h == nil {
				h = serveBytes("application/octet-stream", tt.body)
			}
			s := serve(t, h)
			cfg := tt.cfg
			cfg.AllowPrivate = true
			in, err := New(cfg).Fetch(t.Context(), s.URL+tt.path, tt.kind)
			wantCode(t, err, tt.wantCode)
			if tt.wantCode != "" {
				if !strings.Contains(gengate.ErrorMessage(err), tt.wantMsg) {
					t.Errorf("message = %q, want it to contain %q", gengate.ErrorMessage(err), tt.wantMsg)
				}
				return
			}
			if in.ContentType != tt.wantType || in.Width != tt.wantW || in.Height != tt.wantH {
				t.Errorf("got %s %dx%d, want %s %dx%d", in.ContentType, in.Width, in.Height, tt.wantType, tt.wantW, tt.wantH)
			}
			if !bytes.Equal(in.Data, tt.body) {
				t.Errorf("got %d bytes, want the %d served", len(in.Data), len(tt.body))
			}
		})
	}
}

// TestFetchURLs checks URLs that are refused before any connection.
func TestFetchURLs(t *testing.T) {
	tests := []struct {
		name     string
		url      string
		kind     gengate.InputKind
		wantCode string
	}{
		{"file", "file:///etc/passwd", gengate.KindImage, gengate.InputNotSupported},
		{"file, upper case", "FILE:///etc/passwd", gengate.KindImage, gengate.InputNotSupported},
		{"ftp", "ftp://example.com/a.png", gengate.KindImage, gengate.InputNotSupported},
		{"gopher", "gopher://example.com:70/_GET", gengate.KindImage, gengate.InputNotSupported},
		{"javascript", "javascript:alert(1)", gengate.KindImage, gengate.InputNotSupported},
		{"no scheme", "example.com/a.png", gengate.KindImage, gengate.InputNotSupported},
		{"scheme-relative", "//example.com/a.png", gengate.KindImage, gengate.InputNotSupported},
		{"path", "/etc/passwd", gengate.KindImage, gengate.InputNotSupported},
		{"empty", "", gengate.KindImage, gengate.InputNotSupported},
		{"no host", "http://", gengate.KindImage, gengate.InputFetchFailed},
		{"empty host", "http:///a.png", gengate.KindImage, gengate.InputFetchFailed},
		{"port only", "http://:80/a.png", gengate.KindImage, gengate.InputFetchFailed},
		{"unclosed bracket", "http://[::1/a.png", gengate.KindImage, gengate.InputFetchFailed},
		{"space in host", "http://a b/a.png", gengate.KindImage, gengate.InputFetchFailed},
		{"control character", "http://example.com/\x00", gengate.KindImage, gengate.InputFetchFailed},
		{"text kind", "https://example.com/a.txt", gengate.KindText, gengate.InputNotSupported},
	}
	f := New(Config{Timeout: time.Second})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), tt.url, tt.kind)
			wantCode(t, err, tt.wantCode)
		})
	}
}

func TestFetchCanceled(t *testing.T) {
	s := serve(t, serveBytes("image/png", pngBytes(t, 8, 8)))
	f := New(Config{AllowPrivate: true})
	tests := []struct {
		name     string
		cancel   bool
		wantCode string
	}{
		{"live context", false, ""},
		{"canceled context", true, gengate.InputFetchFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			_, err := f.Fetch(ctx, s.URL, gengate.KindImage)
			wantCode(t, err, tt.wantCode)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	want := Config{
		MaxBytes:      25_000_000,
		MaxPixels:     50_000_000,
		MaxVideoBytes: 100_000_000,
		Timeout:       30 * time.Second,
		MaxRedirects:  5,
		UserAgent:     "gengate/1",
		// The decode budgets.
		MaxInputMemory:  256 << 20,
		MaxDecodeMemory: 1 << 30,
	}
	if got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	set := Config{AllowPrivate: true, MaxBytes: 1, MaxPixels: 2, MaxVideoBytes: 3, Timeout: 4, MaxRedirects: -1, UserAgent: "x",
		MaxInputMemory: 5, MaxDecodeMemory: 6}
	if got := set.withDefaults(); got != set {
		t.Errorf("withDefaults changed set fields: %+v, want %+v", got, set)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg       Config
		wantField string // "" for valid
	}{
		{Config{}, ""},
		{Config{MaxBytes: 1, MaxRedirects: -1}, ""},
		{Config{MaxBytes: -1}, "MaxBytes"},
		{Config{MaxPixels: -1}, "MaxPixels"},
		{Config{MaxVideoBytes: -1}, "MaxVideoBytes"},
		{Config{Timeout: -1}, "Timeout"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.wantField == "" && err != nil:
			t.Errorf("Validate(%+v) = %v, want nil", tt.cfg, err)
		case tt.wantField != "" && (err == nil || !strings.Contains(err.Error(), tt.wantField+" ")):
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tt.cfg, err, tt.wantField)
		}
	}
}

// TestNewClient checks the parts of the HTTP client the address check
// relies on.
func TestNewClient(t *testing.T) {
	f1, f2 := New(Config{}), New(Config{})
	tr, ok := f1.client.Transport.(*http.Transport)
	switch {
	case !ok:
		t.Fatalf("Transport is %T, want *http.Transport", f1.client.Transport)
	case f1.client == http.DefaultClient || tr == http.DefaultTransport:
		t.Error("fetcher uses the default client or transport")
	case f1.client.Transport == f2.client.Transport:
		t.Error("two fetchers share a transport")
	case tr.Proxy != nil:
		t.Error("Transport.Proxy is set: a proxy would bypass the address check")
	case tr.DialTLSContext != nil || tr.DialTLS != nil || tr.Dial != nil:
		t.Error("a dial function other than DialContext is set and would bypass the check")
	}
}

// TestFetchSendsHeaders checks the request a fetch makes.
func TestFetchSendsHeaders(t *testing.T) {
	var gotUA, gotAccept, gotEncoding atomic.Value
	png := pngBytes(t, 8, 8)
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		gotAccept.Store(r.Header.Get("Accept"))
		gotEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Write(png)
	}))
	tests := []struct {
		name   string
		cfg    Config
		wantUA string
	}{
		{"default", Config{AllowPrivate: true}, "gengate/1"},
		{"custom", Config{AllowPrivate: true, UserAgent: "test-agent/2"}, "test-agent/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg).Fetch(t.Context(), s.URL, gengate.KindImage); err != nil {
				t.Fatal(err)
			}
			if got := gotUA.Load(); got != tt.wantUA {
				t.Errorf("User-Agent = %q, want %q", got, tt.wantUA)
			}
			if got := gotAccept.Load().(string); !strings.Contains(got, "image/png") {
				t.Errorf("Accept = %q, want image types", got)
			}
			if got := gotEncoding.Load(); got != "" {
				t.Errorf("Accept-Encoding = %q, want none", got)
			}
		})
	}
}
