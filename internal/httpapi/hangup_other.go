//go:build !linux

package httpapi

import "net"

// canPark says parked calls are not possible here: hangups cannot watch
// sockets without a goroutine each, so synchronous calls wait on their
// net/http goroutines (parked.go).
const canPark = false

type hangups struct{}

func (h *hangups) add(c net.Conn, gone func()) (remove func(), ok bool) { return nil, false }
