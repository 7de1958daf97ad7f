package fetch

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		// Public IPv4.
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.216.34", true},
		{"172.32.0.1", true},  // just above 172.16/12
		{"100.128.0.1", true}, // just above 100.64/10
		{"198.20.0.1", true},  // just above 198.18/15
		{"223.255.255.255", true},
		// Refused IPv4.
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"169.254.0.1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"192.0.0.170", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		// Public IPv6.
		{"2606:4700:4700::1111", true},
		{"2001:4860:4860::8888", true},
		{"2a00:1450:4001::200e", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},  // 6to4 of 8.8.8.8
		{"::ffff:8.8.8.8", true},   // IPv4-mapped 8.8.8.8
		// Refused IPv6.
		{"::1", false},
		{"::", false},
		{"fc00::1", false},
		{"fd12:3456:789a::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"ff05::1:3", false},
		{"100::1", false},
		{"2001:db8::1", false},
		{"2001::1", false},     // Teredo
		{"::127.0.0.1", false}, // IPv4-compatible
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:0.0.0.0", false},
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", false},     // NAT64 of 10.0.0.1
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b:1::a00:1", false},   // local-use NAT64
		{"2002:7f00:1::1", false},     // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", false},   // 6to4 of 192.168.1.1
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := publicAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("publicAddr(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if publicAddr(netip.Addr{}) {
		t.Error("publicAddr(zero Addr) = true, want false")
	}
}

func TestDialControl(t *testing.T) {
	// Port 8443 only: a policy other than public/private, as the redirect
	// test uses.
	only8443 := func(ap netip.AddrPort) bool { return ap.Port() == 8443 }
	tests := []struct {
		name    string
		allow   func(netip.AddrPort) bool
		network string
		address string
		wantErr bool
	}{
		{"public v4", publicAddrPort, "tcp4", "8.8.8.8:443", false},
		{"public v6", publicAddrPort, "tcp6", "[2606:4700:4700::1111]:443", false},
		{"loopback v4", publicAddrPort, "tcp4", "127.0.0.1:80", true},
		{"loopback v6", publicAddrPort, "tcp6", "[::1]:80", true},
		{"metadata", publicAddrPort, "tcp4", "169.254.169.254:80", true},
		{"private", publicAddrPort, "tcp4", "10.0.0.1:80", true},
		{"mapped loopback", publicAddrPort, "tcp6", "[::ffff:127.0.0.1]:80", true},
		{"NAT64 private", publicAddrPort, "tcp6", "[64:ff9b::c0a8:101]:80", true},
		{"zoned link-local", publicAddrPort, "tcp6", "[fe80::1%eth0]:80", true},
		{"not tcp", publicAddrPort, "udp4", "8.8.8.8:53", true},
		{"unparsable", publicAddrPort, "tcp", "example.com:80", true},
		{"allow all: loopback", nil, "tcp4", "127.0.0.1:80", false},
		{"allow all: private", nil, "tcp4", "10.0.0.1:80", false},
		{"allow all: still tcp only", nil, "udp4", "127.0.0.1:53", true},
		{"custom: allowed port", only8443, "tcp4", "127.0.0.1:8443", false},
		{"custom: other port", only8443, "tcp4", "127.0.0.1:8080", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := dialControl(tt.allow)(t.Context(), tt.network, tt.address, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("control(%s, %s) = %v, want error %v", tt.network, tt.address, err, tt.wantErr)
			}
			if err != nil && err != errAddrNotAllowed {
				t.Fatalf("control error = %v, want errAddrNotAllowed", err)
			}
		})
	}
}
