//go:build bench

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// benchSubmit is "gengate bench submit": asynchronous submits per second
// against gengate and against a bare net/http handler, in one run on one
// machine, so that the ratio between them is what gengate adds. Both
// servers are child processes of this one (the same binary); the clients
// run here. docs/benchmarks.md explains the method and keeps the figures.
func benchSubmit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var data, database, model, profile string
	var clients, rounds, workers, preload int
	var duration, delay time.Duration
	f := newFlags("bench submit", getenv, stderr)
	f.StringVar(&profile, "profile", "", "directory to write the server's CPU profile of the first round to (cpu.pprof)")
	benchTargetFlags(f, &data, &database)
	f.StringVar(&model, "model", "flux", "model of the generate requests")
	f.IntVar(&clients, "clients", 16, "concurrent clients, each sending one request after the other")
	f.IntVar(&rounds, "rounds", 1, "measured rounds against gengate, back to back (tasks pile up between them)")
	f.IntVar(&workers, "workers", 0, "--workers of the gengate under test (0: serve's default)")
	f.DurationVar(&duration, "duration", 5*time.Second, "length of each measured round")
	f.DurationVar(&delay, "sandbox-delay", 60*time.Second, "--sandbox-delay of the gengate under test: workers only submit and schedule")
	f.IntVar(&preload, "preload", 0, "after the rounds, submit this many more tasks, wait until every one waits on the upstream, and measure a round again (flat cost; give a --sandbox-delay longer than the whole run)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if clients < 1 || rounds < 1 || duration <= 0 || preload < 0 {
		return errors.New("--clients, --rounds and --duration must be positive, --preload ≥ 0")
	}
	data, cleanup, err := benchData(data)
	if err != nil {
		return err
	}
	defer cleanup()
	key, err := benchKey(ctx, database, data)
	if err != nil {
		return err
	}
	// The operator listener serves the profile and the SQLite writer's
	// stages (benchStages).
	var under benchServe
	under.set("sandbox-delay", delay.String())
	under.set("admin-addr", "127.0.0.1:0")
	if workers > 0 {
		under.set("workers", strconv.Itoa(workers))
	}
	srv, err := startBenchServer(ctx, data, database, under.args...)
	if err != nil {
		return err
	}
	defer srv.stop()
	body := fmt.Sprintf(`{"type":"image","modelId":%q,"prompt":"a bench of the gateway"}`, model)
	// One request first: its answer is what the bare handler sends back,
	// and it proves the setup works before anything is measured.
	status, answer, err := benchPost(http.DefaultClient, srv.base, key, body)
	if err != nil {
		return err
	}
	if status != http.StatusAccepted {
		return fmt.Errorf("gengate answered %d, not 202: %s", status, answer)
	}
	answerFile := filepath.Join(data, "bare-answer.json")
	if err := os.WriteFile(answerFile, answer, 0o600); err != nil {
		return err
	}
	bare, err := startBenchChild(ctx, filepath.Join(data, "bare.log"), "bench", "bare", "--addr", "127.0.0.1:0", "--answer", answerFile)
	if err != nil {
		return err
	}
	defer bare.stop()

	db := benchDatabase(database)
	fmt.Fprintf(stdout, "gengate bench submit: %d clients, %s per round, %s, model %s\n", clients, duration, db, model)
	fmt.Fprintf(stdout, "gengate under test: %s\n", under)
	fmt.Fprintf(stdout, "%-12s %10s %10s %10s %9s %8s %10s\n", "target", "submits/s", "p50", "p99", "ok", "errors", "server CPU")
	var best, unsteady float64
	for i := range rounds {
		backlog0, err := sqlstore.Backlog(ctx, database, data)
		if err != nil {
			return fmt.Errorf("backlog: %w", err)
		}
		var profiled chan error
		if i == 0 && profile != "" {
			profiled = make(chan error, 1)
			go func() { profiled <- benchCPUProfile(srv, profile, duration) }()
		}
		before := benchStages(srv)
		r := benchRound(ctx, srv, key, body, clients, duration)
		if profiled != nil {
			if err := <-profiled; err != nil {
				return fmt.Errorf("profile: %w", err)
			}
		}
		backlog1, err := sqlstore.Backlog(ctx, database, data)
		if err != nil {
			return fmt.Errorf("backlog: %w", err)
		}
		r.print(stdout, fmt.Sprintf("gengate #%d", i+1))
		steady := steadyRound(r.ok, backlog0, backlog1, clients)
		if steady {
			best = max(best, r.rate())
		} else {
			unsteady = max(unsteady, r.rate())
		}
		printStepped(stdout, r.ok, backlog0, backlog1, steady)
		after := benchStages(srv)
		printWriterLoad(stdout, before, after, r.elapsed, r.ok, "submit")
		printStages(stdout, before, after)
	}
	if preload > 0 {
		rate, err := benchPreload(ctx, srv, database, data, key, body, preload, delay, stdout)
		if err != nil {
			return err
		}
		r := benchRound(ctx, srv, key, body, clients, duration)
		r.print(stdout, fmt.Sprintf("+%d tasks", preload))
		if best > 0 {
			fmt.Fprintf(stdout, "flat cost: %.2f of the best round's rate with %d more tasks waiting on the upstream (preloaded at %.0f/s)\n",
				r.rate()/best, preload, rate)
		}
	}
	b := benchRound(ctx, bare, "", body, clients, duration)
	b.print(stdout, "bare")
	switch {
	case b.rate() <= 0:
	case best > 0:
		fmt.Fprintf(stdout, "ratio gengate/bare: %.3f (best steady gengate round)\n", best/b.rate())
	default:
		fmt.Fprintf(stdout, "ratio gengate/bare: none claimed, no round was steady (best unsteady round: %.3f, not a figure)\n", unsteady/b.rate())
	}
	return nil
}

// benchServe is the command line of the gengate under test beyond its
// address and data: what a bench must set (the sandbox's delay, an
// operator listener) and what its user asked for. Everything else is
// serve's default, and the heading prints this line, so a figure is never
// taken on a setting a user does not run without saying so.
type benchServe struct{ args []string }

func (b *benchServe) set(name, value string) { b.args = append(b.args, "--"+name, value) }

func (b benchServe) String() string {
	return strings.TrimSpace("serve "+strings.Join(b.args, " ")) + " (every other setting at serve's default)"
}

// steadyRound reports whether a round's rate may stand as a figure: the
// workers stepped about as many tasks as the clients submitted, so that
// the queue did not grow. A server that accepts tasks faster than its
// workers hand them on is not faster, it is late. Some growth is a
// snapshot's noise (calls between their commit and a worker's claim when
// the round ends): up to four tasks per client, or 2% of the tasks
// submitted.
func steadyRound(submitted, backlogBefore, backlogAfter, clients int) bool {
	return backlogAfter-backlogBefore <= max(4*clients, submitted/50)
}

// printStepped prints a round's tasks submitted and stepped by the
// workers (those that left the queue), and whether it was steady.
func printStepped(w io.Writer, submitted, backlogBefore, backlogAfter int, steady bool) {
	mark := "steady"
	if !steady {
		mark = "NOT STEADY: the queue grew, so this round is left out of the ratio"
	}
	fmt.Fprintf(w, "  tasks: %d submitted, %d stepped; waiting for a worker %d before, %d after: %s\n",
		submitted, submitted-(backlogAfter-backlogBefore), backlogBefore, backlogAfter, mark)
}

// benchPreload submits n more tasks through the API (64 clients) and
// waits until the workers have sent every one upstream: no task queued
// or being submitted, each waiting for its poll. It returns the rate of
// the preload's submits.
func benchPreload(ctx context.Context, srv *benchChild, database, data, key, body string, n int, delay time.Duration, stdout io.Writer) (float64, error) {
	store, err := sqlstore.Open(ctx, database, data)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	start := time.Now()
	failed, firstErr := benchClients(ctx, 64, n, func(int) error {
		status, answer, err := benchPost(hc, srv.base, key, body)
		if err == nil && status != http.StatusAccepted {
			err = fmt.Errorf("status %d: %.200s", status, answer)
		}
		return err
	})
	if failed > 0 {
		return 0, fmt.Errorf("preload: %d of %d submits failed; first: %s", failed, n, firstErr)
	}
	rate := float64(n) / time.Since(start).Seconds()
	for {
		counts, err := store.CountTasks(ctx)
		if err != nil {
			return 0, err
		}
		if counts[gengate.StatusQueued]+counts[gengate.StatusSubmitting] == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if since := time.Since(start); since >= delay {
		fmt.Fprintf(stdout, "  warning: the preload took %s, longer than --sandbox-delay %s: early tasks are due again\n", since.Round(time.Second), delay)
	}
	return rate, nil
}

// benchTargetFlags declares the flags every bench shares, where the
// gengate under test keeps its state: --data into data and, unless
// database is nil (a bench of SQLite only), --database into it.
func benchTargetFlags(f *flags, data, database *string) {
	f.StringVar(data, "data", "", "data directory of the gengate under test (default: a fresh temporary one)")
	if database != nil {
		f.StringVar(database, "database", "", "postgres:// URL of an empty database to measure PostgreSQL (default: SQLite in --data)")
	}
}

// benchData returns the data directory of the gengate under test: the
// one given, or a temporary one that cleanup removes.
func benchData(data string) (dir string, cleanup func(), err error) {
	if data != "" {
		return data, func() {}, nil
	}
	dir, err = os.MkdirTemp("", "gengate-bench-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// benchKey creates the account the clients use, with credits for any run.
func benchKey(ctx context.Context, database, data string) (string, error) {
	store, err := sqlstore.Open(ctx, database, data)
	if err != nil {
		return "", err
	}
	defer store.Close()
	secret, _, err := createKey(ctx, store, "bench", 1_000_000_000, false, false)
	return secret, err
}

// startBenchServer starts the gengate under test: gengate serve on a
// loopback port of its own, on data and database (empty: SQLite in data),
// with the bench's flags; its log is data/serve.log.
func startBenchServer(ctx context.Context, data, database string, flags ...string) (*benchChild, error) {
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--database", database}, flags...)
	return startBenchChild(ctx, filepath.Join(data, "serve.log"), args...)
}

// benchDatabase names the database of a run in a bench's heading.
func benchDatabase(database string) string {
	if sqlstore.IsPostgres(database) {
		return "PostgreSQL"
	}
	return "SQLite (synchronous=FULL)"
}

// benchChild is a server started by the benchmark.
type benchChild struct {
	cmd   *exec.Cmd
	base  string
	admin string // the operator listener's address, when started with --admin-addr
	done  chan struct{}
}

func startBenchChild(ctx context.Context, logPath string, args ...string) (*benchChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	c := &benchChild{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	admin := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "gengate listening on "); ok {
				ready <- rest
			}
			if rest, ok := strings.CutPrefix(sc.Text(), "gengate admin listening on "); ok {
				admin <- rest
			}
		}
		_ = cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	select {
	case c.base = <-ready:
		select { // printed before the public listener's line, when there is one
		case c.admin = <-admin:
		default:
		}
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s ended before it listened; see %s", strings.Join(args, " "), logPath)
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	c.stop()
	return nil, fmt.Errorf("%s did not listen within a minute; see %s", strings.Join(args, " "), logPath)
}

// stop ends the child with SIGTERM, and SIGKILL if it takes too long.
func (c *benchChild) stop() {
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// cpu returns the child's user+system CPU time so far (Linux).
func (c *benchChild) cpu() time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// rss returns the child's resident set size in bytes (Linux).
func (c *benchChild) rss() int64 { return c.status("VmRSS:") }

// peakRSS returns the child's largest resident set size so far (Linux).
func (c *benchChild) peakRSS() int64 { return c.status("VmHWM:") }

type benchResult struct {
	ok, failed int
	lat        []time.Duration
	elapsed    time.Duration
	cpu        time.Duration
	firstErr   string
}

func (r benchResult) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

func (r benchResult) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))]
}

func (r benchResult) print(w io.Writer, name string) {
	fmt.Fprintf(w, "%-12s %10.0f %10s %10s %9d %8d %9.2fc\n", name, r.rate(), r.quantile(0.5).Round(10*time.Microsecond),
		r.quantile(0.99).Round(10*time.Microsecond), r.ok, r.failed, r.cpu.Seconds()/r.elapsed.Seconds())
	if r.firstErr != "" {
		fmt.Fprintf(w, "  first error: %s\n", r.firstErr)
	}
}

// benchRound sends generate requests from clients goroutines for d and
// counts the 202s.
func benchRound(ctx context.Context, c *benchChild, key, body string, clients int, d time.Duration) benchResult {
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: clients,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	var stop atomic.Bool
	var mu sync.Mutex
	var res benchResult
	var wg sync.WaitGroup
	cpu0 := c.cpu()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			var lat []time.Duration
			ok, failed, firstErr := 0, 0, ""
			for !stop.Load() && ctx.Err() == nil {
				t0 := time.Now()
				status, answer, err := benchPost(hc, c.base, key, body)
				if err == nil && status != http.StatusAccepted {
					err = fmt.Errorf("status %d: %.200s", status, answer)
				}
				if err != nil {
					failed++
					if firstErr == "" {
						firstErr = err.Error()
					}
					continue
				}
				ok++
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.ok += ok
			res.failed += failed
			res.lat = append(res.lat, lat...)
			if res.firstErr == "" {
				res.firstErr = firstErr
			}
			mu.Unlock()
		})
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	res.elapsed = time.Since(start)
	res.cpu = c.cpu() - cpu0
	slices.Sort(res.lat)
	return res
}

func benchPost(hc *http.Client, base, key, body string) (int, []byte, error) {
	req, err := http.NewRequest("POST", base+"/api/v1/generate", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// benchBare is "gengate bench bare": the bare net/http handler the
// benchmark compares gengate with. It reads each request's body and answers
// 202 with the body of a real gengate answer, as JSON, and nothing else.
func benchBare(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var addr, answerFile string
	f := newFlags("bench bare", getenv, stderr)
	f.StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	f.StringVar(&answerFile, "answer", "", "file whose content every request is answered with")
	if err := f.Parse(args); err != nil {
		return err
	}
	answer, err := os.ReadFile(answerFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(answer)
	}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "gengate listening on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// benchWaiters is "gengate bench waiters": the memory a gengate process
// takes to hold many synchronous generate calls at once. It starts gengate
// (a child process, --sandbox-delay so that every call waits), sends
// --count synchronous generates at once over as many connections, reads
// the server's RSS once every call's task exists (all are waiting), and
// then waits for every answer: each must be a 200.
func benchWaiters(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var data, database, model, profile string
	var count, dials, workers, memoryLimit, maxConns int
	var delay, syncWait time.Duration
	f := newFlags("bench waiters", getenv, stderr)
	benchTargetFlags(f, &data, &database)
	f.StringVar(&model, "model", "flux", "model of the generate requests")
	f.IntVar(&count, "count", 10000, "synchronous calls held at once (each needs a file descriptor here and in the server)")
	f.DurationVar(&delay, "sandbox-delay", 20*time.Second, "--sandbox-delay of the gengate under test: how long each call waits")
	f.IntVar(&workers, "workers", 0, "--workers of the gengate under test (0: serve's default)")
	f.IntVar(&maxConns, "max-conns", 0, "--max-conns of the gengate under test (0: serve's default)")
	f.DurationVar(&syncWait, "sync-wait", 0, "--sync-wait of the gengate under test (0: serve's default)")
	f.IntVar(&dials, "dials", 256, "connections being opened at once at most (more than the kernel's accept queue and the dials time out)")
	f.StringVar(&profile, "profile", "", "directory to write the server's heap and goroutine profiles to while every call waits")
	f.IntVar(&memoryLimit, "memory-limit", 0, "--memory-limit of the gengate under test, in bytes (0: none)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if count < 1 || dials < 1 {
		return errors.New("--count and --dials must be ≥ 1")
	}
	data, cleanup, err := benchData(data)
	if err != nil {
		return err
	}
	defer cleanup()
	key, err := benchKey(ctx, database, data)
	if err != nil {
		return err
	}
	var under benchServe
	under.set("sandbox-delay", delay.String())
	if maxConns > 0 {
		under.set("max-conns", strconv.Itoa(maxConns))
	}
	if syncWait > 0 {
		under.set("sync-wait", syncWait.String())
	}
	if workers > 0 {
		under.set("workers", strconv.Itoa(workers))
	}
	if profile != "" {
		under.set("admin-addr", "127.0.0.1:0")
	}
	if memoryLimit > 0 {
		under.set("memory-limit", strconv.Itoa(memoryLimit))
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
	idle := srv.rss()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1, DisableKeepAlives: true}}
	start := time.Now()
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	// At most --dials calls are on their way at once: from the dial until
	// their task exists. Thousands of simultaneous connects overflow the
	// listener's accept queue (net.core.somaxconn), and the kernel then
	// drops them, which measures the client, not gengate; a call whose
	// request is written is not yet accepted by a loaded server, so only
	// its task's existence frees its slot (pace).
	dialing := make(chan struct{}, dials)
	paced := make(chan error, 1)
	go func() { paced <- benchPace(ctx, store, dialing, count, &failed) }()
	for i := range count {
		dialing <- struct{}{}
		wg.Go(func() {
			body := fmt.Sprintf(`{"type":"image","modelId":%q,"prompt":"waiter %d"}`, model, i)
			req, err := http.NewRequestWithContext(ctx, "POST", srv.base+"/api/v1/generate", strings.NewReader(body))
			if err != nil {
				failed.Add(1)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := hc.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			ok.Add(1)
		})
	}
	if err := <-paced; err != nil {
		return err
	}
	// Every call waits once its task exists.
	var waiting time.Duration
	for {
		counts, err := store.CountTasks(ctx)
		if err != nil {
			return err
		}
		n := 0
		for _, c := range counts {
			n += c
		}
		if n+int(failed.Load()) >= count {
			waiting = time.Since(start)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	held := srv.rss()
	if profile != "" {
		if err := benchProfiles(srv, profile); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "gengate bench waiters: %d synchronous calls\ngengate under test: %s\n", count, under)
	fmt.Fprintf(stdout, "all waiting after %s: server RSS %d MB (idle %d MB), %.1f KB per waiter\n",
		waiting.Round(time.Millisecond), held>>20, idle>>20, float64(held-idle)/1024/float64(count))
	wg.Wait()
	fmt.Fprintf(stdout, "answered: %d with 200, %d otherwise, after %s; server peak RSS %d MB\n", ok.Load(), failed.Load(),
		time.Since(start).Round(time.Millisecond), srv.peakRSS()>>20)
	if e, _ := firstErr.Load().(string); e != "" {
		fmt.Fprintf(stdout, "  first error: %s\n", e)
	}
	return nil
}

// benchCPUProfile saves the child's CPU profile over the next d (from its
// --admin-addr listener) as dir/cpu.pprof.
func benchCPUProfile(c *benchChild, dir string, d time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", c.admin, max(int(d.Seconds()), 1)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %.200s", resp.Status, b)
	}
	return os.WriteFile(filepath.Join(dir, "cpu.pprof"), b, 0o644)
}

// benchPace frees a slot of dialing for each call whose task exists or
// that failed, until count are freed.
func benchPace(ctx context.Context, store *sqlstore.DB, dialing chan struct{}, count int, failed *atomic.Int64) error {
	freed := 0
	for freed < count {
		counts, err := store.CountTasks(ctx)
		if err != nil {
			return err
		}
		n := int(failed.Load())
		for _, c := range counts {
			n += c
		}
		for ; freed < min(n, count); freed++ {
			<-dialing
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// benchProfiles saves the child's heap profile and goroutine stacks
// (from its --admin-addr listener) in dir.
func benchProfiles(c *benchChild, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, path := range map[string]string{
		"heap.pprof":      "/debug/pprof/heap?gc=1", // the live heap: a collection first
		"goroutine.pprof": "/debug/pprof/goroutine",
		"goroutines.txt":  "/debug/pprof/goroutine?debug=1",
		"heap.txt":        "/debug/pprof/heap?debug=1", // ends with runtime.MemStats: stacks, heap, GC
	} {
		resp, err := http.Get(c.admin + path)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
