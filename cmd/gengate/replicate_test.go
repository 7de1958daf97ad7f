package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/blob/s3test"
)

// The tests of serve --replicate and gengate restore run the real binary
// against versitygw, a real S3 server, on loopback.

// replicaURL is the --replicate URL of bucket/prefix on the server.
func replicaURL(s *s3test.Server, bucketAndPrefix string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {s.Region}, "secure": {"false"}, "pathStyle": {"true"}}
	return "s3://" + bucketAndPrefix + "?" + q.Encode()
}

// awsEnv is the environment giving the server's credentials.
func awsEnv(s *s3test.Server) []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.Secret}
}

// runGengate runs the binary with the environment given (and no other
// GENGATE_* or AWS_* variable), returning its outputs.
func runGengate(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// replication reads the replica's state from /readyz.
func replication(t *testing.T, base string) map[string]any {
	t.Helper()
	r := mustAPI(t, base, "GET", "/readyz", "", nil, nil)
	wantCode(t, r, 200)
	rep, _ := r.json["replication"].(map[string]any)
	if rep == nil {
		t.Fatalf("/readyz has no replication: %s", r.body)
	}
	return rep
}

// waitReplicated waits until the server says every write before the
// time is in the replica (its replicatedThrough is past it).
func waitReplicated(t *testing.T, base string, after time.Time) {
	t.Helper()
	poll(t, untilDeadline(t), 20*time.Millisecond, "the replica to hold every write before "+after.Format(time.RFC3339Nano), func() bool {
		s, _ := replication(t, base)["replicatedThrough"].(string) // absent before the first copy
		through, err := time.Parse(time.RFC3339Nano, s)
		return err == nil && through.After(after)
	})
}

// paidFlux runs one synchronous flux generation (4 credits) and returns
// its task id.
func paidFlux(t *testing.T, base, key, prompt string) string {
	t.Helper()
	r := awaitAPI(t, base, "POST", "/api/v1/generate", key,
		map[string]any{"type": "image", "modelId": "flux", "prompt": prompt}, nil)
	wantCode(t, r, 200)
	if len(outputURLs(r)) != 1 {
		t.Fatalf("flux answered no output: %s", r.body)
	}
	return r.str("jobId")
}

func balance(t *testing.T, base, key string) int {
	t.Helper()
	r := mustAPI(t, base, "GET", "/api/v1/account", key, nil, nil)
	wantCode(t, r, 200)
	return r.num("remainingCredits")
}

// taskFiles reads a task on a server and downloads its outputs, by the
// path of their URLs (the host is the server's own).
func taskFiles(t *testing.T, base, key, id string) map[string][]byte {
	t.Helper()
	r := mustAPI(t, base, "GET", "/api/generation/jobs/"+id, key, nil, nil)
	wantCode(t, r, 200)
	files := map[string][]byte{}
	for _, u := range outputURLs(r) {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		data, err := download(base + pu.Path)
		if err != nil {
			t.Fatalf("task %s: output %s: %v", id, pu.Path, err)
		}
		files[pu.Path] = data
	}
	if len(files) == 0 {
		t.Fatalf("task %s has no outputs: %s", id, r.body)
	}
	return files
}

// TestReplicateRestore is the drill of docs/operations.md: a server with
// --replicate takes five paid generations, is killed with SIGKILL and its
// data directory deleted; gengate restore brings it back into a new
// directory, where a new server answers the same key with the same
// balance, the same tasks and the same output files. A second restore
// into that directory is refused and changes nothing.
func TestReplicateRestore(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t)
	rep := replicaURL(s3, "gengate-backup/site1")
	env := awsEnv(s3)
	dir := filepath.Join(t.TempDir(), "data")
	p := startProcessEnv(t, env, "--data", dir, "--addr", "127.0.0.1:0", "--replicate", rep)
	if p.key == "" {
		t.Fatal("no first-start key")
	}
	var ids []string
	for i := range 5 {
		ids = append(ids, paidFlux(t, p.base, p.key, "drill "+string(rune('a'+i))))
	}
	credits := balance(t, p.base, p.key)
	if credits != 1000-5*4 {
		t.Fatalf("balance %d after five flux generations", credits)
	}
	want := map[string]map[string][]byte{}
	for _, id := range ids {
		want[id] = taskFiles(t, p.base, p.key, id)
	}
	waitReplicated(t, p.base, time.Now())
	if r := replication(t, p.base); r["status"] != "ok" || r["filesPending"].(float64) != 0 {
		t.Fatalf("replica not ok when caught up: %v", r)
	}
	p.kill(t)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	out, errOut, err := runGengate(t, env, "restore", "--from", rep, "--data", restored)
	if err != nil {
		t.Fatalf("restore: %v\n%s%s", err, out, errOut)
	}
	for _, line := range []string{"tasks: 5\n", "ledger entries: 6\n", "files: 5\n", "server key: restored to", "last replicated write: 20"} {
		if !strings.Contains(out, line) {
			t.Errorf("restore's report lacks %q:\n%s", line, out)
		}
	}

	p2 := startProcessEnv(t, nil, "--data", restored, "--addr", "127.0.0.1:0")
	if p2.key != "" {
		t.Fatal("the restored server made a new first-start account: the database was not restored")
	}
	if got := balance(t, p2.base, p.key); got != credits {
		t.Fatalf("restored balance %d, want %d", got, credits)
	}
	for _, id := range ids {
		got := taskFiles(t, p2.base, p.key, id)
		for path, data := range want[id] {
			if !bytes.Equal(got[path], data) {
				t.Errorf("task %s: output %s differs after the restore (%d bytes, want %d)", id, path, len(got[path]), len(data))
			}
		}
	}

	// A restore into a directory that is not empty is refused, and leaves
	// it as it was (the server stopped first: a running one writes its
	// worker heartbeat into the database every few seconds).
	p2.kill(t)
	before := listTree(t, restored)
	out, errOut, err = runGengate(t, env, "restore", "--from", rep, "--data", restored)
	if err == nil || !strings.Contains(errOut, "is not empty") {
		t.Fatalf("restore into a non-empty directory: err %v\n%s%s", err, out, errOut)
	}
	if after := listTree(t, restored); after != before {
		t.Fatalf("the refused restore changed the directory:\n%s\nwas\n%s", after, before)
	}
}

// listTree lists the files of a directory with their sizes and times.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "gengate.db-shm" || d.Name() == "gengate.db-wal" {
			return nil // the running server's
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			b.WriteString(p + " " + info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10) + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReplicateRestoreAtTimestamp restores the database as it was
// between two charges: the restored balance is the one after the first.
func TestReplicateRestoreAtTimestamp(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t)
	rep := replicaURL(s3, "pitr")
	env := awsEnv(s3)
	p := startProcessEnv(t, env, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--replicate", rep, "--replicate-interval", "200ms")
	first := paidFlux(t, p.base, p.key, "first")
	afterFirst := balance(t, p.base, p.key)
	waitReplicated(t, p.base, time.Now())
	between := time.Now()
	second := paidFlux(t, p.base, p.key, "second")
	if balance(t, p.base, p.key) != afterFirst-4 {
		t.Fatal("the second generation was not charged")
	}
	waitReplicated(t, p.base, time.Now())

	restored := filepath.Join(t.TempDir(), "restored")
	out, errOut, err := runGengate(t, env, "restore", "--from", rep, "--data", restored, "--timestamp", between.UTC().Format(time.RFC3339Nano))
	if err != nil {
		t.Fatalf("restore: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "tasks: 1\n") || !strings.Contains(out, "ledger entries: 2\n") {
		t.Fatalf("restore at %s brought back more or less than the first charge:\n%s", between.Format(time.RFC3339Nano), out)
	}
	p2 := startProcessEnv(t, nil, "--data", restored, "--addr", "127.0.0.1:0")
	if got := balance(t, p2.base, p.key); got != afterFirst {
		t.Fatalf("balance restored at %s: %d, want %d (after the first charge only)", between.Format(time.RFC3339Nano), got, afterFirst)
	}
	wantCode(t, mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+first, p.key, nil, nil), 200)
	wantCode(t, mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+second, p.key, nil, nil), 404)
}

// TestReplicateCrashDuringReplication kills a replicating server with
// SIGKILL while generations are being charged and copied, starts it again
// on the same directory and replica, and checks that a restore of the
// replica then holds exactly what the server holds: every task and
// ledger entry, the same balance.
func TestReplicateCrashDuringReplication(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t)
	rep := replicaURL(s3, "crash/site")
	env := awsEnv(s3)
	dir := t.TempDir()
	args := []string{"--data", dir, "--addr", "127.0.0.1:0", "--replicate", rep, "--replicate-interval", "100ms"}
	p := startProcessEnv(t, env, args...)
	key := p.key

	// Charges keep arriving while the server is killed: enough credits
	// for them to go on until then (the first start's balance went in
	// under a second on a fast server, before the replica had taken eight
	// transactions, and the writes after the crash were refused).
	if out, errOut, err := runGengate(t, env, "credits", "grant", "--account", p.account, "--credits", "1000000", "--data", dir); err != nil {
		t.Fatalf("credits grant: %v\n%s%s", err, out, errOut)
	}
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				_, _ = apiWith(ctx, client, p.base, "POST", "/api/v1/generate", key,
					map[string]any{"type": "image", "modelId": "flux", "prompt": "crash " + string(rune('a'+c)), "numOutputs": 1},
					map[string]string{"Prefer": "respond-async"})
			}
		}()
	}
	// Kill it once the replica has taken some of them.
	poll(t, untilDeadline(t), 20*time.Millisecond, "a few charges replicated", func() bool {
		rep := replication(t, p.base)
		txid, _ := rep["txid"].(string)
		return txid >= "0000000000000008"
	})
	p.kill(t)
	stop()
	wg.Wait()

	p2 := startProcessEnv(t, env, args...)
	paidFlux(t, p2.base, key, "after the crash") // the server takes writes again
	// The tasks the kill interrupted finish on the new process.
	poll(t, untilDeadline(t), 20*time.Millisecond, "every task to finish", func() bool { return activeTasks(t, dir) == 0 })
	credits := balance(t, p2.base, key)
	waitReplicated(t, p2.base, time.Now())
	p2.kill(t) // nothing was written since the replica caught up
	live := countRows(t, dir)

	restored := filepath.Join(t.TempDir(), "restored")
	out, errOut, err := runGengate(t, env, "restore", "--from", rep, "--data", restored)
	if err != nil {
		t.Fatalf("restore: %v\n%s%s", err, out, errOut)
	}
	p3 := startProcessEnv(t, nil, "--data", restored, "--addr", "127.0.0.1:0")
	if got := balance(t, p3.base, key); got != credits {
		t.Fatalf("restored balance %d, the live server's %d", got, credits)
	}
	if got := countRows(t, restored); got != live {
		t.Fatalf("restored rows %v, the live server's %v", got, live)
	}
	if !strings.Contains(out, "tasks: ") {
		t.Fatalf("restore's report: %s", out)
	}
}

// activeTasks counts the tasks of a running server's database not yet
// finished, through a read-only connection (which never checkpoints).
func activeTasks(t *testing.T, dir string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gengate.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM tasks WHERE status IN ('queued', 'submitting', 'running')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// countRows counts the tasks and ledger entries of a data directory's
// database, through the same command an operator would use.
func countRows(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	store, err := openDataStore(ctx, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var tasks, ledger int
	if err := store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM tasks`).Scan(&tasks); err != nil {
		t.Fatal(err)
	}
	if err := store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM ledger`).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]int{"tasks": tasks, "ledger": ledger})
	return string(b)
}

// TestReplicateOutageWarns stops the S3 server under a replicating
// gengate: the next write cannot be copied, and the replica turns
// "failing" on /readyz and /metrics and in a WARN line of the log, while
// the server goes on serving.
func TestReplicateOutageWarns(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t)
	env := awsEnv(s3)
	p := startProcessEnv(t, env, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--replicate", replicaURL(s3, "outage"), "--replicate-interval", "100ms")
	waitReplicated(t, p.base, time.Now())
	metric := func(name string) string {
		r := mustAPI(t, p.admin, "GET", "/metrics", "", nil, nil)
		for _, line := range strings.Split(string(r.body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return v
			}
		}
		t.Fatalf("/metrics has no %s", name)
		return ""
	}
	if got := metric("gengate_replica_healthy"); got != "1" {
		t.Fatalf("gengate_replica_healthy %s while the replica keeps up", got)
	}

	s3.Stop()
	paidFlux(t, p.base, p.key, "during the outage") // served: the disk still holds it
	poll(t, untilDeadline(t), 20*time.Millisecond, "the replica to report failing", func() bool {
		return replication(t, p.base)["status"] == "failing"
	})
	if r := replication(t, p.base); r["error"] == "" {
		t.Fatalf("a failing replica says no error: %v", r)
	}
	if got := metric("gengate_replica_healthy"); got != "0" {
		t.Fatalf("gengate_replica_healthy %s while the bucket is down", got)
	}
	poll(t, untilDeadline(t), 20*time.Millisecond, "the WARN line of the failing replica", func() bool {
		log, _ := os.ReadFile(p.stderr)
		return bytes.Contains(log, []byte(`"level":"WARN","msg":"replica failing`))
	})
}

// TestReplicateRestoreIfMissing starts a server with --restore-if-missing
// on an empty directory: it comes up with the replicated database, files
// and key (no new first-start account), goes on replicating to the same
// place, and a restore of that replica then holds its new charge too.
func TestReplicateRestoreIfMissing(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t)
	rep := replicaURL(s3, "ephemeral/site")
	env := awsEnv(s3)
	first := filepath.Join(t.TempDir(), "data")
	args := func(dir string) []string {
		return []string{"--data", dir, "--addr", "127.0.0.1:0", "--replicate", rep, "--replicate-interval", "200ms", "--restore-if-missing"}
	}
	p := startProcessEnv(t, env, args(first)...) // nothing replicated yet: a new install
	if p.key == "" {
		t.Fatal("an empty replica did not start a new install")
	}
	id := paidFlux(t, p.base, p.key, "before the disk went")
	files := taskFiles(t, p.base, p.key, id)
	waitReplicated(t, p.base, time.Now())
	p.kill(t)
	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}

	second := filepath.Join(t.TempDir(), "data")
	p2 := startProcessEnv(t, env, args(second)...)
	if p2.key != "" {
		t.Fatal("--restore-if-missing made a new first-start account instead of restoring")
	}
	if got := balance(t, p2.base, p.key); got != 1000-4 {
		t.Fatalf("restored balance %d, want %d", got, 1000-4)
	}
	for path, data := range files {
		if got := taskFiles(t, p2.base, p.key, id)[path]; !bytes.Equal(got, data) {
			t.Fatalf("output %s differs after --restore-if-missing", path)
		}
	}
	paidFlux(t, p2.base, p.key, "after the restore")
	waitReplicated(t, p2.base, time.Now())
	p2.kill(t)

	third := filepath.Join(t.TempDir(), "restored")
	out, errOut, err := runGengate(t, env, "restore", "--from", rep, "--data", third)
	if err != nil {
		t.Fatalf("restore: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "tasks: 2\n") || !strings.Contains(out, "ledger entries: 3\n") {
		t.Fatalf("the replica lacks what the restored server wrote:\n%s", out)
	}
}

// TestReplicateFlagsRefused: settings --replicate cannot work with are
// refused at start, naming the flag.
func TestReplicateFlagsRefused(t *testing.T) {
	rep := "s3://bucket/p?endpoint=127.0.0.1:9&secure=false"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--restore-if-missing"}, "--restore-if-missing restores from --replicate"},
		{[]string{"--replicate", rep, "--database", "postgres://u@127.0.0.1/db"}, "--replicate replicates the SQLite database"},
		{[]string{"--replicate", rep, "--role", "api"}, "--replicate needs --role all"},
		{[]string{"--replicate", rep, "--replicate-interval", "10ms"}, "--replicate-interval must be between"},
		{[]string{"--replicate", rep, "--replicate-interval", "2h"}, "--replicate-interval must be between"},
	} {
		_, err := parseServeFlags(append([]string{"--data", t.TempDir()}, tc.args...), noEnv, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseServeFlags([]string{"--data", t.TempDir(), "--replicate", rep, "--restore-if-missing"}, noEnv, &bytes.Buffer{}); err != nil {
		t.Fatalf("a good --replicate refused: %v", err)
	}
	// Without credentials serve stops before it makes anything in --data.
	data := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--replicate", rep}, noEnv, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("serve --replicate without credentials: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("serve refused but made %s (%v)", data, err)
	}
}
