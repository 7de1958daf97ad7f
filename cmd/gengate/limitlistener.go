package main

import (
	"net"
	"sync"
)

// limitListener caps the open connections of a listener (--max-conns),
// as golang.org/x/net/netutil.LimitListener does: over the cap, Accept
// waits until a connection closes, and new connections wait in the
// kernel's accept queue. Its connections also give the one they wrap
// (NetConn), so that the socket of a synchronous call parked off net/http
// can be watched for its client going away (internal/httpapi, parked.go);
// netutil's do not. A parked connection counts until it is closed.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// NetConn returns the connection c wraps.
func (c *limitConn) NetConn() net.Conn { return c.Conn }

// fallbackMaxConns is the default --max-conns where the file limit cannot
// be read.
const fallbackMaxConns = 1024

// defaultMaxConns is the default --max-conns for a process allowed
// nofile open files: all of them but a reserve for what is not a client
// connection (the database's connections, the providers', the files of
// local storage and SQLite, the operator listener): a quarter of the
// limit, at most 1024. With the usual hard limit of 1,048,576 that is
// 1,047,552 connections; with a soft limit of 1024 that cannot be
// raised, 768.
func defaultMaxConns(nofile uint64) int {
	if nofile == 0 {
		return fallbackMaxConns
	}
	reserve := min(nofile/4, 1024)
	n := nofile - reserve
	if n > 1<<30 { // RLIM_INFINITY and other huge limits
		n = 1 << 30
	}
	return max(int(n), 1)
}
