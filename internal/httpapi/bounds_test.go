package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
)

// memUse is what a piece of work cost the test process's memory.
type memUse struct {
	PeakHeap   uint64 // highest HeapInuse seen above the starting one
	TotalAlloc uint64 // bytes allocated, freed or not
}

// measureMemory runs f and samples the heap while it runs. The process is
// collected first so that the baseline holds only live data; run it from a
// test that is not parallel, so no other test's allocations are counted.
func measureMemory(t *testing.T, f func()) memUse {
	t.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	peak = max(peak, after.HeapInuse)
	u := memUse{TotalAlloc: after.TotalAlloc - before.TotalAlloc}
	if peak > before.HeapInuse {
		u.PeakHeap = peak - before.HeapInuse
	}
	t.Logf("memory: peak heap +%d MB, allocated %d MB", u.PeakHeap>>20, u.TotalAlloc>>20)
	return u
}

// TestHugeUnknownBody: a 32 MiB body of about 3.15 million unknown fields
// (what took the server to 3 GB and answered a 213 MB problem) is refused
// with a small 400 that lists MaxFieldErrors of them and counts the rest,
// and the test process's heap stays under a fixed ceiling.
//
// The ceilings: the body (32 MiB) is built before measuring. Decoding it
// as a stream keeps a 32 KiB read buffer, the known members and 20 names,
// and allocates nothing per skipped member, so both figures should stay
// within a few MB (measured: under 1 MB). 50 MB of heap growth and 100 MB
// allocated leave room for the HTTP machinery and a busy machine, and are
// far below what one copy of the body's members as Go values costs (the
// map-and-copies decoding this replaced took 3 GB).
func TestHugeUnknownBody(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(100)
	const fields = 3_150_000
	var b bytes.Buffer
	b.Grow(33 << 20)
	b.WriteString(`{"type":"image","modelId":"flux","prompt":"x"`)
	for i := range fields {
		b.WriteString(`,"`)
		name := strconv.FormatInt(int64(i)+36*36*36*36, 36) // 5 letters
		b.WriteString(name)
		b.WriteString(`":0`)
	}
	b.WriteString("}")
	if b.Len() > 32<<20 {
		t.Fatalf("body is %d bytes, more than the 32 MiB limit", b.Len())
	}
	body := b.Bytes()
	var r response
	use := measureMemory(t, func() { r = s.generate(key, body, nil) })
	wantProblem(t, r, 400, gengate.EInvalid)
	if len(r.Body) > 8<<10 {
		t.Errorf("problem body is %d bytes, want a small one", len(r.Body))
	}
	errs, _ := r.JSON["errors"].([]any)
	if len(errs) != gengate.MaxFieldErrors {
		t.Errorf("problem lists %d errors, want %d", len(errs), gengate.MaxFieldErrors)
	}
	if got := r.num("omittedErrors"); got != fields-gengate.MaxFieldErrors {
		t.Errorf("omittedErrors = %d, want %d", got, fields-gengate.MaxFieldErrors)
	}
	if use.PeakHeap > 50<<20 {
		t.Errorf("heap grew by %d MB while refusing the body, want under 50 MB", use.PeakHeap>>20)
	}
	if use.TotalAlloc > 100<<20 {
		t.Errorf("refusing the body allocated %d MB, want under 100 MB", use.TotalAlloc>>20)
	}
	if n := s.taskCount(); n != 0 {
		t.Errorf("%d tasks stored", n)
	}
	if got := s.balance(acct); got != 100 {
		t.Errorf("balance %d, want 100", got)
	}
}

// TestDecodeMemoryOverloaded: inputs in flight are bounded by the decode
// memory. With room for two fetches, two requests whose input server
// holds them take it all; more requests meanwhile are refused at once with
// 503 OVERLOADED and Retry-After, storing and charging nothing (an upload
// too); once the two finish, requests go through again.
func TestDecodeMemoryOverloaded(t *testing.T) {
	t.Parallel()
	png := testPNG(t, 64, 64)
	var mu sync.Mutex
	held := 0
	release := make(chan struct{})
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow.png" {
			mu.Lock()
			held++
			mu.Unlock()
			<-release
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	t.Cleanup(img.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	// Each image fetch reserves its 1 MB size limit: two fit in 2 MB.
	s := newStack(t, stackOpts{allowPrivate: true, syncWait: time.Millisecond,
		fetch: fetch.Config{MaxBytes: 1 << 20, MaxVideoBytes: 1 << 20, MaxInputMemory: 1 << 20, MaxDecodeMemory: 2 << 20}})
	acct, key := s.account(1000)
	body := func(path string) map[string]any {
		return map[string]any{"type": "image", "modelId": "nano-banana", "prompt": "night", "imageUrl": img.URL + path}
	}
	slow := make(chan response, 2)
	for range 2 {
		go func() { slow <- s.generate(key, body("/slow.png"), async) }()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := held
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the input server saw %d requests, want 2", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for range 3 {
		r := s.generate(key, body("/fast.png"), async)
		wantProblem(t, r, 503, gengate.EOverloaded)
		if r.Header.Get("Retry-After") == "" {
			t.Error("503 OVERLOADED without Retry-After")
		}
	}
	// An upload's check takes decode memory too.
	files := s.fileCount()
	r := s.do(call{Method: "POST", Path: "/api/v1/files", Key: key, Body: png, Header: map[string]string{"Content-Type": "image/png"}})
	wantProblem(t, r, 503, gengate.EOverloaded)
	if r.Header.Get("Retry-After") == "" || s.fileCount() != files {
		t.Errorf("upload while overloaded: Retry-After %q, %d files stored", r.Header.Get("Retry-After"), s.fileCount()-files)
	}
	if n := s.taskCount(); n != 0 {
		t.Errorf("%d tasks stored while overloaded", n)
	}
	if got := s.balance(acct); got != 1000 {
		t.Errorf("balance %d after refusals, want 1000", got)
	}
	close(release)
	for range 2 {
		wantAccepted(t, <-slow)
	}
	wantAccepted(t, s.generate(key, body("/fast.png"), async))
}

// TestCPUJobsOverloaded: builtin (CPU) jobs in flight are capped per
// process. With --max-cpu-jobs 1 and no worker to run it, one remove-bg
// task holds the place: the next requests for CPU work are refused with
// 503 OVERLOADED and Retry-After before anything is stored or charged,
// while models on other engines are not held back. Once the job has run,
// CPU work is admitted again.
func TestCPUJobsOverloaded(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true, builtinJobs: 1})
	acct, key := s.account(1000)
	before := s.balance(acct)
	removeBG := map[string]any{"type": "image", "modelId": "remove-bg", "imageUrl": dataURL("image/png", testPNG(t, 48, 48))}
	first := wantAccepted(t, s.generate(key, removeBG, async))
	for range 3 {
		r := s.generate(key, removeBG, async)
		wantProblem(t, r, 503, gengate.EOverloaded)
		if r.Header.Get("Retry-After") == "" {
			t.Error("503 OVERLOADED without Retry-After")
		}
	}
	if n := s.taskCount(); n != 1 {
		t.Errorf("%d tasks stored, want 1", n)
	}
	after := s.balance(acct)
	wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async))
	if after != before-costOf(t, s, first) {
		t.Errorf("balance %d, want %d less the first task's cost", after, before)
	}
	for { // run every queued step, the remove-bg job among them
		did, err := s.svc.RunNext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			break
		}
	}
	wantAccepted(t, s.generate(key, removeBG, async))
}

// costOf is a task's cost as stored.
func costOf(t *testing.T, s *stack, id string) int {
	t.Helper()
	task, err := s.store.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return task.Cost
}

// TestFreeModelsPaced: calls of free models (cost 0, which no balance
// bounds) are paced per key: over the burst they get 429 RATE_LIMITED with
// Retry-After before anything is fetched or stored, while paid models and
// other keys go on.
func TestFreeModelsPaced(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noWorkers: true})
	s.svc.FreeLimit = httpapi.NewLimiter(0.001, 2) // two at once, then one every 1000 s
	_, key := s.account(100)
	_, other := s.account(100)
	free := map[string]any{"type": "image", "modelId": "remove-bg", "imageUrl": dataURL("image/png", testPNG(t, 16, 16))}
	for range 2 {
		wantAccepted(t, s.generate(key, free, async))
	}
	r := s.generate(key, free, async)
	wantProblem(t, r, http.StatusTooManyRequests, gengate.ERateLimited)
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	if n := s.taskCount(); n != 2 {
		t.Errorf("%d tasks, want 2", n)
	}
	wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, async))
	wantAccepted(t, s.generate(other, free, async))
}
