package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// closedWithin reads c until the server closes it and fails t if that
// takes longer than d (a generous bound: the server's own timeouts in
// these tests are a second or two). It returns what was read.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	var got strings.Builder
	_, err := io.Copy(&got, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection was still open after %s; read so far: %q", d, got.String())
	}
	return got.String()
}

func dial(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSlowBodiesCutOff sends request bodies that never finish, as a
// hostile client would: a byte at a time, and a chunked body without end.
// The server must close both connections once --read-timeout has passed.
func TestSlowBodiesCutOff(t *testing.T) {
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--read-timeout", "1s")
	for _, tc := range []struct {
		name, header string
		piece        string
		every        time.Duration
	}{
		{"one byte at a time", "Content-Length: 100000\r\n", "{", 300 * time.Millisecond},
		{"endless chunked body", "Transfer-Encoding: chunked\r\n", "1\r\n \r\n", 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, srv.base)
			fmt.Fprintf(c, "POST /api/v1/generate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n%s\r\n", srv.key, tc.header)
			stop := make(chan struct{})
			go func() { // the slow client: writes until the server hangs up
				for {
					select {
					case <-stop:
						return
					case <-time.After(tc.every):
					}
					if _, err := io.WriteString(c, tc.piece); err != nil {
						return
					}
				}
			}()
			defer close(stop)
			closedWithin(t, c, 30*time.Second)
		})
	}
}

// TestIdleConnectionsClosed: a keep-alive connection left idle after a
// request is closed by the server after --idle-timeout.
func TestIdleConnectionsClosed(t *testing.T) {
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--idle-timeout", "1s")
	c := dial(t, srv.base)
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("status %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the idle connection was still open after 30s")
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(fmt.Sprint(err), "reset") {
		t.Fatalf("read on the idle connection: %v, want EOF", err)
	}
}

// TestSyncWaitOutlivesReadTimeout: a generate call whose result takes
// longer than --read-timeout still gets it: waiting is not reading.
func TestSyncWaitOutlivesReadTimeout(t *testing.T) {
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--read-timeout", "1s", "--sandbox-delay", "3s")
	start := time.Now()
	r := mustAPI(t, srv.base, "POST", "/api/v1/generate", srv.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "slow"}, nil)
	wantCode(t, r, http.StatusOK)
	if took := time.Since(start); took < 3*time.Second {
		t.Fatalf("answered after %s, before the sandbox's 3s delay: the test proves nothing", took)
	}
}

// TestConnectionCap: with --max-conns 2 and two connections open, a third
// is not served until one of them closes.
func TestConnectionCap(t *testing.T) {
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--max-conns", "2", "--idle-timeout", "5m")
	get := func(c net.Conn, br *bufio.Reader) (*http.Response, error) {
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	var held []net.Conn
	for range 2 { // each served once, then held open (keep-alive)
		c := dial(t, srv.base)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if resp, err := get(c, bufio.NewReader(c)); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: %v", len(held)+1, err)
		}
		held = append(held, c)
	}
	third := dial(t, srv.base) // the kernel queues it; the server does not accept it
	br := bufio.NewReader(third)
	third.SetReadDeadline(time.Now().Add(time.Second))
	if resp, err := get(third, br); err == nil {
		t.Fatalf("a third connection was served (%d) while two were open", resp.StatusCode)
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection: %v, want no answer yet", err)
	}
	held[0].Close()
	third.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after one connection closed, the third got %v, %v", resp, err)
	}
}
