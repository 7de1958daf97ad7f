package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestGroupCommitKillStorm runs the real binary on SQLite, where the
// writer commits the writes of many requests together (group commit), and
// on PostgreSQL, where concurrent creations are committed in one batch
// (gengate_create_tasks), and SIGKILLs it again and again while 16 clients keep submitting
// Prefer: respond-async generates, each with an Idempotency-Key of its
// own: the writer is in the middle of its batches when the kill lands.
// Every 202 a client received must name a task that survived the kill,
// with that key and body, and that finishes, charged exactly once; the
// submissions that got no answer are retried with the same key and body
// after the last restart, and in the end the ledger explains the balance
// to the credit.
func TestGroupCommitKillStorm(t *testing.T) {
	for _, dialect := range sqltest.Dialects {
		t.Run(dialect, func(t *testing.T) { groupCommitKillStorm(t, dialect) })
	}
}

func groupCommitKillStorm(t *testing.T, dialect string) {
	dir, dbURL, args := crashSetup(t, dialect, "300ms", "1s")
	args = append(args, "--sqlite-batch", "32")
	p := startProcess(t, args...)
	key, account := p.key, p.account
	const grant = 1_000_000
	{
		store, err := openDataStore(context.Background(), dbURL, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Grant(context.Background(), account, grant, "kill storm", time.Now()); err != nil {
			t.Fatal(err)
		}
		store.Close()
	}

	type submission struct {
		idemKey string
		body    map[string]any
		jobID   string // the 202's jobId; "" when no answer came
		refused bool   // answered 503 OVERLOADED: refused before anything was written
	}
	var (
		mu   sync.Mutex
		subs []*submission
	)
	const clients, kills, perRound = 16, 6, 40
	for round := range kills {
		var accepted atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					s := &submission{idemKey: fmt.Sprintf("gc-%d-%d-%d", round, c, n),
						body: map[string]any{"type": "image", "modelId": "flux", "prompt": fmt.Sprintf("group commit %d %d %d", round, c, n)}}
					mu.Lock()
					subs = append(subs, s)
					mu.Unlock()
					r, err := api(p.base, "POST", "/api/v1/generate", key, s.body,
						map[string]string{"Prefer": "respond-async", "Idempotency-Key": s.idemKey})
					if err != nil {
						return // the server is gone: this one got no answer
					}
					if r.status == http.StatusServiceUnavailable && r.str("code") == "OVERLOADED" {
						// Pressure on the database's connections (a busy
						// machine): refused before anything is written,
						// which the check below holds it to.
						mu.Lock()
						s.refused = true
						mu.Unlock()
						continue
					}
					if r.status != http.StatusAccepted {
						t.Errorf("submission %s: %d %s", s.idemKey, r.status, r.body)
						return
					}
					mu.Lock()
					s.jobID = r.str("jobId")
					mu.Unlock()
					accepted.Add(1)
				}
			})
		}
		// Kill while the clients are still sending: a condition, not a
		// duration.
		poll(t, 2*time.Minute, time.Millisecond, "submissions to be accepted", func() bool { return accepted.Load() >= perRound })
		p.kill(t)
		close(stop)
		wg.Wait()
		p = startProcess(t, args...)
	}

	// What the kills cut off: answered or not, by whether the task exists.
	store, err := openDataStore(context.Background(), dbURL, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	answered, cutCommitted, cutLost := 0, 0, 0
	for _, s := range subs {
		task, err := store.FindTaskByIdempotencyKey(ctx, account, s.idemKey)
		if s.jobID != "" {
			answered++
			// The answer was sent, so its write must have survived.
			if err != nil {
				t.Fatalf("submission %s was answered 202 with task %s, which did not survive: %v", s.idemKey, s.jobID, err)
			}
			if task.ID != s.jobID || task.Prompt != s.body["prompt"] {
				t.Fatalf("submission %s was answered with task %s; the key names task %s (prompt %q)", s.idemKey, s.jobID, task.ID, task.Prompt)
			}
			continue
		}
		if s.refused {
			// A 503 is sent before anything is written.
			if err == nil {
				t.Fatalf("submission %s was refused 503, yet its task %s exists", s.idemKey, task.ID)
			}
			if gengate.ErrorCode(err) != gengate.ENotFound {
				t.Fatal(err)
			}
			continue
		}
		switch gengate.ErrorCode(err) {
		case "":
			cutCommitted++
		case gengate.ENotFound:
			cutLost++
		default:
			t.Fatal(err)
		}
	}
	t.Logf("%d submissions, %d answered 202 over %d kills; of the unanswered, %d had committed, %d had not",
		len(subs), answered, kills, cutCommitted, cutLost)
	if cutCommitted+cutLost == 0 {
		t.Fatal("no submission was cut off by a kill; the test proved nothing")
	}

	// Retry what got no answer, with the same key and body.
	for _, s := range subs {
		if s.jobID != "" {
			continue
		}
		r := mustAPI(t, p.base, "POST", "/api/v1/generate", key, s.body,
			map[string]string{"Prefer": "respond-async", "Idempotency-Key": s.idemKey})
		for r.status == http.StatusServiceUnavailable { // retried as a client would, until answered
			r = mustAPI(t, p.base, "POST", "/api/v1/generate", key, s.body,
				map[string]string{"Prefer": "respond-async", "Idempotency-Key": s.idemKey})
		}
		if r.status != http.StatusAccepted && r.status != http.StatusOK {
			t.Fatalf("retry of %s: %d %s", s.idemKey, r.status, r.body)
		}
		s.jobID = r.str("jobId")
	}

	// Every task finishes.
	poll(t, 5*time.Minute, 200*time.Millisecond, "every task to succeed", func() bool {
		var open int
		if err := store.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE status <> 'succeeded'`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		return open == 0
	})

	// One task per key, the one every answer named, charged once; the
	// ledger explains the balance.
	var tasks int
	if err := store.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks`).Scan(&tasks); err != nil {
		t.Fatal(err)
	}
	if tasks != len(subs) {
		t.Errorf("%d task records for %d idempotency keys", tasks, len(subs))
	}
	ledger, err := store.Ledger(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	charges, sum, grants := map[string]int{}, 0, 0
	for _, e := range ledger {
		sum += e.Amount
		switch e.Kind {
		case gengate.LedgerCharge:
			charges[e.TaskID]++
		case gengate.LedgerGrant:
			grants += e.Amount
		default:
			t.Errorf("ledger entry %+v; want grants and charges only", e)
		}
	}
	cost := 0
	for _, s := range subs {
		task, err := store.FindTask(ctx, s.jobID)
		if err != nil {
			t.Fatalf("task %s of %s: %v", s.jobID, s.idemKey, err)
		}
		if task.IdempotencyKey != s.idemKey || task.Status != gengate.StatusSucceeded {
			t.Errorf("task %s: key %q, status %s; want key %q, succeeded", task.ID, task.IdempotencyKey, task.Status, s.idemKey)
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
	if grants != 1000+grant || acct.Balance != grants-cost || sum != acct.Balance || len(charges) != len(subs) {
		t.Errorf("grants %d, balance %d, ledger sum %d, %d charges; want grants %d, balance %d and %d charges",
			grants, acct.Balance, sum, len(charges), 1000+grant, grants-cost, len(subs))
	}
}
