package upstream

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestOwn: only the base URL's scheme, host and port are the provider's
// own, for a Client built by NewClient (its base's origin kept), one
// built without it, and one whose BaseURL was changed after NewClient
// (a copy pointed elsewhere).
func TestOwn(t *testing.T) {
	moved := NewClient("x", Config{BaseURL: "https://other.example"}, "", "Authorization", "Key ", nil)
	moved.BaseURL = "https://queue.fal.run"
	for _, c := range []*Client{
		{BaseURL: "https://queue.fal.run"},
		NewClient("x", Config{BaseURL: "https://queue.fal.run/"}, "", "Authorization", "Key ", nil),
		moved,
	} {
		testOwn(t, c)
	}
}

func testOwn(t *testing.T, c *Client) {
	t.Helper()
	for _, tc := range []struct {
		url string
		own bool
	}{
		{"https://queue.fal.run/x", true},
		{"https://QUEUE.fal.run:443/x", true},
		{"https://queue.fal.run./x", true},
		{"http://queue.fal.run/x", false},
		{"https://queue.fal.run:8443/x", false},
		{"https://queue.fal.run.evil.tld/x", false},
		{"https://queue.fal.run@evil.tld/x", false},
		{"https://queue.fal.run:443@evil.tld/x", false},
		{"https://evil.tld/https://queue.fal.run/x", false},
		{"https://evil.tld/?u=https://queue.fal.run", false},
		{"//queue.fal.run/x", false},
		{"/x", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Own(u); got != tc.own {
			t.Errorf("Own(%s) = %v, want %v", tc.url, got, tc.own)
		}
	}
}

// TestKeyNotForwardedOnRedirect: a download from the provider's own
// origin that redirects elsewhere does not carry the key there, whatever
// header carries it (Go drops Authorization across hosts, not custom
// headers such as x-goog-api-key).
func TestKeyNotForwardedOnRedirect(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // host → key header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Host] = r.Header.Get("x-goog-api-key")
		mu.Unlock()
		if r.Host == "api.example" {
			http.Redirect(w, r, "http://cdn.example/file.png", http.StatusFound)
			return
		}
		w.Write(pngBytes(t))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	c := NewClient("google", Config{APIKey: "secret-key-1", BaseURL: "http://api.example", HTTP: client, AllowPrivateOutputs: true},
		"", "x-goog-api-key", "", nil)
	if _, err := c.Download(context.Background(), "/file", "image"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["api.example"] != "secret-key-1" {
		t.Errorf("the provider's own host got %q, want the key", seen["api.example"])
	}
	if k, ok := seen["cdn.example"]; !ok || k != "" {
		t.Errorf("the redirect target got key %q (reached: %v)", k, ok)
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
