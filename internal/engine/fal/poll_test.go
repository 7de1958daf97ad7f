package fal

import (
	"context"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// TestPollSchedule: an image is read back a quarter second after its
// submit (however long the task waited in gengate's queue before it),
// then after waits as long as the task's age (doubling) up to 2 s, plus a
// second per request queued ahead; a video every 10 s; a job of unknown
// age at the old 2 s.
func TestPollSchedule(t *testing.T) {
	e, s := newEngine(t)
	s.SetPolls(2) // the first status read answers IN_PROGRESS
	now := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	e.client.Now = func() time.Time { return now }
	image := imageJob("fal-ai/flux/dev", "1:1", 1, "png")
	video := videoJob("fal-ai/veo3.1", map[string]any{"duration": int64(6), "resolution": "1080p", "generateAudio": false, "seed": int64(3)})
	for _, c := range []struct {
		name   string
		job    gengate.Job
		age    time.Duration // -1: unknown (no CreatedAt)
		queued int
		want   time.Duration
	}{
		{"image just accepted", image, 0, 0, 250 * time.Millisecond},
		{"image 100 ms old", image, 100 * time.Millisecond, 0, 250 * time.Millisecond},
		{"image 600 ms old", image, 600 * time.Millisecond, 0, 600 * time.Millisecond},
		{"image 1.2 s old", image, 1200 * time.Millisecond, 0, 1200 * time.Millisecond},
		{"image 5 s old", image, 5 * time.Second, 0, 2 * time.Second},
		{"image 600 ms old, 3 queued ahead", image, 600 * time.Millisecond, 3, 3600 * time.Millisecond},
		{"image of unknown age", image, -1, 0, 2 * time.Second},
		{"video just accepted", video, 0, 0, 10 * time.Second},
		{"video of unknown age", video, -1, 0, 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := c.job
			if c.age >= 0 {
				j.CreatedAt = now.Add(-c.age)
			}
			if got := e.delay(j, c.queued); got != c.want {
				t.Errorf("delay %v, want %v", got, c.want)
			}
		})
	}
	// The same schedule through Submit and Check.
	job := image
	job.CreatedAt = now.Add(-10 * time.Millisecond)
	p, err := e.Submit(context.Background(), job)
	if err != nil || p.RetryAfter != 250*time.Millisecond {
		t.Fatalf("submit: %+v, %v; want RetryAfter 250ms", p, err)
	}
	now = now.Add(700 * time.Millisecond)
	// A task that waited in gengate's own queue (1.5 s) is new to the
	// provider: its first read is a quarter second after the submit too.
	waited := image
	waited.CreatedAt = now.Add(-1500 * time.Millisecond)
	if q, err := e.Submit(context.Background(), waited); err != nil || q.RetryAfter != 250*time.Millisecond {
		t.Fatalf("submit after 1.5 s in the queue: %+v, %v; want RetryAfter 250ms", q, err)
	}
	p, err = e.Check(context.Background(), job, p.UpstreamID)
	if err != nil || len(p.Outputs) != 0 || p.RetryAfter != 710*time.Millisecond {
		t.Fatalf("check: %+v, %v; want still running, RetryAfter 710ms", p, err)
	}
}
