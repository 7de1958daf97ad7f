package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestLeaseTakeoverLogged kills (SIGKILL) the worker holding a task's
// lease mid-step; the process started after it, whose claim takes the
// task over once the lease runs out, logs it at WARN with the task's id
// and the killed process as its previous owner, and counts it in
// gengate_lease_takeovers_total on its --admin-addr /metrics. A task
// claimed free (the second one) is not counted.
func TestLeaseTakeoverLogged(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			dir, dbURL, args := crashSetup(t, dialect, "2s", "2s")
			p1 := startProcess(t, args...)
			key := p1.key
			r := mustAPI(t, p1.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "taken over"},
				map[string]string{"Prefer": "respond-async"})
			wantCode(t, r, http.StatusAccepted)
			jobID := r.str("jobId")
			leased := leasedSteps(t, dbURL, dir)
			poll(t, 30*time.Second, 5*time.Millisecond, "the step to hold its lease", func() bool { return leased() > 0 })
			pid1 := p1.cmd.Process.Pid
			p1.kill(t)

			p2 := startProcess(t, append(args, "--admin-addr", "127.0.0.1:0")...)
			r = mustAPI(t, p2.base, "POST", "/api/v1/generate", key, map[string]any{"type": "image", "modelId": "flux", "prompt": "free"},
				map[string]string{"Prefer": "respond-async"})
			wantCode(t, r, http.StatusAccepted)
			free := r.str("jobId")
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
