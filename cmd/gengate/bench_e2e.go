//go:build bench

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// benchE2E is "gengate bench e2e": end-to-end tasks per second through a
// queued upstream on loopback. The benchmark serves a fake of fal's queue
// API itself (benchFal) and starts a gengate (child process) whose
// --config routes every fal model to it. Its clients submit --tasks
// respond-async generates of flux; gengate's workers submit each to the
// fake, poll its status, fetch the result, download the output (a small
// PNG), store it and finish the task. The clock stops when the database
// counts every task succeeded. Then the same clients run the same
// protocol directly against the fake (submit, status, result, download),
// without gengate: the ratio is what the gateway costs per task.
func benchE2E(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var data, database, profile string
	var clients, tasks, workers int
	var profileFor time.Duration
	f := newFlags("bench e2e", getenv, stderr)
	f.StringVar(&profile, "profile", "", "directory to write the server's CPU profile to (cpu.pprof), taken from the first submit for --profile-for")
	f.DurationVar(&profileFor, "profile-for", 5*time.Second, "length of the --profile (give enough --tasks to keep the server busy that long)")
	benchTargetFlags(f, &data, &database)
	f.IntVar(&clients, "clients", 16, "concurrent clients submitting")
	f.IntVar(&tasks, "tasks", 2000, "tasks to run through gengate (and directly through the fake)")
	f.IntVar(&workers, "workers", 0, "--workers of the gengate under test (0: serve's default)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if clients < 1 || tasks < 1 {
		return errors.New("--clients and --tasks must be ≥ 1")
	}
	data, cleanup, err := benchData(data)
	if err != nil {
		return err
	}
	defer cleanup()
	fake, err := startBenchFal()
	if err != nil {
		return err
	}
	defer fake.close()
	config := filepath.Join(data, "bench-e2e.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, "providers:\n  fal:\n    apiKey: %s\n    baseUrl: %s\n", fake.key, fake.base), 0o600); err != nil {
		return err
	}
	key, err := benchKey(ctx, database, data)
	if err != nil {
		return err
	}
	// The operator listener: the writer's counters, and the profile.
	var under benchServe
	under.set("config", config)
	under.set("admin-addr", "127.0.0.1:0")
	if workers > 0 {
		under.set("workers", strconv.Itoa(workers))
	}
	srv, err := startBenchServer(ctx, data, database, under.args...)
	if err != nil {
		return err
	}
	defer srv.stop()
	store, err := sqlstore.Open(ctx, database, data)
	if err != nil {
		return err
	}
	defer store.Close()

	db := benchDatabase(database)
	fmt.Fprintf(stdout, "gengate bench e2e: %d tasks, %d clients, %s, fake fal queue on %s\ngengate under test: %s\n",
		tasks, clients, db, fake.base, under)
	// gengate: submit every task, then wait until the database counts
	// them all succeeded.
	body := `{"type":"image","modelId":"flux","prompt":"an end-to-end bench"}`
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	var profiled chan error
	if profile != "" {
		profiled = make(chan error, 1)
		go func() { profiled <- benchCPUProfile(srv, profile, profileFor) }()
	}
	cpu0, own0, conns0 := srv.cpu(), benchOwnCPU(), fake.conns.Load()
	w0 := benchStages(srv) // the SQLite writer's work before the run
	start := time.Now()
	failed, firstErr := benchClients(ctx, clients, tasks, func(int) error {
		status, answer, err := benchPost(hc, srv.base, key, body)
		if err == nil && status != http.StatusAccepted {
			err = fmt.Errorf("status %d: %.200s", status, answer)
		}
		return err
	})
	submitted := time.Since(start)
	var succeeded, other int
	for {
		counts, err := store.CountTasks(ctx)
		if err != nil {
			return err
		}
		succeeded, other = counts[gengate.StatusSucceeded], 0
		for s, n := range counts {
			if !s.Active() && s != gengate.StatusSucceeded {
				other += n
			}
		}
		if succeeded+other+failed >= tasks {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	cpu, own := srv.cpu()-cpu0, benchOwnCPU()-own0
	gate := float64(succeeded) / elapsed.Seconds()
	fmt.Fprintf(stdout, "%-10s %10s %10s %10s %9s %8s %10s\n", "target", "tasks/s", "submitted", "finished", "ok", "errors", "server CPU")
	fmt.Fprintf(stdout, "%-10s %10.0f %10s %10s %9d %8d %9.2fc\n", "gengate", gate, submitted.Round(time.Millisecond),
		elapsed.Round(time.Millisecond), succeeded, failed+other, cpu.Seconds()/elapsed.Seconds())
	if firstErr != "" {
		fmt.Fprintf(stdout, "  first error: %s\n", firstErr)
	}
	fmt.Fprintf(stdout, "  CPU per task: server %.3f ms, bench process (clients, fake fal, counting) %.3f ms\n",
		benchPerTask(cpu, tasks), benchPerTask(own, tasks))
	fmt.Fprintf(stdout, "  connections gengate opened to the fake fal: %d\n", fake.conns.Load()-conns0)
	w1 := benchStages(srv)
	printWriterLoad(stdout, w0, w1, elapsed, tasks, "task")
	printStages(stdout, w0, w1)
	if profiled != nil {
		if err := <-profiled; err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	// The same work straight against the fake.
	own0 = benchOwnCPU()
	start = time.Now()
	dfailed, dfirst := benchClients(ctx, clients, tasks, func(int) error { return fake.direct(hc) })
	delapsed := time.Since(start)
	direct := float64(tasks-dfailed) / delapsed.Seconds()
	fmt.Fprintf(stdout, "%-10s %10.0f %10s %10s %9d %8d\n", "direct", direct, "", delapsed.Round(time.Millisecond), tasks-dfailed, dfailed)
	if dfirst != "" {
		fmt.Fprintf(stdout, "  first error: %s\n", dfirst)
	}
	fmt.Fprintf(stdout, "  CPU per task: bench process (clients, fake fal) %.3f ms\n", benchPerTask(benchOwnCPU()-own0, tasks))
	if direct > 0 {
		fmt.Fprintf(stdout, "ratio gengate/direct: %.3f\n", gate/direct)
	}
	return nil
}

// benchOwnCPU is the CPU (user and system) the bench process itself has
// used: its clients and its fake upstream share the cores with the server.
func benchOwnCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPerTask is cpu over n tasks in milliseconds.
func benchPerTask(cpu time.Duration, n int) float64 {
	return cpu.Seconds() * 1000 / float64(n)
}

// benchClients runs n calls of do from clients goroutines and returns the
// number that failed and the first error.
func benchClients(ctx context.Context, clients, n int, do func(i int) error) (failed int, firstErr string) {
	var next, nfailed atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					nfailed.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	wg.Wait()
	firstErr, _ = first.Load().(string)
	return int(nfailed.Load()), firstErr
}

// benchFal is a fake of fal's queue API for the benchmark, written from
// fal's documentation like internal/engine/fal/faltest (which is built for
// tests: it validates every request against the model's schema and needs
// a testing.TB):
//
//   - https://docs.fal.ai/model-endpoints/queue: POST /{endpoint} answers
//     {request_id, response_url, status_url, cancel_url, status IN_QUEUE};
//     GET /{owner}/{app}/requests/{id}/status answers 200 COMPLETED (this
//     fake completes a job on its first status read); GET
//     /{owner}/{app}/requests/{id} answers the result;
//   - authentication "Authorization: Key <key>";
//   - the result of an image model: {"images":[{url, content_type, width,
//     height}], seed, has_nsfw_concepts, prompt}, the file on the same host.
type benchFal struct {
	key, base string
	srv       *http.Server
	png       []byte
	auth      string        // "Key <key>", the Authorization header it takes
	idPrefix  string        // random per fake: ids are idPrefix + a counter
	next      atomic.Uint64 // the counter
	conns     atomic.Int64  // connections accepted
	mu        sync.Mutex
	jobs      map[string]bool // request id → completed
}

// The fake's fixed answers, encoded once: it stands in for a remote
// upstream, so the CPU it spends is not gengate's, and the less it spends
// on the shared cores the less it disturbs the measure.
var (
	falJSON         = []string{"application/json"}
	falPNG          = []string{"image/png"}
	falUnauthorized = []byte(`{"detail":"Invalid API key"}` + "\n")
	falNotFound     = []byte(`{"detail":"Not Found"}` + "\n")
	falNoRequest    = []byte(`{"detail":"Request not found"}` + "\n")
	falInProgress   = []byte(`{"detail":"Request is still in progress"}` + "\n")
)

func startBenchFal() (*benchFal, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(0, 0, color.NRGBA{R: 1, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &benchFal{key: "bench-" + randomHexID(), base: "http://" + ln.Addr().String(), png: buf.Bytes(),
		idPrefix: randomHexID()[:8] + "-", jobs: map[string]bool{}}
	f.auth = "Key " + f.key
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}}
	go f.srv.Serve(ln)
	return f, nil
}

func (f *benchFal) close() { _ = f.srv.Close() }

func randomHexID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ServeHTTP answers fal's queue protocol. Paths: POST /{owner}/{app}[/…]
// submits; GET /{owner}/{app}/requests/{id}/status and GET
// /{owner}/{app}/requests/{id}; GET /files/{name} downloads.
func (f *benchFal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	path := r.URL.Path
	h := w.Header()
	if r.Method == http.MethodGet && strings.HasPrefix(path, "/files/") {
		h["Content-Type"] = falPNG
		_, _ = w.Write(f.png)
		return
	}
	h["Content-Type"] = falJSON
	if r.Header.Get("Authorization") != f.auth {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(falUnauthorized)
		return
	}
	// owner, app, "requests", id, "status" without strings.Split.
	var seg [6]string
	n := 0
	for rest := strings.Trim(path, "/"); n < len(seg); n++ {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			seg[n] = rest
			n++
			break
		}
		seg[n], rest = rest[:i], rest[i+1:]
	}
	b := make([]byte, 0, 512)
	switch {
	case r.Method == http.MethodPost:
		id := string(strconv.AppendUint([]byte(f.idPrefix), f.next.Add(1), 10))
		f.mu.Lock()
		f.jobs[id] = false
		f.mu.Unlock()
		app := seg[min(1, n-1)]
		base := func(b []byte) []byte {
			b = append(b, f.base...)
			b = append(b, '/')
			b = append(b, seg[0]...)
			b = append(b, '/')
			b = append(b, app...)
			b = append(b, "/requests/"...)
			return append(b, id...)
		}
		b = append(b, `{"cancel_url":"`...)
		b = append(base(b), `/cancel","queue_position":0,"request_id":"`...)
		b = append(b, id...)
		b = append(b, `","response_url":"`...)
		b = append(base(b), `","status":"IN_QUEUE","status_url":"`...)
		b = append(base(b), `/status"}`+"\n"...)
		_, _ = w.Write(b)
	case r.Method == http.MethodGet && n == 5 && seg[2] == "requests" && seg[4] == "status":
		f.mu.Lock()
		_, ok := f.jobs[seg[3]]
		if ok {
			f.jobs[seg[3]] = true
		}
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(falNoRequest)
			return
		}
		b = append(b, `{"logs":[],"response_url":"`...)
		b = append(b, f.base...)
		b = append(b, path[:strings.LastIndexByte(path, '/')]...)
		b = append(b, `","status":"COMPLETED"}`+"\n"...)
		_, _ = w.Write(b)
	case r.Method == http.MethodGet && n == 4 && seg[2] == "requests":
		f.mu.Lock()
		done, ok := f.jobs[seg[3]]
		if done {
			delete(f.jobs, seg[3]) // read once: the fake keeps no history
		}
		f.mu.Unlock()
		switch {
		case !ok:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(falNoRequest)
		case !done:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(falInProgress)
		default:
			b = append(b, `{"has_nsfw_concepts":[false],"images":[{"content_type":"image/png","height":64,"url":"`...)
			b = append(b, f.base...)
			b = append(b, "/files/"...)
			b = append(b, seg[3]...)
			b = append(b, `.png","width":64}],"prompt":"bench","seed":42}`+"\n"...)
			_, _ = w.Write(b)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(falNotFound)
	}
}

// direct runs one job through the fake as a client of fal would: submit,
// read the status, read the result, download the output.
func (f *benchFal) direct(hc *http.Client) error {
	var sub struct {
		StatusURL   string `json:"status_url"`
		ResponseURL string `json:"response_url"`
	}
	if err := f.call(hc, http.MethodPost, f.base+"/fal-ai/flux/dev", `{"prompt":"a direct bench"}`, &sub); err != nil {
		return err
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := f.call(hc, http.MethodGet, sub.StatusURL, "", &st); err != nil || st.Status != "COMPLETED" {
		return fmt.Errorf("status %q: %v", st.Status, err)
	}
	var res struct {
		Images []struct {
			URL string `json:"url"`
		} `json:"images"`
	}
	if err := f.call(hc, http.MethodGet, sub.ResponseURL, "", &res); err != nil || len(res.Images) != 1 {
		return fmt.Errorf("result: %v", err)
	}
	resp, err := hc.Get(res.Images[0].URL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func (f *benchFal) call(hc *http.Client, method, url, body string, v any) error {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Key "+f.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d", method, url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
