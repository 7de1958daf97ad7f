package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/blob/s3test"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// startChild runs `gengate serve args...` as a child process with the
// minimal environment of startProcess plus env (e.g. AWS_* for S3
// storage). Unlike startProcess it also accepts a --role worker process
// (ready when it prints "gengate worker running") and returns errors
// rather than failing the test, so that it may be called from a goroutine
// other than the test's.
func startChild(t testing.TB, env []string, args ...string) (*process, error) {
	cmd := exec.Command(binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &process{cmd: cmd, stderr: logPath, exited: make(chan struct{})}
	lines := startLines(stdout)
	ready := false
	timeout := time.After(30 * time.Second)
	for !ready {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				logFile.Close()
				return nil, fmt.Errorf("gengate %v ended before it was ready; %s", args, p.logTail())
			}
			if rest, ok := strings.CutPrefix(line, "Created account "); ok {
				p.account, _, _ = strings.Cut(rest, " ")
			}
			if strings.HasPrefix(line, "gg_live_") {
				p.key = line
			}
			if rest, ok := strings.CutPrefix(line, "gengate listening on "); ok {
				p.base = rest
				ready = true
			}
			if line == "gengate worker running" {
				ready = true
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			logFile.Close()
			return nil, fmt.Errorf("gengate %v not ready within 30s; %s", args, p.logTail())
		}
	}
	go func() {
		for range lines {
		}
		_ = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { _ = p.sigkill() })
	return p, nil
}

// sigkill is process.kill without t: kill -9 and wait for the exit.
func (p *process) sigkill() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-time.After(20 * time.Second):
		return fmt.Errorf("process %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// scaleCluster is the scale-out shape: API and worker processes sharing
// one PostgreSQL database and one S3 bucket, each with a data directory of
// its own, killed and restarted at random.
type scaleCluster struct {
	t          *testing.T
	env        []string
	args       []string // common serve arguments
	dbURL      string
	store      *sqlstore.DB // the test's own connection, for the kill bookkeeping
	host       string
	mu         sync.Mutex
	apis       []*process
	workers    []*process
	apiKills   int
	workerKill int
	// caught are the tasks that a killed worker held a lease on (it was in
	// the middle of one of their steps) when it died.
	caught map[string]bool
	logs   []string // stderr of every process started
}

func (c *scaleCluster) start(role string) (*process, error) {
	args := append(slices.Clone(c.args), "--role", role, "--data", c.t.TempDir())
	if role == "api" {
		args = append(args, "--addr", "127.0.0.1:0")
	}
	p, err := startChild(c.t, c.env, args...)
	if err == nil {
		c.mu.Lock()
		c.logs = append(c.logs, p.stderr)
		c.mu.Unlock()
	}
	return p, err
}

// base returns the address of API process i.
func (c *scaleCluster) base(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apis[i%len(c.apis)].base
}

// killOne SIGKILLs one process and starts a new one in its place (a new
// port for an API process): an API process when api is 1, a worker when
// it is 0, and one chosen at random among all when it is -1. Only one
// process is ever down at a time, so the other API process keeps serving.
func (c *scaleCluster) killOne(ctx context.Context, rng *rand.Rand, api int) error {
	n := rng.IntN(len(c.apis) + len(c.workers))
	switch api {
	case 1:
		n = rng.IntN(len(c.apis))
	case 0:
		n = len(c.apis) + rng.IntN(len(c.workers))
	}
	c.mu.Lock()
	isAPI := n < len(c.apis)
	var victim *process
	if isAPI {
		victim = c.apis[n]
	} else {
		n -= len(c.apis)
		victim = c.workers[n]
	}
	c.mu.Unlock()
	if err := victim.sigkill(); err != nil {
		return err
	}
	role := "api"
	if !isAPI {
		role = "worker"
		// The leases the dead worker held name its pid (Service.Owner is
		// host:pid:random); those tasks were caught mid-step.
		rows, err := c.store.SQL().QueryContext(ctx, `SELECT id FROM tasks WHERE lease_token LIKE $1 AND status IN ('queued','submitting','running')`,
			fmt.Sprintf("%s:%d:%%", c.host, victim.cmd.Process.Pid))
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		c.mu.Lock()
		for _, id := range ids {
			c.caught[id] = true
		}
		c.mu.Unlock()
	}
	p, err := c.start(role)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if isAPI {
		c.apis[n] = p
		c.apiKills++
	} else {
		c.workers[n] = p
		c.workerKill++
	}
	return nil
}

// scaleTask is one logical generation a client wants: its key and body
// stay the same across every retry.
type scaleTask struct {
	idemKey string
	acct    int
	body    map[string]any
	async   bool
	outputs int
	jobID   string // the task the first accepting answer named
}

type scaleStats struct {
	requests, connErrors, inUse, overloaded, immediateRetries, replays, mismatches atomic.Int64
	status                                                                         [600]atomic.Int64
}

// TestScaleOutChaos runs 2 API and 3 worker processes on one PostgreSQL
// database and one S3 bucket, in front of the fal fake, and sends about
// 2000 generations from concurrent clients (synchronous and asynchronous,
// each with an Idempotency-Key, retried with the same key and body, at
// once and after connection failures) while processes are SIGKILLed and
// restarted every second or so. Afterwards it reads the database: every
// task is final, charged once, refunded only if failed; balances match
// their ledgers; one task per key; no upstream submission twice; outputs
// are in S3 and downloadable, also for tasks whose worker was killed.
func TestScaleOutChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("scale-out chaos test: skipped with -short")
	}
	const (
		nTasks   = 2000
		nClients = 64
		bucket   = "gengate-scale"
		// The clients stop taking new tasks after loadBudget, so that a
		// loaded machine sends fewer tasks rather than overrun CI's time;
		// fewer than minTasks fails the test.
		loadBudget = 80 * time.Second
		minTasks   = 500
	)
	began := time.Now()
	ctx := context.Background()
	s3 := s3test.Start(t)
	fal := faltest.New(t)
	fal.SetPolls(2) // submit, one "in progress" read, then completed
	dbURL := sqltest.URL(t, "postgres")
	cfg := writeConfig(t, "providers:\n"+falConfig(fal))
	// Every process of an install has the same server key (file URL
	// tokens and webhook secrets are sealed under it: docs/security.md).
	const serverKey = "scale-out test server key, 32 bytes or more"
	env := []string{"AWS_ACCESS_KEY_ID=" + s3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3.Secret, "AWS_REGION=" + s3.Region,
		"GENGATE_WEBHOOK_KEY=" + serverKey}
	host, _ := os.Hostname()
	c := &scaleCluster{t: t, env: env, dbURL: dbURL, host: host, caught: map[string]bool{},
		args: []string{"--database", dbURL, "--storage", s3.Spec(bucket), "--config", cfg,
			"--task-lease", "2s", "--sync-wait", "5s", "--workers", "4",
			// 5 processes × (4 + LISTEN + the purge's lock) = 30
			// PostgreSQL connections at most, beside the server's other
			// clients (a test may use 50: docs/operations.md).
			"--db-conns", "4"}}

	first, err := c.start("api")
	if err != nil {
		t.Fatal(err)
	}
	if first.key == "" {
		t.Fatalf("the first API process printed no key; %s", first.logTail())
	}
	box, err := gengate.NewSecretBox([]byte(serverKey))
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlstore.Open(ctx, dbURL, t.TempDir(), sqlstore.WithFileTokenKey(box))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c.store = store

	// Accounts with known credits: the first-start one topped up with
	// `credits grant`, and three made with `keys create`.
	type account struct {
		id, key string
		credits int
	}
	accounts := []account{{id: first.account, key: first.key, credits: 1000 + 20000}}
	cli := func(args ...string) string {
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--database", dbURL, "--data", t.TempDir()), noEnv, &out, &errb); err != nil {
			t.Fatalf("gengate %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	cli("credits", "grant", "--account", first.account, "--credits", "20000")
	for i, credits := range []int{30000, 40000, 50000} {
		out := cli("keys", "create", "--credits", fmt.Sprint(credits), "--name", fmt.Sprintf("scale-%d", i))
		// "account <id> (<n> credits)\n<secret>\n"
		lines := strings.Split(strings.TrimSpace(out), "\n")
		f := strings.Fields(lines[0])
		if len(lines) != 2 || len(f) < 2 || !strings.HasPrefix(lines[1], "gg_live_") {
			t.Fatalf("keys create printed %q", out)
		}
		accounts = append(accounts, account{id: f[1], key: lines[1], credits: credits})
	}

	second, err := c.start("api")
	if err != nil {
		t.Fatal(err)
	}
	c.apis = []*process{first, second}
	for range 3 {
		w, err := c.start("worker")
		if err != nil {
			t.Fatal(err)
		}
		c.workers = append(c.workers, w)
	}
	t.Logf("setup (build, S3, PostgreSQL, 5 processes) took %s", time.Since(began).Round(time.Millisecond))

	// The logical tasks: a unique prompt each, mixed models and modes.
	tasks := make([]*scaleTask, nTasks)
	for i := range tasks {
		st := &scaleTask{idemKey: fmt.Sprintf("scale-%d", i), acct: i % len(accounts), async: i%3 != 0, outputs: 1}
		prompt := fmt.Sprintf("scale-out chaos %d", i)
		switch i % 6 {
		case 0, 1:
			st.body = map[string]any{"type": "image", "modelId": "flux", "prompt": prompt}
		case 2:
			st.body = map[string]any{"type": "image", "modelId": "flux", "prompt": prompt, "numOutputs": 2, "aspectRatio": "16:9"}
			st.outputs = 2
		case 3:
			st.body = map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": prompt, "outputFormat": "jpeg"}
		default:
			st.body = map[string]any{"type": "video", "modelId": "wan-2-5-t2v", "prompt": prompt}
		}
		tasks[i] = st
	}

	var stats scaleStats
	var clientErrs sync.Map // idemKey → error text
	// send sends the task's request to API process api (and its retries to
	// the other one after a connection failure) until an answer names its
	// task.
	send := func(st *scaleTask, which int, rng *rand.Rand) (string, error) {
		hdr := map[string]string{"Idempotency-Key": st.idemKey}
		if st.async {
			hdr["Prefer"] = "respond-async"
		}
		deadline := time.Now().Add(90 * time.Second)
		for attempt := 0; ; attempt++ {
			if time.Now().After(deadline) {
				return "", fmt.Errorf("no answer naming a task after %d attempts", attempt)
			}
			stats.requests.Add(1)
			r, err := api(c.base(which), "POST", "/api/v1/generate", accounts[st.acct].key, st.body, hdr)
			if err != nil {
				// The process was killed (or is being replaced): retry the
				// same key and body on the other API process.
				stats.connErrors.Add(1)
				which++
				time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
				continue
			}
			stats.status[r.status].Add(1)
			code := r.str("code")
			switch {
			case r.status == http.StatusOK || r.status == http.StatusAccepted,
				r.status == http.StatusConflict && code == gengate.ENeedsReview,
				code == gengate.EFailed:
				if id := r.str("jobId"); id != "" {
					return id, nil
				}
				return "", fmt.Errorf("status %d without jobId: %s", r.status, r.body)
			case r.status == http.StatusConflict && code == gengate.EKeyInUse:
				stats.inUse.Add(1)
				time.Sleep(20 * time.Millisecond)
				continue
			case r.status == http.StatusServiceUnavailable && code == gengate.EOverloaded:
				// No database connection came free within --db-wait:
				// nothing was written; retry the same key, as a client
				// told Retry-After would (sooner, to keep the test short).
				stats.overloaded.Add(1)
				time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
				continue
			}
			return "", fmt.Errorf("status %d: %s", r.status, r.body)
		}
	}
	// remember records the task an answer named; every answer for a key
	// must name the same task.
	remember := func(st *scaleTask, id string) {
		if st.jobID == "" {
			st.jobID = id
			return
		}
		stats.replays.Add(1)
		if id != st.jobID {
			stats.mismatches.Add(1)
			clientErrs.Store(st.idemKey, fmt.Sprintf("key named task %s, then %s", st.jobID, id))
		}
	}

	// Chaos: every 1-2 s one process, chosen at random, is killed -9
	// and replaced; now and then fal fails the jobs it accepts for a
	// moment, so that some tasks fail and are refunded.
	chaosCtx, stopChaos := context.WithCancel(ctx)
	var chaosErr error
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
		for n := 0; ; n++ {
			select {
			case <-chaosCtx.Done():
				return
			case <-time.After(time.Duration(1000+rng.IntN(1000)) * time.Millisecond):
			}
			// The first two kills are an API process, then a worker, so
			// that every run kills both kinds (ten random picks were all
			// workers once in a few hundred runs); the rest are random.
			api := -1
			if n < 2 {
				api = 1 - n
			}
			if err := c.killOne(ctx, rng, api); err != nil {
				chaosErr = err
				return
			}
			if n%3 == 0 {
				fal.FailJobs("error")
				time.Sleep(40 * time.Millisecond)
				fal.FailJobs("")
			}
		}
	}()

	// Clients: each takes the next logical task and sends it to its API
	// process; for one in eight it then sends the same key and body again at
	// once to the other process, and for another one in eight twice more,
	// to both processes concurrently.
	load := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for cl := range nClients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(cl), uint64(time.Now().UnixNano())))
			for time.Since(load) < loadBudget {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				st := tasks[i]
				id, err := send(st, cl, rng)
				if err != nil {
					clientErrs.Store(st.idemKey, err.Error())
					continue
				}
				remember(st, id)
				switch i % 8 {
				case 0: // a retry at once, on the other API process
					stats.immediateRetries.Add(1)
					id, err := send(st, cl+1, rng)
					if err != nil {
						clientErrs.Store(st.idemKey, "immediate retry: "+err.Error())
						continue
					}
					remember(st, id)
				case 4: // a double click: the same request to both API processes at once
					stats.immediateRetries.Add(2)
					var ids [2]string
					var errs [2]error
					var dbl sync.WaitGroup
					for k := range 2 {
						dbl.Go(func() { ids[k], errs[k] = send(st, cl+k, rng) })
					}
					dbl.Wait()
					for k := range 2 {
						if errs[k] != nil {
							clientErrs.Store(st.idemKey, "double click: "+errs[k].Error())
							continue
						}
						remember(st, ids[k])
					}
				}
			}
		})
	}
	wg.Wait()
	loadTime := time.Since(load)
	stopChaos()
	<-chaosDone
	if chaosErr != nil {
		t.Fatalf("chaos: %v", chaosErr)
	}
	if sent := int(min(next.Load(), int64(len(tasks)))); sent < len(tasks) {
		t.Logf("the load budget of %s ran out after %d of %d tasks", loadBudget, sent, len(tasks))
		tasks = tasks[:sent] // indices are taken in order, each sent to its end
	}
	if len(tasks) < minTasks {
		t.Fatalf("only %d tasks sent within %s; the machine is too loaded for this test to prove anything", len(tasks), loadBudget)
	}
	// One more retry of every key, after the storm, as a client that lost
	// track would send it: it must name the same task.
	var late atomic.Int64
	for cl := range 8 {
		wg.Go(func() {
			for {
				i := int(late.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				st := tasks[i]
				if st.jobID == "" {
					continue
				}
				stats.requests.Add(1)
				r, err := api(c.base(cl), "POST", "/api/v1/generate", accounts[st.acct].key, st.body,
					map[string]string{"Idempotency-Key": st.idemKey, "Prefer": "respond-async"})
				if id := r.str("jobId"); err != nil || id != st.jobID {
					t.Errorf("late retry of %s: %v %d %s; first answer named %s", st.idemKey, err, r.status, r.body, st.jobID)
				}
			}
		})
	}
	wg.Wait()
	clientErrs.Range(func(k, v any) bool {
		t.Errorf("client %s: %s", k, v)
		return true
	})

	// Drain: all processes are up (each killed one was replaced at once);
	// wait until no task is in an active state.
	drain := time.Now()
	var active int
	poll(t, 90*time.Second, 200*time.Millisecond, "no task in an active state", func() bool {
		if err := store.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE status IN ('queued','submitting','running')`).Scan(&active); err != nil {
			t.Fatal(err)
		}
		return active == 0
	})
	drainTime := time.Since(drain)

	// The database is the truth: read the tasks, creations and ledgers.
	type row struct {
		id, acct, key, status, prompt, reason, model string
		cost                                         int
	}
	byID := map[string]*row{}
	byKey := map[string][]*row{}
	rows, err := store.SQL().QueryContext(ctx, `SELECT id, account_id, COALESCE(idempotency_key, ''), status, prompt, review_reason, model_id, cost FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		r := &row{}
		if err := rows.Scan(&r.id, &r.acct, &r.key, &r.status, &r.prompt, &r.reason, &r.model, &r.cost); err != nil {
			t.Fatal(err)
		}
		byID[r.id] = r
		byKey[r.acct+"/"+r.key] = append(byKey[r.acct+"/"+r.key], r)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range byID {
		counts[r.status]++
	}
	if len(byID) != len(tasks) {
		t.Errorf("%d task rows for %d logical tasks (one Idempotency-Key each)", len(byID), len(tasks))
	}
	for _, st := range tasks {
		rs := byKey[accounts[st.acct].id+"/"+st.idemKey]
		switch {
		case len(rs) != 1:
			t.Errorf("key %s: %d tasks", st.idemKey, len(rs))
		case rs[0].id != st.jobID:
			t.Errorf("key %s: the client was told task %q, the database has %s", st.idemKey, st.jobID, rs[0].id)
		case rs[0].prompt != st.body["prompt"]:
			t.Errorf("key %s: task %s has prompt %q", st.idemKey, rs[0].id, rs[0].prompt)
		}
	}
	for _, r := range byID {
		switch gengate.Status(r.status) {
		case gengate.StatusSucceeded, gengate.StatusFailed:
		case gengate.StatusNeedsReview:
			if r.reason != gengate.ReviewOutcomeUnknown {
				t.Errorf("task %s in review for %q; only a kill between submit and the stored upstream id may do that", r.id, r.reason)
			}
		default:
			t.Errorf("task %s ended %s", r.id, r.status)
		}
	}
	reviews := counts[string(gengate.StatusNeedsReview)]
	if reviews*20 > len(tasks) { // 5%
		t.Errorf("%d of %d tasks in review: more than a small fraction", reviews, len(tasks))
	}

	// Money: one charge per task, a refund only for failed ones (exactly
	// one each), balance = ledger sum = credits - charges + refunds.
	for _, a := range accounts {
		ledger, err := store.Ledger(ctx, a.id)
		if err != nil {
			t.Fatal(err)
		}
		charges, refunds := map[string]int{}, map[string]int{}
		sum, grants, want := 0, 0, a.credits
		for _, e := range ledger {
			sum += e.Amount
			switch e.Kind {
			case gengate.LedgerCharge:
				charges[e.TaskID]++
				if r := byID[e.TaskID]; r == nil || e.Amount != -r.cost {
					t.Errorf("charge %+v does not match its task", e)
				}
			case gengate.LedgerRefund:
				refunds[e.TaskID]++
				if r := byID[e.TaskID]; r == nil || e.Amount != r.cost || r.status != string(gengate.StatusFailed) {
					t.Errorf("refund %+v of a task that did not fail (%+v)", e, r)
				}
			default:
				grants += e.Amount
			}
		}
		if grants != a.credits {
			t.Errorf("account %s: grants %d, want %d", a.id, grants, a.credits)
		}
		for _, r := range byID {
			if r.acct != a.id {
				continue
			}
			if charges[r.id] != 1 {
				t.Errorf("task %s charged %d times", r.id, charges[r.id])
			}
			want -= r.cost
			if r.status == string(gengate.StatusFailed) {
				want += r.cost
				if refunds[r.id] != 1 {
					t.Errorf("failed task %s refunded %d times", r.id, refunds[r.id])
				}
			}
		}
		acct, err := store.FindAccount(ctx, a.id)
		if err != nil {
			t.Fatal(err)
		}
		if acct.Balance != sum || acct.Balance != want {
			t.Errorf("account %s: balance %d, ledger sum %d, credits - charges + refunds %d", a.id, acct.Balance, sum, want)
		}
	}

	// Upstream: no prompt submitted twice; every task that got past its
	// submit (succeeded, or failed by fal) was submitted exactly once.
	byPrompt := fal.SubmissionsByPrompt()
	for p, n := range byPrompt {
		if n > 1 {
			t.Errorf("fal got prompt %q %d times", p, n)
		}
	}
	for _, r := range byID {
		if r.status == string(gengate.StatusSucceeded) && byPrompt[r.prompt] != 1 {
			t.Errorf("succeeded task %s: fal got its prompt %d times", r.id, byPrompt[r.prompt])
		}
	}

	// Outputs: every succeeded task's creations are in the bucket, read
	// back with a store of our own; a sample (first the tasks whose worker
	// was killed in one of their steps) is downloaded through an API
	// process.
	blobs, err := blob.Open(s3.Spec(bucket), "", s3.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := blobs.List(ctx, "outputs/", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	inBucket := map[string]bool{}
	for _, k := range listed {
		inBucket[k] = true
	}
	creations := map[string][]string{}
	rows, err = store.SQL().QueryContext(ctx, `SELECT task_id, blob_key FROM creations ORDER BY task_id, idx`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		creations[id] = append(creations[id], key)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	outputsOf := map[string]int{}
	for _, st := range tasks {
		outputsOf[st.jobID] = st.outputs
	}
	for _, r := range byID {
		keys := creations[r.id]
		if r.status != string(gengate.StatusSucceeded) {
			if len(keys) > 0 {
				t.Errorf("%s task %s has creations %v", r.status, r.id, keys)
			}
			continue
		}
		if len(keys) != outputsOf[r.id] {
			t.Errorf("task %s has %d creations, want %d", r.id, len(keys), outputsOf[r.id])
		}
		for _, k := range keys {
			if !inBucket[k] {
				t.Errorf("task %s: blob %s not in the bucket", r.id, k)
			}
		}
	}
	var caughtDone []string
	c.mu.Lock()
	for id := range c.caught {
		if r := byID[id]; r != nil && r.status == string(gengate.StatusSucceeded) {
			caughtDone = append(caughtDone, id)
		}
	}
	caught := len(c.caught)
	c.mu.Unlock()
	slices.Sort(caughtDone)
	sample := slices.Clone(caughtDone[:min(len(caughtDone), 30)])
	for _, i := range rand.Perm(len(tasks)) {
		if len(sample) >= 50 {
			break
		}
		id := tasks[i].jobID
		if r := byID[id]; r != nil && r.status == string(gengate.StatusSucceeded) && !slices.Contains(sample, id) {
			sample = append(sample, id)
		}
	}
	acctKey := map[string]string{}
	for _, a := range accounts {
		acctKey[a.id] = a.key
	}
	downloaded := 0
	for i, id := range sample {
		r := mustAPI(t, c.base(i), "GET", "/api/generation/jobs/"+id, acctKey[byID[id].acct], nil, nil)
		urls := outputURLs(r)
		if r.status != http.StatusOK || len(urls) != outputsOf[id] {
			t.Errorf("task %s: %d %s", id, r.status, r.body)
			continue
		}
		for j, u := range urls {
			data, err := download(u)
			if err != nil || !isMedia(data) {
				t.Errorf("task %s output %s: %v", id, u, err)
				continue
			}
			// The bytes served are the bytes in the bucket.
			stored, err := blobs.Get(ctx, creations[id][j])
			if err != nil || !bytes.Equal(stored, data) {
				t.Errorf("task %s output %d: bucket copy differs (%v)", id, j, err)
			}
			downloaded++
		}
	}

	// Process logs: no panic in any of them; count their warnings.
	c.mu.Lock()
	logs := slices.Clone(c.logs)
	c.mu.Unlock()
	levels := map[string]int{}
	var errorLines []string
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, []byte("panic:")); i >= 0 {
			t.Errorf("%s: %s", path, data[i:min(len(data), i+2000)])
		}
		for _, line := range strings.Split(string(data), "\n") {
			for _, l := range []string{`"level":"WARN"`, `"level":"ERROR"`} {
				if strings.Contains(line, l) {
					if l == `"level":"ERROR"` && len(errorLines) < 10 {
						errorLines = append(errorLines, filepath.Base(filepath.Dir(path))+": "+line)
					}
					msg := line
					if i := strings.Index(line, `"msg":`); i >= 0 {
						msg, _, _ = strings.Cut(line[i+6:], ",")
					}
					levels[l[9:len(l)-1]+" "+msg]++
				}
			}
		}
	}
	t.Logf("process logs (%d processes): %v", len(logs), levels)
	for _, l := range errorLines {
		t.Logf("  %s", l)
	}
	for _, r := range byID {
		if r.status == string(gengate.StatusNeedsReview) {
			c.mu.Lock()
			t.Logf("  in review: task %s (%s, %q), caught by a worker kill: %v", r.id, r.model, r.prompt, c.caught[r.id])
			c.mu.Unlock()
		}
	}

	c.mu.Lock()
	apiKills, workerKills := c.apiKills, c.workerKill
	c.mu.Unlock()
	var statusLine []string
	for code := range stats.status {
		if n := stats.status[code].Load(); n > 0 {
			statusLine = append(statusLine, fmt.Sprintf("%d×%d", n, code))
		}
	}
	var lat []time.Duration
	rows, err = store.SQL().QueryContext(ctx, `SELECT completed_at - created_at FROM tasks WHERE status = 'succeeded'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Duration(ms)*time.Millisecond)
	}
	rows.Close()
	slices.Sort(lat)
	if len(lat) > 0 {
		t.Logf("task latency (created → succeeded): p50 %s, p90 %s, p99 %s, max %s",
			lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100], lat[len(lat)-1])
	}
	t.Logf("load: %d logical tasks (%d sync, %d async) from %d clients over 2 API processes in %s (%.0f tasks/s accepted)",
		len(tasks), (len(tasks)+2)/3, len(tasks)-(len(tasks)+2)/3, nClients, loadTime.Round(time.Millisecond), float64(len(tasks))/loadTime.Seconds())
	t.Logf("requests: %d POSTs (%d immediate same-key retries, %d answers replayed an existing task, %d connection failures retried on the other API process, %d IDEMPOTENCY_KEY_IN_USE, %d OVERLOADED retried); statuses %s",
		stats.requests.Load(), stats.immediateRetries.Load(), stats.replays.Load(), stats.connErrors.Load(), stats.inUse.Load(), stats.overloaded.Load(), strings.Join(statusLine, " "))
	t.Logf("kills: %d (api %d, worker %d); %d tasks caught mid-step by a worker kill, %d of them succeeded",
		apiKills+workerKills, apiKills, workerKills, caught, len(caughtDone))
	t.Logf("tasks: %d rows: %d succeeded, %d failed (refunded), %d needs_review (%.2f%%, submission outcome unknown, credits held); fal submissions %d",
		len(byID), counts["succeeded"], counts["failed"], reviews, 100*float64(reviews)/float64(len(byID)), fal.Submissions())
	t.Logf("outputs: %d blobs in the bucket, %d downloaded through the API from %d sampled tasks; drain %s; total %s",
		len(listed), downloaded, len(sample), drainTime.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if workerKills == 0 || apiKills == 0 {
		t.Errorf("kills: %d api, %d worker; the test proved less than it claims", apiKills, workerKills)
	}
}
