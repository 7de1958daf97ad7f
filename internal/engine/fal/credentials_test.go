package fal

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestKeyGoesOnlyToItsOwnOrigin runs jobs whose output URLs sit on hosts
// that look like fal's and checks that the key went to none of them. The
// test's client connects every host name to the fake, as a look-alike
// domain would resolve to the attacker's server.
func TestKeyGoesOnlyToItsOwnOrigin(t *testing.T) {
	f := faltest.New(t)
	addr := strings.TrimPrefix(f.URL(), "http://")
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	base := "http://queue.fal.run"
	// AllowPrivateOutputs lets the look-alike downloads reach the fake (on
	// loopback), so that the test sees what they carry.
	e := New(Config{APIKey: f.Key(), BaseURL: base, HTTP: client, AllowPrivateOutputs: true})
	for _, tc := range []struct {
		name, fileBase string
		keyed          bool
	}{
		{"own origin", base, true},
		{"own origin, upper case, explicit port", "http://QUEUE.FAL.RUN:80", true},
		{"longer host name", "http://queue.fal.run.evil.tld", false},
		{"own host as user name", "http://queue.fal.run@evil.tld", false},
		{"own host and port as user info", "http://queue.fal.run:80@evil.tld", false},
		{"other port", "http://queue.fal.run:8080", false},
		{"sub-domain", "http://cdn.queue.fal.run", false},
		{"other host", "http://fal.media", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.SetFileBase(tc.fileBase)
			seen := len(f.FileAuth())
			p, err := run(t, e, imageJob("fal-ai/flux/schnell", "1:1", 1, "png"))
			if err != nil || len(p.Outputs) != 1 {
				t.Fatalf("outputs %d, err %v", len(p.Outputs), err)
			}
			auth := f.FileAuth()[seen:]
			if len(auth) == 0 {
				t.Fatal("no file request reached the fake")
			}
			for _, a := range auth {
				if tc.keyed && a != "Key "+f.Key() {
					t.Errorf("own-origin download sent %q, want the key", a)
				}
				// (Go sends user info as Basic authorization: not the key.)
				if !tc.keyed && (strings.Contains(a, f.Key()) || strings.HasPrefix(a, "Key ")) {
					t.Errorf("download from %s sent Authorization %q", tc.fileBase, a)
				}
			}
		})
	}
}

// TestOutputOnAnotherPrivateHostIsRefused: the provider (on loopback, like
// a ComfyUI server on a private network) may serve its own outputs, but an
// output URL on another private address is refused before any connection.
func TestOutputOnAnotherPrivateHostIsRefused(t *testing.T) {
	var hits atomic.Int32
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer inner.Close()
	f := faltest.New(t)
	f.SetFileBase(inner.URL)
	e := New(Config{APIKey: f.Key(), BaseURL: f.URL()})
	_, err := run(t, e, imageJob("fal-ai/flux/schnell", "1:1", 1, "png"))
	if ue := upstreamErr(t, err); ue.Kind != gengate.Failed || !strings.Contains(ue.Message, "private") {
		t.Fatalf("error %+v, want a Failed refusal of the private address", ue)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the private host got %d requests", n)
	}
}
