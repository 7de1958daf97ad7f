package gengate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gengate/gengate"
)

// TestIdempotencyKeyTwoBodiesAtOnce sends one Idempotency-Key with two
// different bodies at the same moment, round after round and many rounds
// at once, through the Service on the real store: whichever creates the
// task, the other must never be answered with it (it was made from the
// other body); it gets KEY_REUSED naming the task the key belongs to. One
// task per key, charged once.
func TestIdempotencyKeyTwoBodiesAtOnce(t *testing.T) {
	const rounds, parallel, cost = 40, 8, 4
	forDialects(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		d := newDomain(t, dialect, nil)
		acct, key := d.account(rounds * cost)
		type answer struct {
			o   *gengate.Outcome
			err error
		}
		prompts := [2]string{"a red fox", "a blue whale"}
		answers := make([][2]answer, rounds)
		sem := make(chan struct{}, parallel)
		var wg sync.WaitGroup
		for i := range rounds {
			sem <- struct{}{}
			start := make(chan struct{})
			var round sync.WaitGroup
			for j, p := range prompts {
				round.Add(1)
				wg.Go(func() {
					defer round.Done()
					<-start
					o, err := d.svc.Generate(ctx, key, []byte(`{"type":"image","modelId":"flux","prompt":"`+p+`"}`), fmt.Sprintf("k-%d", i))
					answers[i][j] = answer{o, err}
				})
			}
			close(start)
			wg.Go(func() { round.Wait(); <-sem })
		}
		wg.Wait()
		lost := 0
		for i, a := range answers {
			won := ""
			for j, x := range a {
				if x.err != nil {
					continue
				}
				if x.o.Task.Prompt != prompts[j] {
					t.Errorf("round %d: the request with %q was answered with the task made from %q (replayed=%v)",
						i, prompts[j], x.o.Task.Prompt, x.o.Replayed)
				}
				won = x.o.Task.ID
			}
			for j, x := range a {
				if x.err == nil {
					continue
				}
				lost++
				if gengate.ErrorCode(x.err) != gengate.EKeyReused {
					t.Errorf("round %d (%q): %v; want %s", i, prompts[j], x.err, gengate.EKeyReused)
					continue
				}
				var e *gengate.Error
				if !errors.As(x.err, &e) || e.Extra["jobId"] != won {
					t.Errorf("round %d (%q): KEY_REUSED names %v; want the key's task %s", i, prompts[j], e, won)
				}
			}
			if won == "" {
				t.Errorf("round %d: neither request created the task: %v / %v", i, a[0].err, a[1].err)
			}
		}
		if lost != rounds {
			t.Errorf("%d requests refused of %d rounds; want one per round", lost, rounds)
		}
		a, err := d.store.FindAccount(ctx, acct)
		if err != nil || a.Balance != 0 {
			t.Errorf("balance %v (%v); want 0: one task per key, charged once", a, err)
		}
	})
}
