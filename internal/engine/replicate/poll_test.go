package replicate

import (
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestPollSchedule: an image is read back a quarter second after its
// submit (however long the task waited in gengate's queue before it),
// then after waits as long as the task's age (doubling) up to 2 s; a video
// every 10 s; a job of unknown age at the old 2 s. Replicate's own clients
// read every 0.5 s (replicate-go and replicate-python's poll_interval).
func TestPollSchedule(t *testing.T) {
	s, e := newEngine(t)
	s.SetPolls(2) // the first status read answers processing
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	e.client.Now = func() time.Time { return now }
	image := imageJob("black-forest-labs/flux-dev", "1:1", "png", 1)
	video := videoJob("openai/sora-2", map[string]any{"duration": int64(8)})
	for _, c := range []struct {
		name string
		job  gengate.Job
		age  time.Duration // -1: unknown (no CreatedAt)
		want time.Duration
	}{
		{"image just accepted", image, 0, 250 * time.Millisecond},
		{"image 100 ms old", image, 100 * time.Millisecond, 250 * time.Millisecond},
		{"image 600 ms old", image, 600 * time.Millisecond, 600 * time.Millisecond},
		{"image 1.2 s old", image, 1200 * time.Millisecond, 1200 * time.Millisecond},
		{"image 5 s old", image, 5 * time.Second, 2 * time.Second},
		{"image of unknown age", image, -1, 2 * time.Second},
		{"video just accepted", video, 0, 10 * time.Second},
		{"video of unknown age", video, -1, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := c.job
			if c.age >= 0 {
				j.CreatedAt = now.Add(-c.age)
			}
			if got := e.delay(j); got != c.want {
				t.Errorf("delay %v, want %v", got, c.want)
			}
		})
	}
	// The same schedule through Submit and Check, against the strict fake.
	job := image
	job.CreatedAt = now.Add(-10 * time.Millisecond)
	p, err := e.Submit(ctx, job)
	if err != nil || p.RetryAfter != 250*time.Millisecond {
		t.Fatalf("submit: %+v, %v; want RetryAfter 250ms", p, err)
	}
	now = now.Add(700 * time.Millisecond)
	// A task that waited in gengate's own queue (1.5 s) is new to the
	// provider: its first read is a quarter second after the submit too.
	waited := image
	waited.CreatedAt = now.Add(-1500 * time.Millisecond)
	if q, err := e.Submit(ctx, waited); err != nil || q.RetryAfter != 250*time.Millisecond {
		t.Fatalf("submit after 1.5 s in the queue: %+v, %v; want RetryAfter 250ms", q, err)
	}
	p, err = e.Check(ctx, job, p.UpstreamID)
	if err != nil || len(p.Outputs) != 0 || p.RetryAfter != 710*time.Millisecond {
		t.Fatalf("check: %+v, %v; want still running, RetryAfter 710ms", p, err)
	}
}
