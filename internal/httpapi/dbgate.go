package httpapi

import (
	"net/http"
	"strings"
)

// The connection budget of every request that reads the database. On
// PostgreSQL a process has --db-conns connections; a request that finds
// them all taken waits for one at most --db-wait (Store.AwaitConn,
// sqlstore/connbudget.go), then is refused with 503 OVERLOADED and
// Retry-After, before its handler runs: before its credentials are
// checked, its body read, or anything written. So an exhausted pool (or a
// server out of connections: "too many clients already") never turns into
// a 500, nor into a task written for a request that is then refused. Once
// admitted a request's statements wait as long as they need. On SQLite
// AwaitConn returns at once.

// noDatabase are the routes that read no database, which the gate lets
// through: probes, documents, the console's files, signed input URLs
// (only the file store).
var noDatabase = map[string]bool{
	"/healthz": true, "/readyz": true, "/api/v1/openapi.json": true, "/docs/api": true, "/metrics": true,
	"/api/v1/auth/config": true, "/files/in/{task}/{name}": true, "/{$}": true, "/console/": true,
}

// gatedMux registers routes on a ServeMux, each behind its body
// declaration (body.go) and each documented operation that reads the
// database (a pattern with a method whose path is not in noDatabase; the
// 404 and 405 handlers read nothing) behind dbGate. The gates are part of
// the route's handler, so a request is routed once, by the mux, not once
// more to find out whether it reads the database.
type gatedMux struct {
	*http.ServeMux
	a *api
}

// Handle registers h for pattern with the request body it declares
// (bodyNone, bodyJSON, bodyStream, bodyMultipart or bodyFile: body.go).
func (g gatedMux) Handle(pattern string, body bodySpec, h http.Handler) {
	method, _, _ := strings.Cut(pattern, " ")
	if path := patternPath(pattern); !noDatabase[path] && (method != path || path == falProxyPath) {
		h = g.a.dbGate(h)
	}
	g.a.declared[pattern] = body
	g.ServeMux.Handle(pattern, g.a.admit(pattern, body, h))
}

// dbGate runs AwaitConn before next.
func (a *api) dbGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.svc.Store.AwaitConn(r.Context()); err != nil {
			a.refuseIn(w, r, patternPath(r.Pattern), err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
