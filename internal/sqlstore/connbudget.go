package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gengate/gengate"
)

// Connection budgets on PostgreSQL. A process opens at most --db-conns
// connections; a request that finds them all taken waits for one. That wait
// is bounded: AwaitConn, which the API calls before every request that
// reads the database (internal/httpapi/dbgate.go), before it reads or
// writes anything, refuses with OVERLOADED (503, Retry-After) when no
// connection came free within --db-wait, or when the server has no
// connection to give (SQLSTATE 53300, "too many clients already"). So an
// exhausted pool never turns into a 500, and never into a task written
// for a request that is then refused. Once a request is admitted it waits
// as long as it needs: its later statements are not cut short.

// DefaultConnWait is the default of serve --db-wait.
const DefaultConnWait = 2 * time.Second

// WithConnWait sets how long a request waits for a free PostgreSQL
// connection before AwaitConn refuses it (at least 1 ms). It does not apply
// to SQLite, whose writes queue for the one writer.
func WithConnWait(d time.Duration) Option {
	return func(o *options) { o.connWait = max(d, time.Millisecond) }
}

// AwaitConn returns once the pool could give this request a connection
// within the bound, and OVERLOADED otherwise; see the file's comment. The
// connection goes back to the pool at once, where the request's own
// statements take it (or another) again.
func (s *DB) AwaitConn(ctx context.Context) error {
	if !s.postgres {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, s.connWait)
	defer cancel()
	c, err := s.db.Conn(wctx)
	if err == nil {
		return c.Close()
	}
	if ctx.Err() != nil {
		return ctx.Err() // the client went away
	}
	if errors.Is(err, context.DeadlineExceeded) || tooManyClients(err) {
		return overloaded()
	}
	return err
}

func overloaded() error {
	return gengate.Errorf(gengate.EOverloaded, "the server has no database connection free for this request; nothing was written or charged, retry in a few seconds")
}

// tooManyClients reports whether err is PostgreSQL refusing a connection
// because it has as many as max_connections allows.
func tooManyClients(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53300"
}
