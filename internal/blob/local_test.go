package blob

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

func TestLocalPutGetDelete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "outputs/task/0.png", []byte("first"), "image/png"); err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "outputs/task/0.png", []byte("second"), "image/png"); err != nil {
		t.Fatal(err)
	}
	got, err := l.Get(ctx, "outputs/task/0.png")
	if err != nil || !bytes.Equal(got, []byte("second")) {
		t.Fatalf("Get = %q, %v; want the second write", got, err)
	}
	// No temporary files are left beside the blob.
	entries, _ := os.ReadDir(filepath.Join(dir, "outputs", "task"))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want 1: %v", len(entries), entries)
	}
	if err := l.Delete(ctx, "outputs/task/0.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Get(ctx, "outputs/task/0.png"); gengate.ErrorCode(err) != gengate.ENotFound {
		t.Fatalf("Get after Delete: %v, want NOT_FOUND", err)
	}
	if err := l.Delete(ctx, "outputs/task/0.png"); err != nil {
		t.Fatalf("second Delete: %v, want nil", err)
	}
}

func TestLocalRefusesKeysOutsideItsDirectory(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", `a\b`, "a/"} {
		if err := l.Put(context.Background(), key, []byte("x"), "text/plain"); err == nil {
			t.Errorf("Put(%q) succeeded, want an error", key)
		}
		if _, err := l.Get(context.Background(), key); err == nil {
			t.Errorf("Get(%q) succeeded, want an error", key)
		}
	}
}

func TestLocalList(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"inputs/a/imageUrl", "inputs/b/mask", "outputs/a/0.png"} {
		if err := l.Put(ctx, key, []byte("x"), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.List(ctx, "inputs/", time.Now().Add(time.Minute))
	if err != nil || strings.Join(got, ",") != "inputs/a/imageUrl,inputs/b/mask" {
		t.Fatalf("List(inputs/, later) = %v, %v", got, err)
	}
	got, err = l.List(ctx, "inputs/", time.Now().Add(-time.Minute))
	if err != nil || len(got) != 0 {
		t.Fatalf("List(inputs/, earlier) = %v, %v; want none", got, err)
	}
}

func TestLocalListEmpty(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := l.List(context.Background(), "inputs/", time.Now()); err != nil || len(got) != 0 {
		t.Fatalf("List on an empty store = %v, %v; want none, nil", got, err)
	}
}

// TestLocalPutAfterItsDirectoryWentAway: a Delete of a directory's last
// file removes the directory; a later Put into it (known to this store)
// makes it again.
func TestLocalPutAfterItsDirectoryWentAway(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"put a", "delete a", "put b"} {
		var err error
		switch step {
		case "put a":
			err = l.Put(ctx, "outputs/ab/a.png", []byte("a"), "image/png")
		case "delete a":
			err = l.Delete(ctx, "outputs/ab/a.png")
		case "put b":
			err = l.Put(ctx, "outputs/ab/b.png", []byte("b"), "image/png")
		}
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	if got, err := l.Get(ctx, "outputs/ab/b.png"); err != nil || string(got) != "b" {
		t.Fatalf("Get = %q, %v", got, err)
	}
}

// TestLocalSweepsOlderPartialDirectory: temporary files left by older
// versions in .tmp-partial are swept with those beside the keys; stored
// files are left alone.
func TestLocalSweepsOlderPartialDirectory(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "outputs/ab/a.png", []byte("a"), "image/png"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".tmp-partial/.tmp-1", "outputs/ab/.tmp-2"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := l.SweepPartial(ctx, time.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Fatalf("SweepPartial = %d, %v; want 2", n, err)
	}
	if got, err := l.Get(ctx, "outputs/ab/a.png"); err != nil || string(got) != "a" {
		t.Fatalf("Get after the sweep = %q, %v", got, err)
	}
}

// BenchmarkLocalPutStream16 stores 4 KiB outputs under their keys from 16
// goroutines at once, as the workers' step slots do, and reports the
// process's CPU (user and system, from getrusage) per file: on local
// storage that is mostly the file system's work (create, fsync, rename,
// directory fsync).
func BenchmarkLocalPutStream16(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 4096)
	l, err := NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(16 / runtime.GOMAXPROCS(0))
	start := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := gengate.NewID()
			if _, err := l.PutStream(context.Background(), "outputs/"+id[:2]+"/"+id+"-0.png", bytes.NewReader(data), "image/png"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLocalForgetsRemovedDirectories: the directories a store knows are
// those that still exist, so a directory per task (inputs) does not grow
// its memory for ever.
func TestLocalForgetsRemovedDirectories(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		key := fmt.Sprintf("inputs/task%d/imageUrl", i)
		if err := l.Put(ctx, key, []byte("x"), "image/png"); err != nil {
			t.Fatal(err)
		}
		if err := l.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	l.dirs.Range(func(k, v any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("the store keeps %d directories in memory after every file was deleted, want 0", n)
	}
}

// TestLocalPutOntoDirectoryFails: a key whose path is a directory (the
// parent of other keys) is refused, the directory and what it holds are
// kept, and no temporary file is left. PutStream renames without
// os.Rename's Lstat of the target; rename(2) refuses a directory itself.
func TestLocalPutOntoDirectoryFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "outputs/ab/task-0.png", []byte("kept"), "image/png"); err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "outputs/ab", []byte("over a directory"), "image/png"); err == nil {
		t.Fatal("Put over a directory succeeded")
	}
	if got, err := l.Get(ctx, "outputs/ab/task-0.png"); err != nil || string(got) != "kept" {
		t.Fatalf("Get = %q, %v; want the file under the directory kept", got, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "outputs"))
	if len(entries) != 1 || entries[0].Name() != "ab" || !entries[0].IsDir() {
		t.Fatalf("outputs/ holds %v, want only the directory ab", entries)
	}
}

// TestLocalPutStreamReusesCopyBuffer: storing a small stream does not
// allocate a copy buffer for every file (io.Copy into an *os.File made a
// new 32 KiB one each time).
func TestLocalPutStreamReusesCopyBuffer(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 4096)
	put := func(i int) {
		if _, err := l.PutStream(ctx, fmt.Sprintf("outputs/ab/task-%d.png", i), bytes.NewReader(data), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	put(-1) // the directory, and the first buffer
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		put(i)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per file", per)
	if per >= copyBufferSize/2 {
		t.Fatalf("PutStream of %d bytes allocated %d bytes per file, want under %d", len(data), per, copyBufferSize/2)
	}
}
