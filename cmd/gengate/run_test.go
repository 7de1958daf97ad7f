package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is gengate serve running in-process through run().
type server struct {
	banner
	stderr *syncBuffer
	done   chan error
	stop   context.CancelFunc
}

func runServer(t *testing.T, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{stderr: &syncBuffer{}, done: make(chan error, 1), stop: cancel}
	go func() {
		err := run(ctx, append([]string{"serve"}, args...), noEnv, pw, s.stderr)
		pw.Close()
		s.done <- err
	}()
	lines := startLines(pr)
	s.banner = readBanner(t, lines, 30*time.Second, func() string { return "stderr: " + s.stderr.String() })
	go func() {
		for range lines { // keep the pipe drained
		}
	}()
	t.Cleanup(func() { s.shutdown(t) })
	return s
}

// shutdown cancels the server's context and waits for run to return.
func (s *server) shutdown(t *testing.T) {
	t.Helper()
	if s.stop == nil {
		return
	}
	s.stop()
	s.stop = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("run did not return after its context ended")
	}
	// Whatever the test did, the server's logs never hold its key.
	if s.key != "" {
		assertNoSecrets(t, s.stderr.String(), s.key)
	}
}

// cli runs one operator command through run() and returns its stdout.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, noEnv, &stdout, &stderr); err != nil {
		t.Fatalf("gengate %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestRunEndToEnd runs gengate serve in-process on port 0, and the operator
// commands against the same data directory while it runs.
func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0", "--review-terms", "hold me, other term")
	if !strings.HasPrefix(srv.key, "gg_live_") || len(srv.key) != len("gg_live_")+32 || srv.account == "" {
		t.Fatalf("first start printed key %q, account %q", srv.key, srv.account)
	}
	if !strings.HasPrefix(srv.base, "http://127.0.0.1:") || strings.HasSuffix(srv.base, ":0") {
		t.Fatalf("listening on %q", srv.base)
	}
	base, key := srv.base, srv.key

	wantCode(t, mustAPI(t, base, "GET", "/healthz", "", nil, nil), http.StatusOK)
	wantCode(t, mustAPI(t, base, "GET", "/readyz", "", nil, nil), http.StatusOK)

	// The first-start key works and holds 1000 credits.
	r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "a fox"}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 996 {
		t.Errorf("remainingCredits %d, want 996 (1000 - 4)", r.num("remainingCredits"))
	}
	for _, u := range outputURLs(r) {
		if data, err := download(u); err != nil || !isMedia(data) {
			t.Errorf("output %s: %v", u, err)
		}
	}

	// keys create prints the new key as the last line of stdout.
	out := cli(t, "keys", "create", "--data", dir, "--credits", "5", "--name", "x")
	key2 := lastLine(out)
	if !strings.HasPrefix(key2, "gg_live_") || len(key2) != len("gg_live_")+32 {
		t.Fatalf("keys create: last line %q is not a key:\n%s", key2, out)
	}
	account2 := ""
	if rest, ok := strings.CutPrefix(out, "account "); ok {
		account2, _, _ = strings.Cut(rest, " ")
	}
	if account2 == "" {
		t.Fatalf("keys create did not name the account:\n%s", out)
	}
	r = mustAPI(t, base, "POST", "/api/v1/generate", key2, map[string]any{"type": "image", "modelId": "z-image-turbo", "prompt": "x"}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 4 {
		t.Errorf("new key: remainingCredits %d, want 4", r.num("remainingCredits"))
	}
	r = mustAPI(t, base, "POST", "/api/v1/generate", key2, map[string]any{"type": "image", "modelId": "flux-2-pro", "prompt": "x"}, nil)
	wantCode(t, r, http.StatusPaymentRequired)

	// credits grant adds to the running server's account.
	out = cli(t, "credits", "grant", "--data", dir, "--account", account2, "--credits", "20")
	if !strings.Contains(out, "balance 24") {
		t.Errorf("credits grant printed %q, want balance 24", out)
	}
	r = mustAPI(t, base, "POST", "/api/v1/generate", key2, map[string]any{"type": "image", "modelId": "flux-2-pro", "prompt": "x"}, nil)
	wantCode(t, r, http.StatusOK)
	if r.num("remainingCredits") != 9 {
		t.Errorf("after grant: remainingCredits %d, want 9", r.num("remainingCredits"))
	}

	// keys revoke: the key is refused within --key-refresh.
	out = cli(t, "keys", "revoke", "--data", dir, key2[:len("gg_live_")+6])
	if !strings.Contains(out, "revoked") {
		t.Errorf("keys revoke printed %q", out)
	}
	waitRefused(t, base, key2)
	wantCode(t, mustAPI(t, base, "GET", "/api/v1/models", key, nil, nil), http.StatusOK)

	// review: two held tasks; one refunded, one delivered.
	held := func(prompt string) string {
		t.Helper()
		r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": prompt}, nil)
		wantCode(t, r, http.StatusConflict)
		if r.str("code") != "GENERATION_NEEDS_REVIEW" || r.str("jobId") == "" {
			t.Fatalf("held request: %s", r.body)
		}
		return r.str("jobId")
	}
	refundID := held("please HOLD ME now")
	deliverID := held("another other term prompt")
	r = mustAPI(t, base, "POST", "/api/generation/jobs/"+refundID, key, nil, nil)
	wantCode(t, r, http.StatusConflict)
	if r.num("remainingCredits") != 988 {
		t.Errorf("remainingCredits %d while held, want 988 (credits held)", r.num("remainingCredits"))
	}
	out = cli(t, "review", "list", "--data", dir)
	for _, id := range []string{refundID, deliverID} {
		if !strings.Contains(out, id) {
			t.Errorf("review list lacks %s:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "review_terms") {
		t.Errorf("review list lacks the reason:\n%s", out)
	}

	out = cli(t, "review", "settle", "--data", dir, refundID, "--refund")
	if !strings.Contains(out, "failed") {
		t.Errorf("settle --refund printed %q", out)
	}
	r = mustAPI(t, base, "GET", "/api/generation/jobs/"+refundID, key, nil, nil)
	if r.str("status") != "failed" {
		t.Errorf("refunded task: %s", r.body)
	}
	r = mustAPI(t, base, "POST", "/api/generation/jobs/"+refundID, key, nil, nil)
	wantCode(t, r, http.StatusConflict) // final: refused after review, not a server fault
	if r.str("code") != "GENERATION_FAILED" || r.str("reason") != "REFUSED_AFTER_REVIEW" || r.json["refunded"] != true ||
		r.num("creditsRefunded") != 4 || r.num("remainingCredits") != 992 {
		t.Errorf("refunded task POST: %s; want GENERATION_FAILED, REFUSED_AFTER_REVIEW, 4 refunded, 992 remaining", r.body)
	}
	if out := cli(t, "review", "list", "--data", dir); strings.Contains(out, refundID) || !strings.Contains(out, deliverID) {
		t.Errorf("review list after refund:\n%s", out)
	}

	cli(t, "review", "settle", "--deliver", "--data", dir, deliverID)
	poll(t, 30*time.Second, 50*time.Millisecond, "the delivered task to succeed", func() bool {
		return mustAPI(t, base, "GET", "/api/generation/jobs/"+deliverID, key, nil, nil).str("status") == "succeeded"
	})
	r = mustAPI(t, base, "POST", "/api/generation/jobs/"+deliverID, key, nil, nil)
	wantCode(t, r, http.StatusOK)
	if len(outputURLs(r)) != 1 || r.num("remainingCredits") != 992 {
		t.Errorf("delivered task: %s; want one image and 992 credits (charge kept)", r.body)
	}

	// A second start on the same data creates no account and prints no key.
	srv.shutdown(t)
	again := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	if again.key != "" || again.account != "" {
		t.Errorf("second start printed key %q account %q", again.key, again.account)
	}
	r = mustAPI(t, again.base, "GET", "/api/generation/jobs/"+deliverID, key, nil, nil)
	if r.str("status") != "succeeded" {
		t.Errorf("after restart: %s", r.body)
	}
}

// TestRunUsage: bad commands and flags are errors, not panics.
func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"keys"},
		{"keys", "create", "--data", t.TempDir()},
		{"keys", "revoke", "--data", t.TempDir()},
		{"credits", "grant", "--data", t.TempDir()},
		{"review", "settle", "--data", t.TempDir(), "x"},
		{"serve", "--workers", "0"},
		{"serve", "--s3-part-buffers", "0"},
		{"serve", "--role", "boss"},
		{"serve", "--task-lease", "10ms"},
		{"serve", "--db-conns", "0"},
		{"serve", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, noEnv, &stdout, &stderr); err == nil {
			t.Errorf("gengate %q succeeded", args)
		}
	}
}

// TestShutdownEndsSyncWaits: a request waiting for its result when the
// server is told to stop is answered with 202 and its task (which goes on),
// and the server stops promptly and cleanly rather than holding shutdown
// until its timeout.
func TestShutdownEndsSyncWaits(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0", "--sandbox-delay", "60s", "--sync-wait", "60s")
	body := map[string]any{"type": "image", "modelId": "flux", "prompt": "slow"}
	hdr := map[string]string{"Idempotency-Key": "wait-at-shutdown"}
	answered := make(chan httpResult, 1)
	go func() {
		r, err := api(srv.base, "POST", "/api/v1/generate", srv.key, body, hdr)
		if err != nil {
			r = httpResult{status: -1, body: []byte(err.Error())}
		}
		answered <- r
	}()
	// The waiting request's task exists once the account lists it. (A
	// replay with the same key, asked here before, made the task itself
	// when the waiting request had not reached the server yet: shut down
	// then, the server closed that request's connection unread, EOF.)
	var id string
	poll(t, 10*time.Second, 20*time.Millisecond, "the waiting request's task", func() bool {
		r := mustAPI(t, srv.base, "GET", "/api/generation/jobs", srv.key, nil, nil)
		if data, _ := r.json["data"].([]any); len(data) == 1 {
			id, _ = data[0].(map[string]any)["jobId"].(string)
		}
		return id != ""
	})
	start := time.Now()
	srv.shutdown(t)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("shutdown took %s with a request waiting", el)
	}
	// The operator sees the shutdown in the log, from its start to its end.
	if logs := srv.stderr.String(); !strings.Contains(logs, `"msg":"shutting down`) || !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("the log does not show the shutdown:\n%s", logs)
	}
	select {
	case r := <-answered:
		if r.status != http.StatusAccepted || r.str("jobId") != id {
			t.Errorf("waiting request answered %d %s; want 202 with jobId %s", r.status, r.body, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request was not answered")
	}
}

// TestEnvFallback: every flag falls back to its GENGATE_* variable, and a
// flag beats the variable.
func TestEnvFallback(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	env := func(name string) string {
		if name == "GENGATE_DATA" {
			return dir
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--credits", "3", "--init"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("keys create: %v %s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "gengate.db")); err != nil {
		t.Errorf("GENGATE_DATA was not used: %v", err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"keys", "create", "--credits", "3", "--data", other, "--init"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("keys create --data: %v %s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(other, "gengate.db")); err != nil {
		t.Errorf("--data did not beat GENGATE_DATA: %v", err)
	}
	bad := func(name string) string {
		if name == "GENGATE_SYNC_WAIT" {
			return "soon"
		}
		return ""
	}
	if err := run(context.Background(), []string{"serve", "--data", dir}, bad, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "GENGATE_SYNC_WAIT") {
		t.Errorf("bad GENGATE_SYNC_WAIT: %v, want an error naming it", err)
	}
}

// TestEvalBuiltinNeedsSets: without the evaluation sets the command says
// where to point it instead of printing an empty table.
func TestEvalBuiltinNeedsSets(t *testing.T) {
	var out, errb syncBuffer
	err := run(context.Background(), []string{"eval", "builtin", "--sets", filepath.Join(t.TempDir(), "missing"), "--model", "image-upscaler"}, noEnv, &out, &errb)
	if err == nil {
		t.Fatalf("eval on a missing directory succeeded: %s", out.String())
	}
}
