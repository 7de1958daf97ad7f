package sqlstore

// Prepared statements kept per SQLite connection.
//
// database/sql hands a statement given as text (ExecContext, QueryContext)
// to the driver as text, and modernc.org/sqlite parses and plans it anew
// every time: the writer spent a third of its CPU in SQLite's parser and
// code generator (docs/notes/sqlite-writer.md), for the
// same few dozen statements over and over. Each SQLite connection of the
// store therefore keeps the statements it has run prepared, keyed by their
// text, and runs them again with new arguments. It changes what is
// executed in no way: a statement is bound, stepped and reset exactly as
// the driver does for a statement it prepares itself, and SQLite
// re-prepares a cached statement on its own when the schema changes.

import (
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"sync"

	"modernc.org/sqlite"
)

// stmtCacheSize bounds the statements one connection keeps prepared; a
// statement beyond it runs as before, prepared for the one call.
const stmtCacheSize = 256

// cachingConnector opens SQLite connections that keep their statements.
type cachingConnector struct{ driver.Connector }

func newCachingConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return cachingConnector{c}, nil
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{conn: conn, stmts: map[string]*cachedStmt{}}, nil
}

// The driver's connection implements these (sqlite.go in the driver);
// cachingConn forwards them.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// cachingConn is one SQLite connection and its prepared statements.
// database/sql uses a connection from one goroutine at a time (it holds
// the connection's lock around every driver call, Rows.Close included);
// mu only makes that independent of database/sql's internals.
type cachingConn struct {
	conn  driver.Conn
	mu    sync.Mutex
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	s    sqliteStmt
	busy bool // its rows are open: a second use at the same time gets a statement of its own
}

var _ sqliteConn = (*cachingConn)(nil)

func (c *cachingConn) inner() (sqliteConn, error) {
	ic, ok := c.conn.(sqliteConn)
	if !ok {
		return nil, errors.New("sqlstore: the SQLite driver's connection lacks a context method")
	}
	return ic, nil
}

// take returns the connection's prepared statement for query, preparing
// it on first use, marked busy; nil when the statement is in use or the
// cache is full (the caller then runs query uncached).
func (c *cachingConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		cs.busy = true
		return cs, nil
	}
	if len(c.stmts) >= stmtCacheSize {
		return nil, nil
	}
	ic, err := c.inner()
	if err != nil {
		return nil, err
	}
	st, err := ic.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s, ok := st.(sqliteStmt)
	if !ok {
		st.Close()
		return nil, nil
	}
	cs := &cachedStmt{s: s, busy: true}
	c.stmts[query] = cs
	return cs, nil
}

func (c *cachingConn) release(cs *cachedStmt) {
	c.mu.Lock()
	cs.busy = false
	c.mu.Unlock()
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		ic, err := c.inner()
		if err != nil {
			return nil, err
		}
		return ic.ExecContext(ctx, query, args)
	}
	defer c.release(cs)
	return cs.s.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		ic, err := c.inner()
		if err != nil {
			return nil, err
		}
		return ic.QueryContext(ctx, query, args)
	}
	rows, err := cs.s.QueryContext(ctx, args)
	if err != nil {
		c.release(cs)
		return nil, err
	}
	return &cachedRows{Rows: rows, c: c, cs: cs}, nil
}

// PrepareContext is database/sql's own Prepare: the caller owns and
// closes the statement, so it is not one of the cache's.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	ic, err := c.inner()
	if err != nil {
		return nil, err
	}
	return ic.PrepareContext(ctx, query)
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	ic, err := c.inner()
	if err != nil {
		return nil, err
	}
	return ic.BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error {
	ic, err := c.inner()
	if err != nil {
		return err
	}
	return ic.Ping(ctx)
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	ic, err := c.inner()
	if err != nil {
		return err
	}
	return ic.ResetSession(ctx)
}

func (c *cachingConn) IsValid() bool {
	ic, err := c.inner()
	return err == nil && ic.IsValid()
}

// Close finalizes the kept statements, then closes the connection.
func (c *cachingConn) Close() error {
	c.mu.Lock()
	for q, cs := range c.stmts {
		cs.s.Close()
		delete(c.stmts, q)
	}
	c.mu.Unlock()
	return c.conn.Close()
}

// cachedRows are the rows of a kept statement: closing them resets the
// statement (the driver's doing) and frees it for the next use.
type cachedRows struct {
	driver.Rows
	c      *cachingConn
	cs     *cachedStmt
	closed bool
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.c.release(r.cs)
	}
	return err
}

// The driver's rows describe their columns; these pass that on
// (sql.Rows.ColumnTypes).

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if x, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return x.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return x.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypeNullable(i int) (bool, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return x.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return x.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if x, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return x.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
