package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// built is one binary, built at most once per test run.
type built struct {
	once sync.Once
	path string
	err  error
}

var (
	buildMu    sync.Mutex
	prodBuild  built
	benchBuild built
)

// binary builds the real gengate binary once per test run: the default
// build, as shipped, without the benchmark harness.
func binary(t testing.TB) string {
	t.Helper()
	return buildBinary(t, &prodBuild, "gengate")
}

// benchBinary builds gengate with -tags bench once per test run: the
// default build plus "gengate bench", for the tests of the harness.
func benchBinary(t testing.TB) string {
	t.Helper()
	return buildBinary(t, &benchBuild, "gengate-bench", "-tags", "bench")
}

func buildBinary(t testing.TB, b *built, name string, flags ...string) string {
	t.Helper()
	b.once.Do(func() {
		buildMu.Lock()
		if binDir == "" {
			binDir, b.err = os.MkdirTemp("", "gengate-bin-")
		}
		dir := binDir
		buildMu.Unlock()
		if b.err != nil {
			return
		}
		b.path = filepath.Join(dir, name)
		args := append(append([]string{"build"}, flags...), "-o", b.path, ".")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// crashSetup makes a fresh data directory and database of the dialect and
// the serve arguments for them, with the sandbox delay and task lease given.
// dbURL is "" for SQLite.
func crashSetup(t *testing.T, dialect, delay, lease string) (dir, dbURL string, args []string) {
	t.Helper()
	dir = t.TempDir()
	dbURL = sqltest.URL(t, dialect)
	args = []string{"--data", dir, "--addr", "127.0.0.1:0", "--sandbox-delay", delay, "--task-lease", lease}
	if dbURL != "" {
		args = append(args, "--database", dbURL)
	}
	return dir, dbURL, args
}

// process is gengate serve running as a child process.
type process struct {
	banner
	cmd    *exec.Cmd
	stderr string // path of its log
	exited chan struct{}
}

func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	return startProcessEnv(t, nil, args...)
}

// startProcessEnv is startProcess with more environment variables
// (NAME=value).
func startProcessEnv(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...) // no GENGATE_* from the test run
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: logPath, exited: make(chan struct{})}
	lines := startLines(stdout)
	p.banner = readBanner(t, lines, untilDeadline(t), p.logTail)
	go func() {
		for range lines {
		}
		_ = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill(t) })
	return p
}

func (p *process) logTail() string {
	data, _ := os.ReadFile(p.stderr)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return "server log:\n" + string(data)
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Logf("kill: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("process %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// submitted is one task the crash test sent.
type submitted struct {
	id      string
	outputs int
	body    map[string]any
}

// crashBodies is a mix of image and video requests.
var crashBodies = []struct {
	body    map[string]any
	outputs int
}{
	{map[string]any{"type": "image", "modelId": "flux", "prompt": "crash 1", "numOutputs": 2}, 2},
	{map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "crash 2"}, 1},
	{map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "crash 3", "numOutputs": 3, "aspectRatio": "16:9"}, 3},
	{map[string]any{"type": "image", "modelId": "nano-banana", "prompt": "crash 4", "outputFormat": "webp"}, 1},
	{map[string]any{"type": "video", "modelId": "wan-2-5-t2v", "prompt": "crash 5", "aspectRatio": "9:16"}, 1},
	{map[string]any{"type": "image", "modelId": "z-image-turbo", "prompt": "crash 6"}, 1},
	{map[string]any{"type": "image", "modelId": "imagen-4-ultra", "prompt": "crash 7", "outputFormat": "jpeg"}, 1},
	{map[string]any{"type": "video", "modelId": "openai-sora-2", "prompt": "crash 8"}, 1},
	{map[string]any{"type": "image", "modelId": "ideogram-v3-turbo", "prompt": "crash 9"}, 1},
	{map[string]any{"type": "image", "modelId": "stable-diffusion-3-5-large", "prompt": "crash 10", "numOutputs": 2}, 2},
	{map[string]any{"type": "video", "modelId": "wan-2-6-t2v", "prompt": "crash 11"}, 1},
	{map[string]any{"type": "image", "modelId": "seedream-4-5", "prompt": "crash 12"}, 1},
}

var outputName = regexp.MustCompile(`^[0-9a-f-]{36}-[0-9]+\.[a-z0-9]+$`)

// TestCrashRecovery kills gengate with SIGKILL while tasks are in flight,
// starts it again on the same data, and checks that every task finishes,
// charged exactly once, with exactly its outputs.
func TestCrashRecovery(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			dir, dbURL, args := crashSetup(t, dialect, "1s", "2s")
			p1 := startProcess(t, args...)
			if p1.key == "" || p1.account == "" {
				t.Fatalf("first start printed no key")
			}
			key := p1.key

			var tasks []submitted
			for _, b := range crashBodies {
				r := mustAPI(t, p1.base, "POST", "/api/v1/generate", key, b.body, map[string]string{"Prefer": "respond-async"})
				wantCode(t, r, http.StatusAccepted)
				tasks = append(tasks, submitted{id: r.str("jobId"), outputs: b.outputs, body: b.body})
			}
			unfinished := 0
			for _, tk := range tasks[len(tasks)-4:] {
				if mustAPI(t, p1.base, "GET", "/api/generation/jobs/"+tk.id, key, nil, nil).str("status") == "processing" {
					unfinished++
				}
			}
			// Kill while a step holds its lease (a worker is in the middle of
			// it): only the expiry of that lease lets the restart take the
			// task again, which is what this test is about.
			leased := leasedSteps(t, dbURL, dir)
			poll(t, 30*time.Second, 5*time.Millisecond, "a step to hold its lease", func() bool { return leased() > 0 })
			p1.kill(t)
			if unfinished == 0 {
				t.Fatal("every task had finished before the kill; nothing was in flight")
			}
			if n := leased(); n == 0 {
				t.Fatal("no step held its lease at the kill")
			} else {
				t.Logf("%d steps held their lease at the kill", n)
			}
			// The database says what the kill interrupted.
			store, err := openDataStore(context.Background(), dbURL, dir)
			if err != nil {
				t.Fatal(err)
			}
			inFlight := 0
			for _, st := range []gengate.Status{gengate.StatusQueued, gengate.StatusSubmitting, gengate.StatusRunning} {
				list, err := store.ListTasks(context.Background(), st, 100)
				if err != nil {
					t.Fatal(err)
				}
				inFlight += len(list)
			}
			store.Close()
			t.Logf("%d of %d tasks in flight at the kill", inFlight, len(tasks))
			if inFlight == 0 {
				t.Fatal("no task was in flight at the kill")
			}

			p2 := startProcess(t, args...)
			if p2.key != "" {
				t.Errorf("restart printed a new key")
			}
			done := map[string]bool{}
			poll(t, 60*time.Second, 100*time.Millisecond, "every task to succeed", func() bool {
				for _, tk := range tasks {
					if done[tk.id] {
						continue
					}
					r := mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+tk.id, key, nil, nil)
					switch r.str("status") {
					case "succeeded":
						done[tk.id] = true
					case "processing":
					default:
						t.Fatalf("task %s: %s\n%s", tk.id, r.body, p2.logTail())
					}
				}
				return len(done) == len(tasks)
			})

			store, err = openDataStore(context.Background(), dbURL, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			ctx := context.Background()
			sum := 0
			for _, tk := range tasks {
				task, err := store.FindTask(ctx, tk.id)
				if err != nil {
					t.Fatal(err)
				}
				sum += task.Cost
				if len(task.Outputs) != tk.outputs {
					t.Errorf("task %s has %d creations, want %d", tk.id, len(task.Outputs), tk.outputs)
				}
				var files []string
				// outputs/<the last two characters of the time-ordered id>/
				entries, _ := os.ReadDir(filepath.Join(dir, "files", "outputs", tk.id[len(tk.id)-2:]))
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), tk.id+"-") && outputName.MatchString(e.Name()) {
						files = append(files, e.Name())
					}
				}
				if len(files) != tk.outputs {
					t.Errorf("task %s has files %v, want %d", tk.id, files, tk.outputs)
				}
				if _, err := os.Stat(filepath.Join(dir, "files", "inputs", tk.id)); err == nil {
					t.Errorf("task %s left its inputs", tk.id)
				}
				r := mustAPI(t, p2.base, "POST", "/api/generation/jobs/"+tk.id, key, nil, nil)
				wantCode(t, r, http.StatusOK)
				urls := outputURLs(r)
				if len(urls) != tk.outputs {
					t.Errorf("task %s: %d output URLs, want %d", tk.id, len(urls), tk.outputs)
				}
				for _, u := range urls {
					data, err := download(u)
					if err != nil || !isMedia(data) {
						t.Errorf("task %s output %s: %v", tk.id, u, err)
					}
				}
				if tk.body["type"] == "video" && !strings.HasSuffix(r.str("video"), ".mp4") {
					t.Errorf("task %s video URL %q", tk.id, r.str("video"))
				}
			}
			ledger, err := store.Ledger(ctx, p1.account)
			if err != nil {
				t.Fatal(err)
			}
			charged := map[string]int{}
			total := 0
			for _, e := range ledger {
				total += e.Amount
				switch e.Kind {
				case gengate.LedgerCharge:
					charged[e.TaskID]++
				case gengate.LedgerRefund:
					t.Errorf("refund for task %s", e.TaskID)
				}
			}
			for _, tk := range tasks {
				if charged[tk.id] != 1 {
					t.Errorf("task %s charged %d times", tk.id, charged[tk.id])
				}
			}
			if len(charged) != len(tasks) {
				t.Errorf("%d tasks charged, want %d", len(charged), len(tasks))
			}
			acct, err := store.FindAccount(ctx, p1.account)
			if err != nil {
				t.Fatal(err)
			}
			if acct.Balance != 1000-sum || total != acct.Balance {
				t.Errorf("balance %d, ledger sum %d, want %d", acct.Balance, total, 1000-sum)
			}
		})
	}
}

// TestCrashIdempotencyKey: a retry with the same Idempotency-Key after a
// SIGKILL and restart names the task the first request created.
func TestCrashIdempotencyKey(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			_, _, args := crashSetup(t, dialect, "1s", "2s")
			body := map[string]any{"type": "image", "modelId": "flux", "prompt": "retry me", "numOutputs": 2}
			hdr := map[string]string{"Idempotency-Key": "retry-after-crash-1", "Prefer": "respond-async"}

			p1 := startProcess(t, args...)
			key := p1.key
			r := mustAPI(t, p1.base, "POST", "/api/v1/generate", key, body, hdr)
			wantCode(t, r, http.StatusAccepted)
			id := r.str("jobId")
			p1.kill(t)

			p2 := startProcess(t, args...)
			r = mustAPI(t, p2.base, "POST", "/api/v1/generate", key, body, hdr)
			if r.status != http.StatusAccepted && r.status != http.StatusOK {
				t.Fatalf("retry: %d %s", r.status, r.body)
			}
			if r.str("jobId") != id {
				t.Fatalf("retry after restart: jobId %q, want %q", r.str("jobId"), id)
			}
			other := map[string]any{"type": "image", "modelId": "flux", "prompt": "retry me", "numOutputs": 1}
			wantCode(t, mustAPI(t, p2.base, "POST", "/api/v1/generate", key, other, hdr), http.StatusUnprocessableEntity)
			// Without Prefer the retry waits for the result.
			r = mustAPI(t, p2.base, "POST", "/api/v1/generate", key, body, map[string]string{"Idempotency-Key": "retry-after-crash-1"})
			wantCode(t, r, http.StatusOK)
			if r.str("jobId") != id || len(outputURLs(r)) != 2 || r.num("remainingCredits") != 992 {
				t.Errorf("result after restart: %s; want jobId %s, 2 images, 992 credits", r.body, id)
			}
		})
	}
}

// leasedSteps returns a counter of the tasks whose step holds its lease
// right now, read straight from the database (SQLite read-only beside the
// running process, which keeps it in WAL mode).
func leasedSteps(t *testing.T, dbURL, dir string) func() int {
	t.Helper()
	driver, dsn := "pgx", dbURL
	if dbURL == "" {
		driver, dsn = "sqlite", "file:"+filepath.Join(dir, "gengate.db")+"?mode=ro&_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return func() int {
		var n int
		err := db.QueryRow(`SELECT COUNT(*) FROM tasks WHERE lease_token <> '' AND status IN ('queued','submitting','running')`).Scan(&n)
		if err != nil {
			t.Fatalf("count leased steps: %v", err)
		}
		return n
	}
}
