package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	gg "github.com/gengate/gengate/client"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

func pf(f float64) *float64 { return &f }
func pi(i int) *int         { return &i }

// TestRenderFrame: the progress line for given progress values and widths.
func TestRenderFrame(t *testing.T) {
	route := "replicate black-forest-labs/flux-dev"
	for _, c := range []struct {
		name  string
		f     frame
		width int
		want  string
	}{
		{"percent", frame{Status: "processing", Route: route, Percent: pf(42), Elapsed: 12 * time.Second}, 100,
			"[########------------]  42% processing (replicate black-forest-labs/flux-dev) 12s"},
		{"zero", frame{Status: "starting", Percent: pf(0), Elapsed: 400 * time.Millisecond}, 80,
			"[--------------------]   0% starting 0s"},
		{"full", frame{Status: "processing", Percent: pf(100), Elapsed: time.Minute}, 80,
			"[####################] 100% processing 1m0s"},
		{"over and under are clamped", frame{Status: "x", Percent: pf(250)}, 80, "[####################] 100% x 0s"},
		{"negative", frame{Status: "x", Percent: pf(-3)}, 80, "[--------------------]   0% x 0s"},
		{"fraction rounds down", frame{Status: "x", Percent: pf(99.9)}, 80, "[###################-]  99% x 0s"},
		{"queued", frame{Status: "IN_QUEUE", Route: "fal fal-ai/flux/dev", QueuePosition: pi(3), Elapsed: 2 * time.Second}, 80,
			"[###-----------------] queue position 3 IN_QUEUE (fal fal-ai/flux/dev) 2s"},
		{"indeterminate moves", frame{Status: "processing", Tick: 5}, 80, "[-----###------------] processing 0s"},
		{"indeterminate bounces back", frame{Status: "processing", Tick: 17 + 3}, 80, "[--------------###---] processing 0s"},
		{"narrow: the route cut", frame{Status: "processing", Route: route, Percent: pf(50), Elapsed: 12 * time.Second}, 50,
			"[##########----------]  50% processing (rep…) 12s"},
		{"route cut first", frame{Status: "processing", Route: route, Percent: pf(42), Elapsed: 12 * time.Second}, 80,
			"[########------------]  42% processing (replicate black-forest-labs/flux-…) 12s"},
		{"too narrow for anything but the head", frame{Status: "processing", Percent: pf(50)}, 20, "[##########-------…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := render(c.f, c.width)
			if got != c.want {
				t.Errorf("render:\n got %q\nwant %q", got, c.want)
			}
			if n := len([]rune(got)); n > c.width-1 {
				t.Errorf("%d runes for width %d", n, c.width)
			}
		})
	}
}

// TestFrameOfJob: a frame reads the task record's progress and route; a
// finished job shows its own status whatever its last report said.
func TestFrameOfJob(t *testing.T) {
	running := &gg.Job{Status: "processing", Route: &gg.Route{Engine: "fal", Upstream: "fal-ai/flux/dev"},
		Progress: &gg.Progress{UpstreamStatus: "IN_QUEUE", QueuePosition: pi(2)}}
	if got := plainLine("j1", frameOf(running)); got != "job j1 IN_QUEUE queue position 2 (fal fal-ai/flux/dev)" {
		t.Errorf("running: %q", got)
	}
	done := &gg.Job{Status: "succeeded", Progress: &gg.Progress{UpstreamStatus: "processing", Percent: pf(75)}}
	if got := plainLine("j1", frameOf(done)); got != "job j1 succeeded" {
		t.Errorf("done: %q", got)
	}
}

// TestGenerateProgressBar: gengate generate against a running server
// routing to the Replicate fake, whose logs carry tqdm bars: with stderr
// taken for a terminal, the bar with the percentage and the route is
// redrawn in place; then the outputs are printed.
func TestGenerateProgressBar(t *testing.T) {
	rep := replicatetest.New(t)
	rep.Hold()
	s := providerServer(t, replicateConfig(rep), nil)

	saved := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { isTerminal = saved })

	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"generate", "--url", s.base, "--key", s.key, "--model", "flux", "--prompt", "a lighthouse"},
			func(k string) string { return map[string]string{"COLUMNS": "120"}[k] }, &stdout, &stderr)
	}()
	bar := regexp.MustCompile(`\r\x1b\[K\[#+-*\] +\d+% processing \(replicate [^)]+\) \d+m?\d*s`)
	poll(t, 60*time.Second, 20*time.Millisecond, "a bar with a percentage", func() bool { return bar.MatchString(stderr.String()) })
	rep.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("generate: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("generate did not end; stderr %q", stderr.String())
	}
	if out := strings.TrimSpace(stdout.String()); !strings.HasPrefix(out, s.base+"/files/") {
		t.Errorf("stdout %q", out)
	}
	if !regexp.MustCompile(`\r\x1b\[Kjob \S+ succeeded in \d+`).MatchString(stderr.String()) {
		t.Errorf("no final line after the bar: %q", stderr.String())
	}
}
