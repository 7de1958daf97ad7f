package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// sendRaw opens a connection of its own to the stack and sends one
// synchronous generate on it, without reading the answer: the client
// holds no goroutine or buffer, so that what a test measures is the
// server's.
func (s *stack) sendRaw(key, prompt string, header string) net.Conn {
	s.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		s.t.Fatal(err)
	}
	body := fmt.Sprintf(`{"type":"image","modelId":"flux","prompt":%q}`, prompt)
	_, err = fmt.Fprintf(c, "POST /api/v1/generate HTTP/1.1\r\nHost: gengate.test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", key, len(body), header, body)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// until waits for cond, failing the test if it does not hold within a
// minute (a bound for a stuck test, not a measured time).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not after a minute", what)
		}
	}
}

// TestParkedCalls: a synchronous generate over HTTP/1.1 waits parked off
// net/http and is answered as a waiting handler would have answered it:
// 200, the result body, the request's own headers (X-Request-Id, Vary,
// Preference-Applied), Content-Length, and then "Connection: close" and
// the close; the registry is empty afterwards.
func TestParkedCalls(t *testing.T) {
	t.Parallel()
	waiting := httpapi.NewWaiting()
	s := newStack(t, stackOpts{noWorkers: true, waiting: waiting})
	_, key := s.account(100)
	conns := []net.Conn{s.sendRaw(key, "one", ""), s.sendRaw(key, "two", "Prefer: wait=120\r\n")}
	until(t, "both calls parked", func() bool { return waiting.Len() == 2 })
	s.startWorkers(2)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("call %d: body: %v", i, err)
		}
		var got struct {
			JobID            string   `json:"jobId"`
			Images           []string `json:"images"`
			RemainingCredits *int     `json:"remainingCredits"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || !isUUID(got.JobID) ||
			len(got.Images) != 1 || got.RemainingCredits == nil {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		if !strings.HasPrefix(got.Images[0], "http://gengate.test/files/") {
			t.Errorf("call %d: output URL %s, want one on the request's host", i, got.Images[0])
		}
		for name, want := range map[string]string{"Content-Type": "application/json", "Vary": "Prefer",
			"Cache-Control": "no-store"} {
			if v := resp.Header.Get(name); v != want {
				t.Errorf("call %d: %s %q, want %q", i, name, v, want)
			}
		}
		if !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "req_") || resp.Header.Get("Date") == "" {
			t.Errorf("call %d: headers %v", i, resp.Header)
		}
		if !resp.Close { // ReadResponse takes "Connection: close" out of the header into Close
			t.Errorf("call %d: no Connection: close", i)
		}
		if resp.ContentLength != int64(len(body)) {
			t.Errorf("call %d: Content-Length %d for %d bytes", i, resp.ContentLength, len(body))
		}
		if pa := resp.Header.Get("Preference-Applied"); (i == 1) != (pa == "wait=120") {
			t.Errorf("call %d: Preference-Applied %q", i, pa)
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("call %d: after the answer, read %d, %v; want the connection closed", i, n, err)
		}
		c.Close()
	}
	until(t, "nothing parked or registered", func() bool { return waiting.Len() == 0 && s.svc.Events.Waiting() == 0 })
}

// TestParkedClientGone: a client that goes away while its call is parked
// frees the call and its waiter at once, long before the wait's end; its
// task goes on.
func TestParkedClientGone(t *testing.T) {
	t.Parallel()
	waiting := httpapi.NewWaiting()
	s := newStack(t, stackOpts{noWorkers: true, waiting: waiting})
	_, key := s.account(100)
	c := s.sendRaw(key, "gone", "")
	until(t, "the call parked", func() bool { return waiting.Len() == 1 && s.svc.Events.Waiting() == 1 })
	c.Close()
	until(t, "the call and its waiter freed", func() bool { return waiting.Len() == 0 && s.svc.Events.Waiting() == 0 })
	counts, err := s.store.CountTasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if counts[gengate.StatusQueued] != 1 {
		t.Errorf("tasks %v, want the one queued", counts)
	}
}

// TestParkedCallsAreLean: a thousand synchronous calls wait with no
// goroutine each and a few kilobytes each (a waiting handler took three
// goroutines and about 40 KB), and every one is answered 200. The bound
// has ample headroom; `gengate bench waiters` measures the real figure.
func TestParkedCallsAreLean(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	waiting := httpapi.NewWaiting()
	s := newStack(t, stackOpts{noWorkers: true, waiting: waiting})
	_, key := s.account(10 * n)
	wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "warm"}, async))
	before, beforeMem := runtime.NumGoroutine(), inUse()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = s.sendRaw(key, fmt.Sprintf("lean %d", i), "")
	}
	until(t, "every call parked", func() bool { return waiting.Len() == n })
	// The handlers' goroutines end once their calls are parked: a call
	// that kept one (or net/http's) would never let the count fall.
	until(t, "the goroutines of the parked calls ended", func() bool { return runtime.NumGoroutine()-before <= 30 })
	per := (inUse() - beforeMem) / int64(n)
	t.Logf("%d calls waiting: %d goroutines more, %d bytes of heap and stacks each", n, runtime.NumGoroutine()-before, per)
	if per > 12<<10 {
		t.Errorf("%d bytes of heap and stack a waiting call (client's sockets included), want under 12 KB", per)
	}
	s.startWorkers(4)
	ok := 0
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode == http.StatusOK {
			ok++
		}
	}
	if ok != n {
		t.Errorf("%d of %d calls answered 200", ok, n)
	}
}

// inUse is the live heap and the goroutine stacks, after a collection.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// TestParkedCountedAtShutdown: a call is counted by Waiting.Wait from
// before its connection is taken over from net/http. Once hijacked, the
// connection is no longer the server's, so a Shutdown at that moment
// returns without waiting for the handler; a Wait that did not count the
// call yet returned at once, and serve ended with the call unanswered
// (its client read EOF; TestShutdownEndsSyncWaits once failed so).
func TestParkedCountedAtShutdown(t *testing.T) {
	t.Parallel()
	waiting := httpapi.NewWaiting()
	hijacked, release := make(chan struct{}), make(chan struct{})
	httpapi.SetAfterHijack(waiting, func() {
		close(hijacked)
		<-release
	})
	s := newStack(t, stackOpts{noWorkers: true, waiting: waiting})
	_, key := s.account(100)
	c := s.sendRaw(key, "at shutdown", "")
	defer c.Close()
	<-hijacked // the call is between its hijack and its registration
	// Wait must not return while the call is unanswered: it can only end
	// by its context here (the bound is no measured time: a Wait that
	// does not count the call returns nil at once, whatever the machine).
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := waiting.Wait(ctx); err == nil {
		t.Error("Waiting.Wait returned with a hijacked call not yet answered")
	}
	close(release)
	until(t, "the call parked", func() bool { return waiting.Len() == 1 })
	c.Close() // the client goes away: its call is answered and freed
	if err := waiting.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
