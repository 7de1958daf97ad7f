package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestKillStorm kills gengate with SIGKILL three times while a client is
// in the middle of submitting tasks, each with its own Idempotency-Key.
// After each restart the client retries every submission that got no
// answer, with the same key and body, as the spec tells it to. In the end
// every key names exactly one task, every task succeeded and was charged
// exactly once, and the ledger explains the balance.
func TestKillStorm(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			dir, dbURL, args := crashSetup(t, dialect, "300ms", "1s")
			p := startProcess(t, args...)
			key, account := p.key, p.account

			type submission struct {
				idemKey string
				body    map[string]any
				jobID   string // "" until a response named it
			}
			var subs []*submission
			// At least three rounds, and more until some submission was
			// cut off by a kill: when the writer answers a whole round in
			// one batch, a kill after a third of the answers cuts none.
			const minRounds, maxRounds, perRound = 3, 20, 10
			cutOff := func() bool {
				for _, s := range subs {
					if s.jobID == "" {
						return true
					}
				}
				return false
			}
			for round := 0; round < minRounds || (round < maxRounds && !cutOff()); round++ {
				batch := make([]*submission, perRound)
				for i := range batch {
					model, typ := "flux", "image"
					if i%3 == 2 {
						model, typ = "wan-2-5-t2v", "video"
					}
					batch[i] = &submission{idemKey: fmt.Sprintf("storm-%d-%d", round, i),
						body: map[string]any{"type": typ, "modelId": model, "prompt": fmt.Sprintf("storm %d %d", round, i)}}
				}
				subs = append(subs, batch...)
				// Submit the batch concurrently; kill the server as soon as
				// a third of the answers are in, so that the rest are cut
				// off at whatever point they had reached.
				answered := make(chan struct{}, perRound)
				var wg sync.WaitGroup
				for _, s := range batch {
					wg.Go(func() {
						r, err := api(p.base, "POST", "/api/v1/generate", key, s.body,
							map[string]string{"Prefer": "respond-async", "Idempotency-Key": s.idemKey})
						if err == nil && r.status == http.StatusAccepted {
							s.jobID = r.str("jobId")
						}
						answered <- struct{}{}
					})
				}
				for range perRound / 3 {
					<-answered
				}
				p.kill(t)
				wg.Wait()
				p = startProcess(t, args...)
			}

			// Retry what got no answer, with the same key and body.
			cut := 0
			for _, s := range subs {
				if s.jobID == "" {
					cut++
				}
			}
			before := countTasks(t, dbURL, dir)
			t.Logf("%d of %d submissions got no answer before a kill; %d of those had created their task",
				cut, len(subs), before-(len(subs)-cut))
			if cut == 0 {
				t.Fatal("no submission was cut off by a kill; the test proved nothing")
			}
			for _, s := range subs {
				r := mustAPI(t, p.base, "POST", "/api/v1/generate", key, s.body,
					map[string]string{"Prefer": "respond-async", "Idempotency-Key": s.idemKey})
				if r.status != http.StatusAccepted && r.status != http.StatusOK {
					t.Fatalf("retry of %s: %d %s", s.idemKey, r.status, r.body)
				}
				if s.jobID != "" && r.str("jobId") != s.jobID {
					t.Fatalf("retry of %s named task %s, the first answer named %s", s.idemKey, r.str("jobId"), s.jobID)
				}
				s.jobID = r.str("jobId")
			}

			poll(t, 90*time.Second, 100*time.Millisecond, "every task to succeed", func() bool {
				for _, s := range subs {
					r := mustAPI(t, p.base, "GET", "/api/generation/jobs/"+s.jobID, key, nil, nil)
					if st := r.str("status"); st != "succeeded" {
						if st != "processing" {
							t.Fatalf("task %s: %s\n%s", s.jobID, r.body, p.logTail())
						}
						return false
					}
				}
				return true
			})

			store, err := openDataStore(context.Background(), dbURL, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			ctx := context.Background()
			if tasks := countTasks(t, dbURL, dir); tasks != len(subs) {
				t.Errorf("%d task records for %d idempotency keys", tasks, len(subs))
			}
			ledger, err := store.Ledger(ctx, account)
			if err != nil {
				t.Fatal(err)
			}
			charges, sum := map[string]int{}, 0
			for _, e := range ledger {
				sum += e.Amount
				if e.Kind == gengate.LedgerCharge {
					charges[e.TaskID]++
				}
				if e.Kind == gengate.LedgerRefund {
					t.Errorf("refund of task %s", e.TaskID)
				}
			}
			cost := 0
			for _, s := range subs {
				task, err := store.FindTask(ctx, s.jobID)
				if err != nil {
					t.Fatal(err)
				}
				cost += task.Cost
				if charges[s.jobID] != 1 {
					t.Errorf("task %s charged %d times", s.jobID, charges[s.jobID])
				}
			}
			acct, err := store.FindAccount(ctx, account)
			if err != nil {
				t.Fatal(err)
			}
			if acct.Balance != 1000-cost || sum != acct.Balance || len(charges) != len(subs) {
				t.Errorf("balance %d, ledger sum %d, %d charges; want balance %d and %d charges", acct.Balance, sum, len(charges), 1000-cost, len(subs))
			}
		})
	}
}

// countTasks counts the task records in the database, opened beside the
// running server.
func countTasks(t *testing.T, dbURL, dir string) int {
	t.Helper()
	store, err := openDataStore(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var n int
	if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM tasks`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
