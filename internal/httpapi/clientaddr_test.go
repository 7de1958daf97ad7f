package httpapi

import (
	"net/http/httptest"
	"testing"
)

// TestClientAddr: forwarding headers are believed only from a trusted
// peer, read from the right past the trusted hops, so that an address a
// client wrote into the header itself is never taken.
func TestClientAddr(t *testing.T) {
	trusted, err := ParseTrustedProxies("127.0.0.1/32, 10.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		xff        []string
		fwd        string
		want       string
	}{
		{name: "no header", peer: "127.0.0.1:5000", want: "127.0.0.1"},
		{name: "from a trusted proxy", peer: "127.0.0.1:5000", xff: []string{"203.0.113.7"}, want: "203.0.113.7"},
		{name: "from an untrusted peer", peer: "198.51.100.2:5000", xff: []string{"203.0.113.7"}, want: "198.51.100.2"},
		{name: "spoofed leftmost", peer: "127.0.0.1:5000", xff: []string{"1.2.3.4, 203.0.113.7"}, want: "203.0.113.7"},
		{name: "two trusted hops", peer: "127.0.0.1:5000", xff: []string{"203.0.113.7, 10.1.2.3"}, want: "203.0.113.7"},
		{name: "several header lines", peer: "10.0.0.9:1", xff: []string{"9.9.9.9", "203.0.113.7, 10.0.0.1"}, want: "203.0.113.7"},
		{name: "all trusted", peer: "127.0.0.1:5000", xff: []string{"10.0.0.1"}, want: "10.0.0.1"},
		{name: "garbage hop", peer: "127.0.0.1:5000", xff: []string{"203.0.113.7, nonsense"}, want: "127.0.0.1"},
		{name: "Forwarded", peer: "127.0.0.1:5000", fwd: `for=192.0.2.60;proto=https;by=203.0.113.43`, want: "192.0.2.60"},
		{name: "Forwarded IPv6 with port", peer: "[::1]:5000", fwd: `for="[2001:db8:cafe::17]:4711"`, want: "2001:db8:cafe::17"},
		{name: "X-Forwarded-For before Forwarded", peer: "127.0.0.1:5000", xff: []string{"203.0.113.7"}, fwd: "for=192.0.2.60", want: "203.0.113.7"},
		{name: "Forwarded from untrusted", peer: "198.51.100.2:5000", fwd: "for=192.0.2.60", want: "198.51.100.2"},
		{name: "IPv4-mapped peer", peer: "[::ffff:127.0.0.1]:5000", xff: []string{"203.0.113.7"}, want: "203.0.113.7"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if tc.fwd != "" {
			r.Header.Set("Forwarded", tc.fwd)
		}
		if got := trusted.ClientAddr(r); got != tc.want {
			t.Errorf("%s: ClientAddr = %s, want %s", tc.name, got, tc.want)
		}
		if got := TrustedProxies(nil).ClientAddr(r); got != hostOf(tc.peer) {
			t.Errorf("%s: with no trusted proxy ClientAddr = %s, want the peer", tc.name, got)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "localhost", "10.0.0/8"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}
