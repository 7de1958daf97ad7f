package sqlstore_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// finishCase is one task of TestFinishTogether: how it was left before the
// finishes are sent, and what its finish holds.
type finishCase struct {
	claim   *gengate.Task
	stale   bool // its lease was taken over, or it is no longer active
	webhook bool
	refund  int // a failed task's refund: written alone
	outs    []gengate.Creation
}

// TestFinishTogether: finishes that arrive together (on SQLite's writer,
// or at PostgreSQL's batcher) are written together (finishbatch.go), and each caller gets what its own
// transaction would have given: a finish under the lease it holds writes
// the task's final record, its creations, its upstream cost and its
// webhook events (the task's own and an endpoint's); one under a lease
// taken over by another claim, or of a task no longer active, is refused
// with EConflict and writes none of them; a failed task's refund is
// written alone, once.
func TestFinishTogether(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			ep := &gengate.WebhookEndpoint{ID: "ep_" + gengate.NewID(), AccountID: a.ID, URL: "https://example.com/ep",
				EventTypes: []string{gengate.EventSucceeded}, CreatedAt: t0, Keys: gengate.WebhookKeys{Secret: "sealed"}}
			if err := s.CreateWebhookEndpoint(ctx, ep, 10); err != nil {
				t.Fatal(err)
			}
			const n = 24
			var cases []*finishCase
			for i := range n {
				c := &finishCase{webhook: i%4 == 1}
				task := newTask(a.ID, 3)
				if c.webhook {
					task.WebhookURL = "https://example.com/hook"
				}
				mustCreate(t, s, task)
				c.claim = mustClaim(t, s, task.ID, t0)
				cases = append(cases, c)
			}
			// Every third task's lease was taken over by another claim; every
			// fifth is no longer active; every seventh failed and refunds.
			for i, c := range cases {
				switch {
				case i%3 == 0:
					if _, err := s.ClaimTask(ctx, c.claim.ID, "other", t0.Add(2*time.Minute), time.Minute); err != nil {
						t.Fatal(err)
					}
					c.stale = true
				case i%5 == 0:
					done := *c.claim
					done.Status, done.CompletedAt, done.UpdatedAt = gengate.StatusCanceled, t0, t0
					if err := s.FinishTask(ctx, &done, 0); err != nil {
						t.Fatal(err)
					}
					c.stale = true
				case i%7 == 0:
					c.refund = c.claim.Cost
				}
			}
			finished := t0.Add(time.Minute)
			for i, c := range cases {
				task := c.claim
				task.UpdatedAt, task.CompletedAt, task.Route = finished, finished, gengate.Route{Engine: "sandbox", Upstream: "u" + task.ID}
				if c.refund > 0 {
					task.Status, task.ErrorCode, task.ErrorMessage = gengate.StatusFailed, "upstream_error", "no"
					continue
				}
				task.Status = gengate.StatusSucceeded
				task.UpstreamCost = &gengate.UpstreamCost{Known: i%2 == 0, MicroUSD: int64(1000 * i), Basis: "test"}
				for k := range 1 + i%2 { // one output or two
					c.outs = append(c.outs, newOutput(task, k, string(rune('0'+k))+".png", int64(100+k), finished))
				}
				task.Outputs = c.outs
			}
			before, _ := s.FinishBatches()
			errs := finishAll(t, s, cases)
			if after, _ := s.FinishBatches(); after == before {
				t.Errorf("no finishes were written together (%d groups before and after)", before)
			}
			live := 0
			for i, c := range cases {
				id := c.claim.ID
				row, err := s.FindTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				events := count(t, s, `SELECT COUNT(*) FROM webhook_events WHERE task_id = $1`, id)
				costs := count(t, s, `SELECT COUNT(*) FROM upstream_costs WHERE task_id = $1`, id)
				if c.stale {
					if gengate.ErrorCode(errs[i]) != gengate.EConflict {
						t.Errorf("finish of task %d under a lost lease: %v; want EConflict", i, errs[i])
					}
					if row.Status == gengate.StatusSucceeded || len(row.Outputs) != 0 || costs != 0 || row.Status != gengate.StatusCanceled && events != 0 {
						t.Errorf("finish of task %d under a lost lease was written: %s, %d outputs, %d costs, %d events", i, row.Status, len(row.Outputs), costs, events)
					}
					continue
				}
				if errs[i] != nil {
					t.Errorf("finish of task %d under its lease: %v", i, errs[i])
					continue
				}
				if c.claim.LeaseToken != "" {
					t.Errorf("task %d: LeaseToken = %q after FinishTask; want it cleared", i, c.claim.LeaseToken)
				}
				if row.Status != c.claim.Status || !row.CompletedAt.Equal(finished) || row.LeaseToken != "" || row.Route.Upstream != c.claim.Route.Upstream {
					t.Errorf("task %d stored as %+v; want %s at %v, the lease given up", i, row, c.claim.Status, finished)
				}
				if c.refund > 0 {
					if costs != 0 || len(row.Outputs) != 0 {
						t.Errorf("failed task %d: %d costs, %d outputs; want none", i, costs, len(row.Outputs))
					}
					continue
				}
				live++
				if !reflect.DeepEqual(row.Outputs, c.outs) {
					t.Errorf("task %d outputs =\n%+v\nwant\n%+v", i, row.Outputs, c.outs)
				}
				var micro *int64
				if err := s.SQL().QueryRow(`SELECT micro_usd FROM upstream_costs WHERE task_id = $1`, id).Scan(&micro); err != nil {
					t.Errorf("task %d: its upstream cost: %v", i, err)
				} else if known := c.claim.UpstreamCost.Known; known != (micro != nil) || known && *micro != c.claim.UpstreamCost.MicroUSD {
					t.Errorf("task %d: upstream cost %v; want %+v", i, micro, c.claim.UpstreamCost)
				}
				want := 1 // the endpoint's
				if c.webhook {
					want++
				}
				if events != want {
					t.Errorf("task %d: %d webhook events; want %d", i, events, want)
				}
			}
			if live < 8 {
				t.Fatalf("only %d plain finishes under their lease: the test needs more", live)
			}
			checkLedger(t, s, a.ID)
		})
	}
}

// TestFinishTogetherFallsBack: a statement of the group that fails (here a
// creation whose id is taken) undoes the group, and each finish is then
// written alone: only the bad one fails, and changes nothing.
func TestFinishTogetherFallsBack(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			// A creation id already taken, by a task finished before.
			first := newTask(a.ID, 1)
			mustCreate(t, s, first)
			done := mustClaim(t, s, first.ID, t0)
			taken := gengate.NewID()
			done.Status, done.UpdatedAt, done.CompletedAt = gengate.StatusSucceeded, t0, t0
			done.Outputs = []gengate.Creation{newOutput(done, 0, "0.png", 1, t0)}
			done.Outputs[0].ID = taken
			if err := s.FinishTask(ctx, done, 0); err != nil {
				t.Fatal(err)
			}
			var cases []*finishCase
			for i := range 6 {
				task := newTask(a.ID, 1)
				mustCreate(t, s, task)
				c := &finishCase{claim: mustClaim(t, s, task.ID, t0)}
				id := gengate.NewID()
				if i == 3 {
					id = taken
				}
				c.outs = []gengate.Creation{newOutput(task, 0, "0.png", 1, t0)}
				c.outs[0].ID = id
				c.claim.Status, c.claim.UpdatedAt, c.claim.CompletedAt, c.claim.Outputs = gengate.StatusSucceeded, t0, t0, c.outs
				cases = append(cases, c)
			}
			groups, _ := s.FinishBatches()
			errs := finishAll(t, s, cases)
			for i, c := range cases {
				row, err := s.FindTask(ctx, c.claim.ID)
				if err != nil {
					t.Fatal(err)
				}
				if i == 3 {
					if errs[i] == nil || row.Status == gengate.StatusSucceeded || len(row.Outputs) != 0 {
						t.Errorf("the finish with a taken creation id: %v, stored as %s with %d outputs; want it refused and unwritten", errs[i], row.Status, len(row.Outputs))
					}
					continue
				}
				if errs[i] != nil || row.Status != gengate.StatusSucceeded || !reflect.DeepEqual(row.Outputs, c.outs) {
					t.Errorf("finish %d: %v, stored as %s with %+v; want it written", i, errs[i], row.Status, row.Outputs)
				}
			}
			if after, _ := s.FinishBatches(); after != groups {
				t.Errorf("%d groups of finishes kept; want none (the group failed)", after-groups)
			}
		})
	}
}

// newOutput is output index of task, a PNG named name of size bytes made
// at at, with a new id and file token.
func newOutput(task *gengate.Task, index int, name string, size int64, at time.Time) gengate.Creation {
	return gengate.Creation{ID: gengate.NewID(), AccountID: task.AccountID, TaskID: task.ID, Index: index,
		Key: "outputs/" + task.ID + "/" + name, Token: gengate.NewToken(), ContentType: "image/png", Ext: "png",
		Size: size, CreatedAt: at}
}

// finishAll sends the cases' finishes together, queued behind a held
// batch of the writer, and returns each one's result.
func finishAll(t *testing.T, s *sqlstore.DB, cases []*finishCase) []error {
	t.Helper()
	release, queued := s.HoldWriter, s.QueuedWrites
	if s.Postgres() {
		release, queued = func(testing.TB) func() { return s.HoldFinishes() }, s.FinishesQueued
	}
	done := release(t)
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.FinishTask(context.Background(), c.claim, c.refund)
		}()
	}
	want := len(cases) // every write queues on SQLite's writer
	if s.Postgres() {
		want = 0 // only the plain finishes queue at PostgreSQL's batcher
		for _, c := range cases {
			if c.refund == 0 {
				want++
			}
		}
	}
	for queued() < want { // a condition, not a duration
		time.Sleep(time.Millisecond)
	}
	done()
	wg.Wait()
	return errs
}

// TestFinishTogetherOncePerTask: two finishes of one task under one lease
// (a worker's retry) that arrive together are never written by one
// statement: one is written, the other refused with EConflict, as one
// after the other would be, and only the written one's creations exist.
func TestFinishTogetherOncePerTask(t *testing.T) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.Open(t, d)
			a := newAccount(t, s, 1000)
			var cases []*finishCase
			for i := range 4 {
				task := newTask(a.ID, 1)
				mustCreate(t, s, task)
				claim := mustClaim(t, s, task.ID, t0)
				for k := range 1 + i%2 { // the odd tasks are finished twice
					c := &finishCase{claim: new(gengate.Task)}
					*c.claim = *claim
					// Indices that differ: no unique index of creations tells the
					// two finishes apart.
					c.outs = []gengate.Creation{newOutput(task, k, string(rune('a'+k))+".png", 1, t0)}
					c.claim.Status, c.claim.UpdatedAt, c.claim.CompletedAt, c.claim.Outputs = gengate.StatusSucceeded, t0, t0, c.outs
					cases = append(cases, c)
				}
			}
			errs := finishAll(t, s, cases)
			won := map[string][]gengate.Creation{}
			for i, c := range cases {
				switch {
				case errs[i] == nil:
					if won[c.claim.ID] != nil {
						t.Errorf("task %s: two finishes under one lease both written", c.claim.ID)
					}
					won[c.claim.ID] = c.outs
				case gengate.ErrorCode(errs[i]) != gengate.EConflict:
					t.Errorf("finish %d: %v; want nil or EConflict", i, errs[i])
				}
			}
			for id, outs := range won {
				row, err := s.FindTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(row.Outputs, outs) {
					t.Errorf("task %s outputs =\n%+v\nwant the written finish's\n%+v", id, row.Outputs, outs)
				}
			}
			if len(won) != 4 {
				t.Errorf("%d tasks finished; want 4", len(won))
			}
		})
	}
}
