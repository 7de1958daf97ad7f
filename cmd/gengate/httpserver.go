package main

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"golang.org/x/net/netutil"

	"github.com/gengate/gengate/internal/httpapi"
)

// newHTTPServer is the http.Server of the public (and admin) listener,
// with the limits that keep a client from holding the server's memory or
// connections (docs/security.md):
//
//   - ReadHeaderTimeout: the headers must arrive within it.
//   - ReadTimeout: the whole request, headers and body, must arrive within
//     it, counted from the request's start: a body sent a byte at a time,
//     or a chunked body that never ends, is cut off there and the
//     connection closed. net/http clears the read deadline once the body
//     is read, so a generate call waiting minutes for its result (a write
//     wait, not a read) is not affected. There is no WriteTimeout for the
//     same reason, and because large videos stream to slow clients.
//   - IdleTimeout: an idle keep-alive connection is closed after it.
//   - MaxHeaderBytes: larger header blocks get 431.
//
// The cap on open connections is the listener's (limitListener):
// over it, new connections wait in the kernel's accept queue until one
// closes, and are refused by the kernel when that queue is full.
func newHTTPServer(cfg *Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    int(cfg.MaxHeaderBytes),
	}
}

// startAdmin starts the operator listener of --admin-addr, serving
// /metrics, /debug/pprof, /healthz and /readyz (httpapi.Operator), in
// every role, and prints its address. With no --admin-addr it starts nothing and returns nil.
func startAdmin(cfg *Config, m *httpapi.Metrics, ready http.Handler, stdout io.Writer) (*http.Server, error) {
	if cfg.AdminAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		return nil, fmt.Errorf("--admin-addr: %w", err)
	}
	srv := newHTTPServer(cfg, httpapi.Operator(m, ready))
	fmt.Fprintf(stdout, "gengate admin listening on http://%s\n", ln.Addr())
	go srv.Serve(netutil.LimitListener(ln, 64))
	return srv, nil
}
