package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
)

// Parked calls: synchronous calls that wait off net/http.
//
// A synchronous generate call (or a POST on a statusUrl) may wait minutes
// for its task, and a gateway holds thousands of them. Waiting in the
// handler keeps, per call, net/http's connection goroutine and its stack,
// its background-read goroutine, its 4 KB read and 4 KB write buffers and
// the request's state, about 40 KB a call (docs/notes/waiters.md). So once the task is committed and the call is
// to wait, an HTTP/1.x call is parked: its connection is taken over from
// net/http (http.Hijacker), net/http's buffers and goroutines are let go,
// and what is left is the socket and a small record (parked) with what
// the answer needs. The task's waiter calls back when the wait is over
// (gengate.Service.WaitFunc: no goroutine per wait; the reads of the
// tasks run on a few shared goroutines), and the answer, the same status,
// headers and body the handler would have written, is written to the
// socket with Content-Length and "Connection: close": a parked
// connection is closed after its answer, never reused (a client opens a
// new one for its next call, as it must after any long wait on many
// proxies). A client that goes away (closes or resets its connection)
// ends its wait at once (hangups: one epoll instance for every parked
// socket, Linux only). A draining server answers every parked call at
// once with its task as it is, and Waiting.Wait lets it wait for those
// answers to go out.
//
// HTTP/2 connections cannot be taken over, and elsewhere than Linux no
// parked socket can be watched: those calls wait in their handlers as
// before (await).

// Waiting holds the parked calls of a server.
type Waiting struct {
	calls   sync.WaitGroup
	n       atomic.Int64
	hangups hangups
	// afterHijack, when set (tests only), runs in park between the
	// connection's hijack and the call's registration.
	afterHijack func()
}

// NewWaiting returns an empty Waiting.
func NewWaiting() *Waiting { return &Waiting{} }

// Len returns how many calls are parked.
func (w *Waiting) Len() int { return int(w.n.Load()) }

// Wait waits until every parked call has been answered (after Config.Drain
// closed, each is answered at once) or ctx ends.
func (w *Waiting) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		w.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerWriteTimeout bounds the write of a parked call's answer: it is a
// few hundred bytes to a socket whose buffer is empty, unless the client
// stopped reading.
const answerWriteTimeout = 30 * time.Second

// closeLinger bounds the wait, after a parked call's answer, for its
// client to close the connection.
const closeLinger = 2 * time.Second

// maxParkDrain is the most of a request body still unread that a call is
// parked with: the rest is read and discarded first (bytes left unread in
// the socket would make its close a reset, which can lose the answer).
const maxParkDrain = 64 << 10

// parked is one parked call: its socket and what its answer needs.
type parked struct {
	a       *api
	conn    net.Conn
	header  http.Header // the answer's headers so far (X-Request-Id, Vary, Preference-Applied)
	last    *gengate.Outcome
	id      string // the request id
	client  string // the client's address (clientaddr.go)
	method  string
	path    string
	pattern string
	host    string
	tls     bool
	start   time.Time

	mu        sync.Mutex // guards the three below while park sets them
	watch     *gengate.Watch
	unwatch   func() // stops watching for a hangup
	stopDrain func() bool
}

// park hands the call's wait for its task, up to wait, over to the
// service and its connection over from net/http, and reports true; the
// handler must then return without writing. It reports false, having
// written nothing, when the call cannot be parked: the caller waits as
// before.
func (a *api) park(w http.ResponseWriter, r *http.Request, accountID string, o *gengate.Outcome, wait time.Duration) bool {
	rec, ok := w.(*statusRecorder)
	if !canPark || !ok || r.ProtoMajor != 1 {
		return false
	}
	if n, err := io.CopyN(io.Discard, r.Body, maxParkDrain+1); n > maxParkDrain || err != io.EOF {
		return false
	}
	// Counted before the hijack: once the connection is no longer
	// net/http's, a server's Shutdown stops waiting for this handler, and
	// Waiting.Wait, which the shutdown waits on next, must already count
	// the call, or the process could end with it unanswered.
	a.waiting.calls.Add(1)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		a.waiting.calls.Done()
		return false
	}
	if a.waiting.afterHijack != nil {
		a.waiting.afterHijack()
	}
	rec.parked = true
	// Of the task as it was, the parked call keeps what its 202 needs
	// (writeOutcome of an active task), not the whole request.
	t := o.Task
	last := &gengate.Outcome{Task: &gengate.Task{ID: t.ID, Status: t.Status, Type: t.Type, ModelID: t.ModelID,
		Engine: t.Engine, RunAt: t.RunAt}, Balance: o.Balance}
	client, _ := r.Context().Value(keyClient).(string)
	p := &parked{a: a, conn: conn, header: w.Header().Clone(), last: last, id: requestID(r), client: client, method: r.Method,
		path: logPath(r), pattern: r.Pattern, host: r.Host, tls: r.TLS != nil, start: rec.start}
	a.waiting.n.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watch = a.svc.WaitFunc(accountID, o.Task.ID, wait, p.done)
	if unwatch, ok := a.waiting.hangups.add(conn, p.gone); ok {
		p.unwatch = unwatch
	}
	p.stopDrain = context.AfterFunc(a.drained, p.watch.Finish)
	return true
}

// done is the end of the wait (the service's reading goroutine calls it).
func (p *parked) done(o *gengate.Outcome, err error) {
	if err != nil {
		// The task exists (its transaction committed): a failure to read
		// it back answers with the task as it was, never an error.
		p.a.log.Warn("waiting for a task failed; answering with it as it was",
			"jobId", p.last.Task.ID, "err", err, "requestId", p.id)
		o = p.last
	}
	go p.answer(o)
}

// gone is the client going away (the hangups goroutine calls it): the
// wait ends, and the task as it was is written, for a client that only
// half-closed its connection, before the close.
func (p *parked) gone() {
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	if w.Stop() {
		go p.answer(p.last)
	}
}

// answer writes the answer to o and closes the connection.
func (p *parked) answer(o *gengate.Outcome) {
	defer p.a.waiting.calls.Done()
	defer p.a.waiting.n.Add(-1)
	defer func() {
		// net/http recovers a handler's panic; this runs on no handler's
		// goroutine, and one call must not stop the server.
		if v := recover(); v != nil {
			p.a.log.Error("answering a parked call panicked", "panic", v, "requestId", p.id)
			_ = p.conn.Close()
		}
	}()
	p.mu.Lock()
	unwatch, stopDrain := p.unwatch, p.stopDrain
	p.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	stopDrain()
	res := &heldResponse{header: p.header}
	r := p.request()
	p.a.writeOutcome(res, r, o)
	res.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	resp := &http.Response{StatusCode: res.status, ProtoMajor: 1, ProtoMinor: 1, Header: res.header,
		ContentLength: int64(res.body.Len()), Body: io.NopCloser(&res.body), Close: true}
	// Counted and logged before the answer is written, as a handler's
	// middleware would have done by the time its client reads the end of
	// the answer: a client that reads /metrics or the log right after its
	// answer sees its call there.
	p.a.finished(r.Context(), p.pattern, p.id, p.method, p.path, res.status, time.Since(p.start), true)
	_ = p.conn.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
	err := resp.Write(p.conn)
	if cw := closeWriter(p.conn); cw != nil && err == nil && cw.CloseWrite() == nil {
		// As net/http does before closing: let the client read the answer
		// and close first, since closing a socket with unread bytes sends
		// a reset, which may destroy the answer before it is read.
		_ = p.conn.SetReadDeadline(time.Now().Add(closeLinger))
		_, _ = io.Copy(io.Discard, io.LimitReader(p.conn, maxParkDrain))
	}
	_ = p.conn.Close()
}

// closeWriter is the connection under c that can close its writing half
// (a TCP connection, through wrappers' NetConn), or nil.
func closeWriter(c net.Conn) interface{ CloseWrite() error } {
	for range 8 {
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			return cw
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// request is what the answer's writers read of the request.
func (p *parked) request() *http.Request {
	r := &http.Request{Method: p.method, Host: p.host, URL: &url.URL{Path: p.path}, Header: http.Header{}, Pattern: p.pattern}
	if p.tls {
		r.TLS = &tls.ConnectionState{}
	}
	return r.WithContext(context.WithValue(context.WithValue(context.Background(), keyRequestID, p.id), keyClient, p.client))
}

// heldResponse is an http.ResponseWriter that keeps the answer.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return h.body.Write(b)
}
