package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/worker"
)

// hangingEngine is an upstream that takes the work at once and then never
// answers a check until its caller gives up.
type hangingEngine struct {
	checking chan struct{} // closed when a check has started
	started  atomic.Bool
	checks   atomic.Int64
}

func (e *hangingEngine) Name() string     { return "sandbox" }
func (e *hangingEngine) Repeatable() bool { return false }
func (e *hangingEngine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	return gengate.Progress{UpstreamID: "up-1"}, nil
}
func (e *hangingEngine) Check(ctx context.Context, job gengate.Job, id string) (gengate.Progress, error) {
	e.checks.Add(1)
	if e.started.CompareAndSwap(false, true) {
		close(e.checking)
	}
	<-ctx.Done()
	return gengate.Progress{}, ctx.Err()
}

// TestShutdownCancelsSteps: a poll that hangs when the server shuts down
// is cut short at the end of the grace period and its task handed back,
// resumable (running, its upstream id kept, unleased, due at once), not
// sent to review; and a POST on its statusUrl meanwhile runs no step of
// its own, so nothing outlives the shutdown.
func TestShutdownCancelsSteps(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	eng := &hangingEngine{checking: make(chan struct{})}
	s.svc.Engines["sandbox"] = eng
	_, key := s.account(100)
	id := wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async))

	// With no worker, POSTs on the statusUrl answer after their wait and
	// run nothing: a step run by a request would hang here, beyond any
	// shutdown's reach.
	quick := &http.Client{Timeout: 20 * time.Second}
	for range 2 {
		req, _ := http.NewRequest("POST", s.URL+jobPath(id), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Prefer", "wait=1")
		resp, err := quick.Do(req)
		if err != nil {
			t.Fatalf("POST statusUrl: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST statusUrl: %d, want 202", resp.StatusCode)
		}
	}
	if n := eng.checks.Load(); n != 0 {
		t.Fatalf("%d checks run by requests", n)
	}

	ctx, shutdown := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		worker.Run(ctx, s.svc, s.svc.Events, worker.Config{Concurrency: 1, Grace: 200 * time.Millisecond}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { shutdown(); <-stopped })
	select {
	case <-eng.checking:
	case <-time.After(time.Minute):
		t.Fatal("the worker never polled the upstream")
	}
	wantAccepted(t, s.do(call{Method: "POST", Path: jobPath(id), Key: key, Header: map[string]string{"Prefer": "wait=1"}}))
	shutdown()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not stop after its grace period")
	}
	task, err := s.store.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != gengate.StatusRunning || task.UpstreamID != "up-1" || task.LeaseToken != "" || task.RunAt.After(time.Now()) {
		t.Errorf("after shutdown the task is %s (upstream %q, lease %q, due %v), want running, handed back, due now",
			task.Status, task.UpstreamID, task.LeaseToken, task.RunAt)
	}
	if n := eng.checks.Load(); n != 1 {
		t.Errorf("%d checks, want the worker's one", n)
	}
}
