package gengate_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	upclient "github.com/gengate/gengate/internal/engine/upstream"
)

// fileServer is an upstream's file host: GET /{name} serves a generated
// PNG of size bytes (a real PNG signature, then filler), made as it is
// sent, never held whole. declare sends Content-Length; cutAt, when
// positive, breaks the connection after that many bytes on the first
// request. sent counts the bytes written.
type fileServer struct {
	*httptest.Server
	size, cutAt int64
	declare     bool
	requests    atomic.Int64
	sent        atomic.Int64
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")

func newFileServer(t *testing.T, size int64, declare bool, cutAt int64) *fileServer {
	s := &fileServer{size: size, declare: declare, cutAt: cutAt}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := s.requests.Add(1) == 1
		w.Header().Set("Content-Type", "image/png")
		if s.declare || (first && s.cutAt > 0) {
			w.Header().Set("Content-Length", strconv.FormatInt(s.size, 10))
		}
		chunk := make([]byte, 32<<10)
		copy(chunk, pngSignature)
		for left := s.size; left > 0; {
			n := min(left, int64(len(chunk)))
			if first && s.cutAt > 0 && s.size-left+n > s.cutAt {
				panic(http.ErrAbortHandler) // the connection breaks mid-file
			}
			if _, err := w.Write(chunk[:n]); err != nil {
				return // the client went away
			}
			s.sent.Add(n)
			left -= n
			clear(chunk[:len(pngSignature)])
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// streamingUpstream is the fake engine whose Check hands over its
// outputs as streams, downloaded by the real upstream client from srv.
func streamingUpstream(srv *fileServer, n int) *upstream {
	c := upclient.NewClient("fake", upclient.Config{BaseURL: srv.URL}, srv.URL, "", "", nil)
	return &upstream{
		submit: func(job gengate.Job) (gengate.Progress, error) {
			return gengate.Progress{UpstreamID: "up-1", RetryAfter: time.Second}, nil
		},
		check: func(job gengate.Job, id string) (gengate.Progress, error) {
			var outs []gengate.Output
			for i := range n {
				o, err := c.Download(context.Background(), "/out-"+strconv.Itoa(i)+".png", "image")
				if err != nil {
					gengate.CloseOutputs(outs)
					return gengate.Progress{}, err
				}
				outs = append(outs, o)
			}
			return gengate.Progress{UpstreamID: id, Outputs: outs}, nil
		},
	}
}

// storedFiles lists every file under the blob directory, temporary ones
// included.
func storedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, dir))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestOutputOverLimitIsCutOffMidStream: an output over --max-output-bytes
// is refused while it streams (without Content-Length) or before (with
// it): the task fails with UPSTREAM_ERROR and its credits back, and no
// file, whole or partial, is left in storage.
func TestOutputOverLimitIsCutOffMidStream(t *testing.T) {
	const limit, size = 1 << 20, 64 << 20
	for _, declare := range []bool{false, true} {
		t.Run("contentLength="+strconv.FormatBool(declare), func(t *testing.T) {
			srv := newFileServer(t, size, declare, 0)
			d := newDomain(t, "sqlite", streamingUpstream(srv, 1))
			d.svc.MaxOutputBytes = limit
			task := d.generate("a big file", "")
			d.runNext() // submit
			d.clock.Add(time.Minute)
			d.runNext() // check: the download is refused
			got := d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
			if got.ErrorCode != gengate.CodeUpstream || !strings.Contains(got.ErrorMessage, "larger than the 1048576 bytes") {
				t.Errorf("failure %s %q, want UPSTREAM_ERROR over the limit", got.ErrorCode, got.ErrorMessage)
			}
			if len(got.Outputs) != 0 {
				t.Errorf("failed task has %d outputs", len(got.Outputs))
			}
			if files := storedFiles(t, d.files); len(files) != 0 {
				t.Errorf("storage holds %v after the refused output, want nothing", files)
			}
			// Refused mid-way: far from all 64 MiB were sent (socket
			// buffers hold a few MiB at most).
			if sent := srv.sent.Load(); sent >= size/2 {
				t.Errorf("the upstream sent %d of %d bytes; the stream was not cut off", sent, size)
			}
		})
	}
}

// TestBrokenOutputStreamIsFetchedAgain: a download the upstream breaks
// off mid-file stores nothing; the next step checks the upstream again
// and stores the whole file.
func TestBrokenOutputStreamIsFetchedAgain(t *testing.T) {
	const size = 3 << 20
	srv := newFileServer(t, size, true, 1<<20)
	d := newDomain(t, "sqlite", streamingUpstream(srv, 2))
	task := d.generate("a broken stream", "")
	d.runNext() // submit
	d.clock.Add(time.Minute)
	d.runNext() // check: the first download breaks off
	if got := d.task(task.ID); got.Status != gengate.StatusRunning || len(got.Outputs) != 0 {
		t.Fatalf("after a broken download: %s with %d outputs, want running with none", got.Status, len(got.Outputs))
	}
	if files := storedFiles(t, d.files); len(files) != 0 {
		t.Fatalf("storage holds %v after the broken download, want nothing", files)
	}
	d.clock.Add(time.Minute)
	d.runNext() // check again: both files arrive
	got := d.wantState(task.ID, gengate.StatusSucceeded, "", 96, 0)
	if len(got.Outputs) != 2 {
		t.Fatalf("%d outputs, want 2", len(got.Outputs))
	}
	for _, o := range got.Outputs {
		info, err := os.Stat(filepath.Join(d.files, o.Key))
		if err != nil || info.Size() != size || o.Size != size {
			t.Errorf("output %s: stored %v bytes (record %d), %v; want %d", o.Key, info, o.Size, err, size)
		}
	}
}

// TestStreamedOutputsKeepMemoryFlat: four 200 MB outputs stored at once
// take a few copy buffers of memory, not 800 MB. The process's peak RSS
// (VmHWM, reset before the run) is asserted with generous headroom; the
// figure for four 1 GB outputs through the real binary is `gengate bench
// outputs` (docs/benchmarks.md, docs/notes/large-files.md).
func TestStreamedOutputsKeepMemoryFlat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	const size, tasks, ceiling = 200 << 20, 4, 150 << 20
	srv := newFileServer(t, size, true, 0)
	d := newDomain(t, "sqlite", streamingUpstream(srv, 1))
	d.svc.MaxOutputBytes = 1 << 30
	d.acct, d.key = d.account(1000)
	var ids []string
	for i := range tasks {
		ids = append(ids, d.generate("a long video "+strconv.Itoa(i), "").ID)
	}
	for range tasks {
		d.runNext() // submits
	}
	d.clock.Add(time.Minute)
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	var wg sync.WaitGroup
	for range tasks {
		wg.Go(func() {
			if _, err := d.svc.RunNext(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	peak := vmHWM(t)
	t.Logf("peak RSS while storing %d × %d MB: %d MB", tasks, size>>20, peak>>20)
	for _, id := range ids {
		if got := d.task(id); got.Status != gengate.StatusSucceeded || len(got.Outputs) != 1 || got.Outputs[0].Size != size {
			t.Fatalf("task %s: %s, outputs %v", id, got.Status, got.Outputs)
		}
	}
	if peak > ceiling {
		t.Errorf("peak RSS %d MB, want under %d MB", peak>>20, ceiling>>20)
	}
}

func vmHWM(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// TestSlowOutputPastDownloadTimeoutFails: an upstream that sends the
// start of an output and then nothing more is cut off once the client's
// download timeout (--output-download-timeout) passes: the task fails
// with UPSTREAM_ERROR, refunded, and nothing is left in storage. The fake
// holds the file until the client goes away, so only the timeout ends it.
func TestSlowOutputPastDownloadTimeoutFails(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(append(pngSignature, make([]byte, 600)...))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes while the client waits
	}))
	t.Cleanup(srv.Close)
	c := upclient.NewClient("fake", upclient.Config{BaseURL: srv.URL, DownloadTimeout: 50 * time.Millisecond}, srv.URL, "", "", nil)
	d := newDomain(t, "sqlite", &upstream{
		submit: func(job gengate.Job) (gengate.Progress, error) {
			return gengate.Progress{UpstreamID: "up-1", RetryAfter: time.Second}, nil
		},
		check: func(job gengate.Job, id string) (gengate.Progress, error) {
			o, err := c.Download(context.Background(), "/out.png", "image")
			if err != nil {
				return gengate.Progress{}, err
			}
			return gengate.Progress{UpstreamID: id, Outputs: []gengate.Output{o}}, nil
		},
	})
	task := d.generate("a slow file", "")
	d.runNext() // submit
	d.clock.Add(time.Minute)
	d.runNext() // check: the download starts, then times out
	got := d.wantState(task.ID, gengate.StatusFailed, "", 100, 1)
	if got.ErrorCode != gengate.CodeUpstream || !strings.Contains(got.ErrorMessage, "--output-download-timeout") {
		t.Errorf("failure %s %q, want UPSTREAM_ERROR naming the download timeout", got.ErrorCode, got.ErrorMessage)
	}
	if files := storedFiles(t, d.files); len(files) != 0 {
		t.Errorf("storage holds %v after the timed-out output, want nothing", files)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the output was requested %d times, want once", n)
	}
}
