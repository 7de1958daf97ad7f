package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// signedReceiver records the webhook deliveries it gets.
type signedReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newSignedReceiver(t *testing.T) *signedReceiver {
	h := &signedReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, delivery{r.Header.Clone(), b})
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// signedFor returns the delivery of the task and whether one of its
// signatures is the secret's.
func (h *signedReceiver) signedFor(taskID, secret string) (found, signed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.got {
		if !strings.Contains(string(d.body), taskID) {
			continue
		}
		ts, _ := strconv.ParseInt(d.header.Get("webhook-timestamp"), 10, 64)
		want, err := gengate.SignWebhook(secret, d.header.Get("webhook-id"), time.Unix(ts, 0), d.body)
		return true, err == nil && strings.Contains(" "+d.header.Get("webhook-signature")+" ", " "+want+" ")
	}
	return false, false
}

// binaryCLI runs the real binary's command, and returns its output and
// error.
func binaryCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func keyLines(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, webhookKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// TestServerKeyRotation rotates the server key of a running server (the
// real binary, both processes): the server keeps showing its tasks' file
// URLs, its account webhook secret, and signing deliveries with the
// endpoint's secret while the records are re-sealed and after the
// previous key is dropped; a restart starts on the new key, and a process
// given only the old key is refused.
func TestServerKeyRotation(t *testing.T) {
	dir := t.TempDir()
	rcv := newSignedReceiver(t)
	p := startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--allow-private-inputs")
	r := mustAPI(t, p.base, "POST", "/api/v1/webhooks", p.key, map[string]any{"url": rcv.URL, "eventTypes": []string{gengate.EventSucceeded}}, nil)
	wantCode(t, r, http.StatusCreated)
	endpointSecret := r.str("secret")
	r = mustAPI(t, p.base, "GET", "/api/v1/webhooks/secret", p.key, nil, nil)
	wantCode(t, r, http.StatusOK)
	accountSecret := r.str("secret")
	if accountSecret == "" {
		t.Fatalf("account secret: %s", r.body)
	}
	r = mustAPI(t, p.base, "POST", "/api/v1/generate", p.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "before the rotation"}, nil)
	wantCode(t, r, http.StatusOK)
	jobID, urls := r.str("jobId"), outputURLs(r)
	oldKey := keyLines(t, dir)[0]

	// checks is what the running server must keep doing.
	checks := func(when string) {
		t.Helper()
		r := mustAPI(t, p.base, "GET", "/api/generation/jobs/"+jobID, p.key, nil, nil)
		got := outputURLs(r)
		if r.status != http.StatusOK || len(got) != 1 || filepath.Base(got[0]) != filepath.Base(urls[0]) {
			t.Fatalf("%s: the task reads %d %s; want its URLs %v", when, r.status, r.body, urls)
		}
		if data, err := download(got[0]); err != nil || !isMedia(data) {
			t.Fatalf("%s: the output: %v", when, err)
		}
		r = mustAPI(t, p.base, "GET", "/api/v1/webhooks/secret", p.key, nil, nil)
		if r.status != http.StatusOK || r.str("secret") != accountSecret {
			t.Fatalf("%s: the account secret reads %d %s; want the same secret", when, r.status, r.body)
		}
		r = mustAPI(t, p.base, "POST", "/api/v1/generate", p.key, map[string]any{"type": "image", "modelId": "flux", "prompt": when}, nil)
		wantCode(t, r, http.StatusOK)
		id := r.str("jobId")
		poll(t, untilDeadline(t), 20*time.Millisecond, when+": the delivery", func() bool { found, _ := rcv.signedFor(id, endpointSecret); return found })
		if _, signed := rcv.signedFor(id, endpointSecret); !signed {
			t.Fatalf("%s: the delivery of %s is not signed with the endpoint's secret", when, id)
		}
		r = mustAPI(t, p.base, "GET", "/api/generation/jobs/"+id, p.key, nil, nil)
		if r.status != http.StatusOK || len(outputURLs(r)) != 1 {
			t.Fatalf("%s: a new task reads %d %s", when, r.status, r.body)
		}
	}
	checks("before the rotation")

	out, err := binaryCLI(t, "server-key", "rotate", "--data", dir)
	if err != nil || !strings.Contains(out, "re-sealed") {
		t.Fatalf("server-key rotate: %v\n%s", err, out)
	}
	if k := keyLines(t, dir); len(k) != 2 || k[1] != oldKey || k[0] == oldKey {
		t.Fatalf("the key file after rotate holds %d keys; want the new one, then the old one", len(k))
	}
	checks("during the rotation")

	out, err = binaryCLI(t, "server-key", "drop-previous", "--data", dir)
	if err != nil || !strings.Contains(out, "rotation is done") {
		t.Fatalf("server-key drop-previous: %v\n%s", err, out)
	}
	newKey := keyLines(t, dir)
	if len(newKey) != 1 || newKey[0] == oldKey {
		t.Fatalf("the key file after drop-previous holds %d keys; want the new one alone", len(newKey))
	}
	checks("after the rotation")
	if out, err := binaryCLI(t, "server-key", "lost", "--data", dir); err != nil || !strings.Contains(out, "no lost records") {
		t.Errorf("server-key lost after the rotation: %v\n%s", err, out)
	}

	p.kill(t)
	key := p.key
	p = startProcess(t, "--data", dir, "--addr", "127.0.0.1:0", "--allow-private-inputs")
	p.key = key
	checks("after a restart")
	p.kill(t)

	var stderr strings.Builder
	err = run(context.Background(), []string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--webhook-key", oldKey}, noEnv, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "another key") {
		t.Errorf("serve with the old key alone: %v %s; want it refused", err, stderr.String())
	}
}

// TestServerKeyLostAnswers: records sealed under a key the install does
// not have (a task's output token, the account's webhook secret) answer
// 503 SERVER_KEY_MISMATCH on every route that reads them, never a 500,
// while the file itself is still served by its URL; server-key lost lists
// them and server-key reissue gives them new values, after which every
// route answers 200 and the old file URL no longer works.
func TestServerKeyLostAnswers(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	r := mustAPI(t, srv.base, "POST", "/api/v1/generate", srv.key, map[string]any{"type": "image", "modelId": "flux", "prompt": "lost"}, nil)
	wantCode(t, r, http.StatusOK)
	jobID, urls := r.str("jobId"), outputURLs(r)
	wantCode(t, mustAPI(t, srv.base, "GET", "/api/v1/webhooks/secret", srv.key, nil, nil), http.StatusOK)

	// Seal both under a key this install never had, as a row copied from
	// another install would be.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gengate.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, _ := gengate.NewSecretBox([]byte("a key from another install, 32 bytes or more"))
	var fileID string
	if err := db.QueryRow(`SELECT id FROM creations WHERE task_id = ?`, jobID).Scan(&fileID); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSuffix(filepath.Base(urls[0]), filepath.Ext(urls[0]))
	if _, err := db.Exec(`UPDATE creations SET token_sealed = ? WHERE id = ?`, other.SealFileToken(token, fileID), fileID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE webhook_secrets SET secret = ? WHERE account_id = ?`,
		other.Seal("whsec_lost", gengate.WebhookSecretOwner(srv.account, "")...), srv.account); err != nil {
		t.Fatal(err)
	}

	reads := []struct{ method, path string }{
		{"GET", "/api/generation/jobs/" + jobID},
		{"POST", "/api/generation/jobs/" + jobID},
		{"GET", "/api/generation/jobs"},
		{"GET", "/v1/predictions/" + jobID},
		{"GET", "/v1/predictions"},
		{"GET", "/api/v1/webhooks/secret"},
		{"GET", "/v1/webhooks/default/secret"},
	}
	for _, rd := range reads {
		r := mustAPI(t, srv.base, rd.method, rd.path, srv.key, nil, nil)
		if r.status != http.StatusServiceUnavailable || r.str("code") != gengate.EServerKey {
			t.Errorf("%s %s with a lost record: %d %s; want 503 %s", rd.method, rd.path, r.status, r.body, gengate.EServerKey)
		}
	}
	if data, err := download(urls[0]); err != nil || !isMedia(data) {
		t.Errorf("the file by its URL with its token lost: %v", err)
	}

	out := cli(t, "server-key", "lost", "--data", dir)
	for _, want := range []string{"output", fileID, "webhook-secret", srv.account, "2 lost record(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("server-key lost does not name %q:\n%s", want, out)
		}
	}
	out = cli(t, "server-key", "reissue", "--data", dir)
	if !strings.Contains(out, "2 record(s) re-issued") {
		t.Errorf("server-key reissue:\n%s", out)
	}
	for _, rd := range reads {
		r := mustAPI(t, srv.base, rd.method, rd.path, srv.key, nil, nil)
		if r.status != http.StatusOK {
			t.Errorf("%s %s after the re-issue: %d %s", rd.method, rd.path, r.status, r.body)
		}
	}
	r = mustAPI(t, srv.base, "GET", "/api/generation/jobs/"+jobID, srv.key, nil, nil)
	if got := outputURLs(r); len(got) != 1 || got[0] == urls[0] {
		t.Fatalf("the task after the re-issue shows %v; want a new URL", got)
	} else if data, err := download(got[0]); err != nil || !isMedia(data) {
		t.Errorf("the new URL: %v", err)
	}
	if _, err := download(urls[0]); err == nil {
		t.Error("the old URL still serves the file after the re-issue")
	}
}
