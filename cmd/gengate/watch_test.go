package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// getJSON GETs url and decodes its JSON body (nil when it is not JSON).
func getJSON(t *testing.T, url string) (int, map[string]any, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return resp.StatusCode, m, string(body)
}

// workerProcess starts serve --role worker and reads its admin address.
func workerProcess(t *testing.T, args ...string) (*exec.Cmd, string, string, chan error) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--role", "worker", "--admin-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
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
	done := make(chan error, 1)
	lines := startLines(stdout)
	admin := ""
	deadline := time.After(untilDeadline(t))
	for admin == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				data, _ := os.ReadFile(logPath)
				t.Fatalf("the worker's output ended before its admin listener:\n%s", data)
			}
			if rest, ok := strings.CutPrefix(line, "gengate admin listening on "); ok {
				admin = rest
			}
		case <-deadline:
			t.Fatal("the worker printed no admin address")
		}
	}
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
		logFile.Close()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, admin, logPath, done
}

// onlyJSONLines fails unless every line of the log is a JSON object.
func onlyJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(path)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestWorkerAdmin: a worker process serves its admin listener (/healthz,
// /readyz, /metrics with the queue); an API process's /readyz is 503
// while no worker beats and 200 once one does; a clean drain exits 0 with
// JSON-only logs, the first of them the start line.
func TestWorkerAdmin(t *testing.T) {
	data := t.TempDir()
	api := startProcess(t, "--role", "api", "--data", data, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--worker-stale", "2s")
	status, body, raw := getJSON(t, api.admin+"/readyz")
	checks, _ := body["checks"].(map[string]any)
	workers, _ := checks["workers"].(map[string]any)
	if status != http.StatusServiceUnavailable || workers["status"] != "failing" {
		t.Fatalf("API /readyz with no worker: %d %s, want 503 with workers failing", status, raw)
	}
	if db, _ := checks["database"].(map[string]any); db["status"] != "ok" {
		t.Errorf("database check: %s", raw)
	}
	if st, _ := checks["storage"].(map[string]any); st["status"] != "ok" {
		t.Errorf("storage check: %s", raw)
	}
	if status, _, raw := getJSON(t, api.base+"/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("public /readyz with no worker: %d %s", status, raw)
	}

	cmd, admin, logPath, done := workerProcess(t, "--data", data, "--worker-stale", "2s")
	if status, _, raw := getJSON(t, admin+"/healthz"); status != http.StatusOK {
		t.Errorf("worker /healthz: %d %s", status, raw)
	}
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`gengate_queue_depth{state="queued"}`, "gengate_queue_oldest_age_seconds", "gengate_tasks"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(metrics), want) {
			t.Errorf("worker /metrics (%d) lacks %s", resp.StatusCode, want)
		}
	}
	poll(t, 10*time.Second, 50*time.Millisecond, "the API's /readyz to see the worker", func() bool {
		status, _, _ := getJSON(t, api.admin+"/readyz")
		return status == http.StatusOK
	})
	if status, _, raw := getJSON(t, admin+"/readyz"); status != http.StatusOK {
		t.Errorf("worker /readyz: %d %s", status, raw)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a clean drain exited with %v, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not stop")
	}
	lines := onlyJSONLines(t, logPath)
	if len(lines) == 0 || lines[0]["msg"] != "gengate starting" || lines[0]["role"] != "worker" || lines[0]["commit"] == "" ||
		!strings.Contains(lines[0]["database"].(string), "gengate.db") || lines[0]["storage"] == nil {
		t.Errorf("the first log line is not the start summary: %v", lines)
	}
	if last := lines[len(lines)-1]; last["msg"] != "stopped" || last["drain"] != "clean" {
		t.Errorf("the last log line is %v, want the clean drain", last)
	}
	// A clean stop forgets the worker: the API is unready again.
	if status, _, raw := getJSON(t, api.admin+"/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("API /readyz after the only worker stopped: %d %s", status, raw)
	}
}

// TestServeFatalAndCutShortAreJSON: an error that stops serve is one JSON
// log line, nothing else on stderr; a drain whose grace runs out with a
// step still running exits 1 and says it was cut short, in JSON.
func TestServeFatalAndCutShortAreJSON(t *testing.T) {
	cmd := exec.Command(binary(t), "serve", "--data", t.TempDir(), "--max-body", "lots")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("a bad flag: %v, want exit 1", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	var l struct{ Level, Msg, Err string }
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &l) != nil || l.Level != "ERROR" || !strings.Contains(l.Err, "max-body") {
		t.Errorf("stderr of a bad flag is not one JSON ERROR line naming it:\n%s", stderr.String())
	}

	// An upload whose body is still coming when SIGTERM arrives holds
	// its request past the grace period.
	p := startProcess(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--shutdown-grace", "1s", "--read-timeout", "1m")
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", p.base+"/api/v1/files", pr)
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "image/png")
	go http.DefaultClient.Do(req)
	pw.Write([]byte("\x89PNG\r\n\x1a\n"))
	poll(t, 10*time.Second, 20*time.Millisecond, "the upload to reach the server", func() bool {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil // the upload's connection was accepted before this one
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	if code := p.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("a cut-short drain exited %d, want 1", code)
	}
	found := false
	for _, l := range onlyJSONLines(t, p.stderr) {
		if e, _ := l["err"].(string); l["level"] == "ERROR" && strings.Contains(e, "shutdown cut short") {
			found = true
		}
	}
	if !found {
		t.Errorf("no JSON line says the drain was cut short; %s", p.logTail())
	}
}
