package upstream

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestIdleConnsKept checks that NewHTTPClient keeps as many idle
// connections to a provider as it is told (serve gives its --workers):
// after a burst of `burst` calls at once, a second burst reuses `idle` of
// those connections and dials the rest again.
func TestIdleConnsKept(t *testing.T) {
	const burst = 6
	for _, idle := range []int{2, 6} {
		var dials atomic.Int32
		var arrived sync.WaitGroup
		release := make(chan struct{})
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived.Done()
			<-release // every call of a burst is in flight at once
			io.WriteString(w, "ok")
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				dials.Add(1)
			}
		}
		srv.Start()
		hc := NewHTTPClient(idle)
		runBurst := func() {
			arrived.Add(burst)
			var done sync.WaitGroup
			for range burst {
				done.Add(1)
				go func() {
					defer done.Done()
					resp, err := hc.Get(srv.URL)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}()
			}
			arrived.Wait()
			release <- struct{}{} // one at a time: each answer is read before the next
			for range burst - 1 {
				release <- struct{}{}
			}
			done.Wait()
		}
		runBurst()
		runBurst()
		srv.Close()
		if got, want := int(dials.Load()), burst+(burst-idle); got != want {
			t.Errorf("idle %d: %d connections for two bursts of %d calls, want %d", idle, got, burst, want)
		}
	}
}
