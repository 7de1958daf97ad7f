package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestLeaseTakeoverLogged kills (SIGKILL) the worker holding a task's
// lease mid-step: a Replicate fake holds the task's output download
// half-way, so the step is in its lease when the kill comes, whatever the
// machine's pace. The process started after it, whose claim takes the
// task over once the lease runs out, logs it at WARN with the task's id
// and the killed process as its previous owner, and counts it in
// gengate_lease_takeovers_total on its --admin-addr /metrics. A task
// claimed free (the second one) is not counted.
func TestLeaseTakeoverLogged(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			up, release := heldReplicate(t, 1<<20)
			dir, dbURL, args := crashSetup(t, dialect, "0s", "2s")
			cfg := filepath.Join(t.TempDir(), "providers.yaml")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf("providers:\n  replicate:\n    apiKey: k\n    baseUrl: http://%s/v1\n", up.Addr)), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--config", cfg)
			generate := func(base, key, prompt string) string {
				r := mustAPI(t, base, "POST", "/api/v1/generate", key, map[string]any{"type": "video", "modelId": "google-veo-3", "prompt": prompt},
					map[string]string{"Prefer": "respond-async"})
				wantCode(t, r, http.StatusAccepted)
				return r.str("jobId")
			}
			p1 := startProcess(t, args...)
			key := p1.key
			jobID := generate(p1.base, key, "taken over")
			// The fake holds the output after half of it: the step that
			// downloads it holds the task's lease until the kill.
			poll(t, 60*time.Second, 5*time.Millisecond, "the output's download", func() bool { return up.files.Load() >= 1 })
			if n := leasedSteps(t, dbURL, dir)(); n != 1 {
				t.Fatalf("%d steps hold a lease mid-download; want 1", n)
			}
			pid1 := p1.cmd.Process.Pid
			p1.kill(t)
			release()

			p2 := startProcess(t, append(args, "--admin-addr", "127.0.0.1:0")...)
			free := generate(p2.base, key, "free")
			for _, id := range []string{jobID, free} {
				poll(t, 60*time.Second, 50*time.Millisecond, "task "+id+" to succeed", func() bool {
					return mustAPI(t, p2.base, "GET", "/api/generation/jobs/"+id, key, nil, nil).str("status") == "succeeded"
				})
			}

			logs, _ := os.ReadFile(p2.stderr)
			var line string
			for _, l := range strings.Split(string(logs), "\n") {
				if strings.Contains(l, "lease taken over") {
					if line != "" {
						t.Errorf("more than one takeover logged:\n%s\n%s", line, l)
					}
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no takeover logged; %s", p2.logTail())
			}
			for _, want := range []string{`"level":"WARN"`, `"jobId":"` + jobID + `"`, `"previousOwner":"`, ":" + strconv.Itoa(pid1) + ":"} {
				if !strings.Contains(line, want) {
					t.Errorf("the takeover line lacks %s:\n%s", want, line)
				}
			}
			if strings.Contains(line, free) {
				t.Errorf("the free task is named as taken over:\n%s", line)
			}
			resp, err := http.Get(p2.admin + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m := regexp.MustCompile(`(?m)^gengate_lease_takeovers_total (\S+)$`).FindStringSubmatch(string(body)); m == nil || m[1] != "1" {
				t.Errorf("gengate_lease_takeovers_total: %v; want 1", m)
			}
		})
	}
}
