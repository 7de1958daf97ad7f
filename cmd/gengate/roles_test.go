package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestSplitRoles runs the scale-out shape: an API process and a separate
// worker process sharing one PostgreSQL database and one data directory.
// The API process runs no task steps, so a synchronous generate can only
// answer 200 if the worker process did the work and the API process heard
// of it (LISTEN/NOTIFY, with the reread as a safety net). The test waits
// for conditions only: the API process's sync limit is an hour, so a call
// that waits for a task ends when the task does, however loaded the
// machine (awaitAPI, bounded by the test's own deadline).
func TestSplitRoles(t *testing.T) {
	dbURL := sqltest.URL(t, "postgres")
	data := t.TempDir()
	api := startProcess(t, "--role", "api", "--database", dbURL, "--data", data, "--addr", "127.0.0.1:0", "--sync-wait", "1h")
	if api.key == "" {
		t.Fatalf("the API process printed no first-start key; %s", api.logTail())
	}

	// Without a worker, a task stays processing however long one waits.
	r := mustAPI(t, api.base, "POST", "/api/v1/generate", api.key,
		map[string]any{"type": "image", "modelId": "flux", "prompt": "split roles"}, map[string]string{"Prefer": "wait=1"})
	wantCode(t, r, http.StatusAccepted)
	first := r.str("jobId")

	worker := exec.Command(binary(t), "serve", "--role", "worker", "--database", dbURL, "--data", data)
	worker.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	worker.Stdout, worker.Stderr = logFile, logFile
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = worker.Process.Signal(syscall.SIGKILL)
		_ = worker.Wait()
	})
	workerLog := func() string { b, _ := os.ReadFile(logPath); return "worker log:\n" + string(b) }

	// The queued task is picked up by the worker: a POST on its statusUrl
	// that asks to wait (Prefer: wait=N; without it the wait is
	// --poll-wait) waits for its end and answers with its result.
	r = awaitAPI(t, api.base, "POST", "/api/generation/jobs/"+first, api.key, nil, map[string]string{"Prefer": "wait=3600"})
	if r.status != http.StatusOK {
		t.Fatalf("the first task: status %d, body %s; %s; %s", r.status, r.body, api.logTail(), workerLog())
	}
	if r = mustAPI(t, api.base, "GET", "/api/generation/jobs/"+first, api.key, nil, nil); r.str("status") != "succeeded" {
		t.Fatalf("the first task's record: %s", r.body)
	}

	// A synchronous generate is answered with the result.
	r = awaitAPI(t, api.base, "POST", "/api/v1/generate", api.key,
		map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "split roles video"}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("sync generate: status %d, body %s; %s; %s", r.status, r.body, api.logTail(), workerLog())
	}
	video := r.str("video")
	if !strings.HasPrefix(video, api.base+"/files/") {
		t.Fatalf("video URL %q is not served by the API process", video)
	}
	data2, err := download(video)
	if err != nil || !isMedia(data2) {
		t.Fatalf("download %s: %v (media: %v)", video, err, isMedia(data2))
	}
}

// TestPollWithoutWorker: with only an API process running (no worker will
// ever run the task), POST on a statusUrl answers 202 with the task within
// 15 s: it waits --poll-wait (5 s by default), not the 3-minute sync limit.
func TestPollWithoutWorker(t *testing.T) {
	api := startProcess(t, "--role", "api", "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	r := mustAPI(t, api.base, "POST", "/api/v1/generate", api.key,
		map[string]any{"type": "image", "modelId": "flux", "prompt": "poll alone"}, map[string]string{"Prefer": "respond-async"})
	wantCode(t, r, http.StatusAccepted)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	p, err := apiWith(ctx, &http.Client{}, api.base, "POST", "/api/generation/jobs/"+r.str("jobId"), api.key, nil, nil)
	if err != nil {
		t.Fatalf("no answer within 15 s: %v; %s", err, api.logTail())
	}
	wantCode(t, p, http.StatusAccepted)
	if p.str("jobId") != r.str("jobId") || p.str("status") != "processing" {
		t.Errorf("answer: %s", p.body)
	}
	t.Logf("answered 202 after %s", time.Since(start).Round(time.Millisecond))
}
