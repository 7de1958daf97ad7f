package fetch

import (
	"context"
	"errors"
	"syscall"
)

// PublicOnly is a net.Dialer ControlContext that refuses every address
// Fetch refuses (loopback, private, link-local, CGNAT, multicast, reserved
// and documentation ranges), checked on the resolved address at connect
// time. Provider output downloads from hosts other than the provider's own
// use it (internal/engine/upstream), so an upstream's answer cannot point
// gengate at its own network.
func PublicOnly(ctx context.Context, network, address string, c syscall.RawConn) error {
	return dialControl(publicAddrPort)(ctx, network, address, c)
}

// AddrNotAllowed reports whether err comes from a dial PublicOnly refused.
func AddrNotAllowed(err error) bool { return errors.Is(err, errAddrNotAllowed) }
