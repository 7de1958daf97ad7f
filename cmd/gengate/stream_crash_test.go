package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestCrashMidOutputStream kills gengate (SIGKILL) while it streams a
// 64 MiB video output from a Replicate fake into local storage, half
// written. Nothing partial is visible (no output file, no creation); the
// restarted server polls the prediction again, downloads the file afresh
// and succeeds with the whole file, charged once. The temporary file the
// kill left is outside every key and is removed by the purge's
// SweepPartial once old (internal/blob tests).
func TestCrashMidOutputStream(t *testing.T) {
	const size = 64 << 20
	up, release := heldReplicate(t, size)
	dir, dbURL, args := crashSetup(t, "sqlite", "0s", "2s")
	cfg := filepath.Join(t.TempDir(), "providers.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("providers:\n  replicate:\n    apiKey: k\n    baseUrl: http://%s/v1\n", up.Addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--config", cfg)
	p1 := startProcess(t, args...)
	key := p1.key
	r := mustAPI(t, p1.base, "POST", "/api/v1/generate", key,
		map[string]any{"type": "video", "modelId": "google-veo-3", "prompt": "a long video"}, map[string]string{"Prefer": "respond-async"})
	wantCode(t, r, http.StatusAccepted)
	id := r.str("jobId")

	// Half the file is written when the fake holds the rest back, as a
	// temporary file beside where the output's key will be.
	files := filepath.Join(dir, "files")
	poll(t, 2*time.Minute, 20*time.Millisecond, "half the output written", func() bool {
		found := false
		filepath.WalkDir(files, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".tmp-") {
				if info, err := d.Info(); err == nil && info.Size() >= size/2 {
					found = true
				}
			}
			return nil
		})
		return found
	})
	filepath.WalkDir(filepath.Join(files, "outputs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".tmp-") {
			t.Fatalf("an output file is visible mid-stream: %s", p)
		}
		return nil
	})
	p1.kill(t)
	release()

	p2 := startProcess(t, args...)
	poll(t, 2*time.Minute, 100*time.Millisecond, "the task to succeed", func() bool {
		r := mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+id, key, nil, nil)
		switch r.str("status") {
		case "succeeded":
			return true
		case "processing":
			return false
		}
		t.Fatalf("task %s: %s\n%s", id, r.body, p2.logTail())
		return false
	})
	store, err := openDataStore(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	task, err := store.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Outputs) != 1 || task.Outputs[0].Size != size {
		t.Fatalf("creations %+v, want one of %d bytes", task.Outputs, size)
	}
	info, err := os.Stat(filepath.Join(dir, "files", task.Outputs[0].Key))
	if err != nil || info.Size() != size {
		t.Fatalf("stored output: %v, %v; want %d bytes", info, err, size)
	}
	ledger, err := store.Ledger(context.Background(), p1.account)
	if err != nil {
		t.Fatal(err)
	}
	charges := 0
	for _, e := range ledger {
		switch {
		case e.TaskID == id && e.Kind == gengate.LedgerCharge:
			charges++
		case e.Kind == gengate.LedgerRefund:
			t.Errorf("refund of task %s", e.TaskID)
		}
	}
	if charges != 1 {
		t.Errorf("task charged %d times, want once", charges)
	}
	if n := up.files.Load(); n != 2 {
		t.Errorf("the output was requested %d times, want 2 (the killed stream, the new one)", n)
	}
}

// heldReplicate starts the fake Replicate upstream with its outputs'
// downloads held until release is called (once; the test's end releases
// them too, then closes the fake).
func heldReplicate(t *testing.T, size int64) (up *fakeReplicate, release func()) {
	t.Helper()
	hold := make(chan struct{})
	up, err := startFakeReplicate(size, hold)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(func() {
		release()
		up.Close()
	})
	return up, release
}
