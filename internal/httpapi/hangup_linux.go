//go:build linux

package httpapi

import (
	"net"
	"os"
	"sync"
	"syscall"
)

// canPark says parked calls are possible here: hangups can watch sockets.
const canPark = true

// hangups tells when the clients of parked calls go away. net/http
// notices a client going away with a read pending on each connection,
// which needs a goroutine per connection; this watches every parked
// connection with one epoll instance of its own (the peer's close,
// EPOLLRDHUP, or an error), read by one goroutine that sleeps in Go's
// poller (the epoll descriptor is itself pollable) and ends, the instance
// closed, when nothing is watched.
type hangups struct {
	mu      sync.Mutex
	ep      *os.File // nil while nothing is watched
	epfd    int      // ep's descriptor (ep.Fd would make it blocking)
	next    uint64
	watched map[uint64]hangup
}

type hangup struct {
	fd   int // the socket
	epfd int
	gone func()
}

// add watches c and calls gone, once and on the watching goroutine (it
// must not block), when its client goes away. remove stops watching
// (idempotent; call it before closing c). ok is false when c's socket
// cannot be reached: then nothing watches it.
func (h *hangups) add(c net.Conn, gone func()) (remove func(), ok bool) {
	rc := rawConn(c)
	if rc == nil {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ep == nil {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return nil, false
		}
		if err := syscall.SetNonblock(fd, true); err != nil { // so that Go's poller takes it
			syscall.Close(fd)
			return nil, false
		}
		h.ep, h.epfd = os.NewFile(uintptr(fd), "hangups"), fd
		h.watched = map[uint64]hangup{}
		go h.loop(h.ep)
	}
	h.next++
	id := h.next
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	var sock int
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		sock = int(fd)
		err = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, sock, &ev)
	}); cerr != nil || err != nil {
		if len(h.watched) == 0 {
			_ = h.ep.Close()
			h.ep = nil
		}
		return nil, false
	}
	h.watched[id] = hangup{fd: sock, epfd: h.epfd, gone: gone}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.forget(id)
	}, true
}

// forget stops watching id; with h.mu held.
func (h *hangups) forget(id uint64) (hangup, bool) {
	w, ok := h.watched[id]
	if !ok {
		return w, false
	}
	delete(h.watched, id)
	_ = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_DEL, w.fd, nil)
	if len(h.watched) == 0 {
		_ = h.ep.Close() // ends its loop
		h.ep = nil
	}
	return w, true
}

// loop reports hangups until ep is closed.
func (h *hangups) loop(ep *os.File) {
	rc, err := ep.SyscallConn()
	if err != nil {
		return
	}
	events := make([]syscall.EpollEvent, 64)
	for {
		var n int
		if err := rc.Read(func(fd uintptr) bool {
			n, err = syscall.EpollWait(int(fd), events, 0)
			return n > 0 || (err != nil && err != syscall.EINTR)
		}); err != nil || n <= 0 {
			return // closed: nothing is watched any more
		}
		var gone []func()
		h.mu.Lock()
		for _, ev := range events[:n] {
			if w, ok := h.forget(uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32); ok {
				gone = append(gone, w.gone)
			}
		}
		h.mu.Unlock()
		for _, f := range gone {
			f()
		}
	}
}

// rawConn is the socket under c, unwrapping connections that wrap
// another (a listener's limit, TLS) through their NetConn method.
func rawConn(c net.Conn) syscall.RawConn {
	for range 8 {
		if sc, ok := c.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}
