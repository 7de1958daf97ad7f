//go:build bench

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// benchOutputs is "gengate bench outputs": the server's memory while it
// stores several large video outputs at once. A fake Replicate upstream
// runs in this process and serves each prediction's output, an MP4 of
// --size bytes made as it is sent (never held or stored here); a gengate
// server, a child process of the same binary, runs the tasks with serve's
// defaults but what the bench must set: --workers only when --count is
// more than its default (so every download streams at the same time) and
// --max-output-bytes only when --size is over its default. It prints that
// command line, and the child's peak RSS (VmHWM) beside its idle RSS.
// docs/benchmarks.md keeps the figures.
func benchOutputs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var data, storage string
	var count, size int
	f := newFlags("bench outputs", getenv, stderr)
	benchTargetFlags(f, &data, nil)
	f.StringVar(&storage, "storage", "", "--storage of the gengate under test (default: files in --data; s3://… needs AWS_* set)")
	f.IntVar(&count, "count", 4, "video outputs stored at once")
	f.IntVar(&size, "size", 1<<30, "bytes of each output")
	if err := f.Parse(args); err != nil {
		return err
	}
	if count < 1 || size < 1<<20 {
		return errors.New("--count must be ≥ 1 and --size ≥ 1 MiB")
	}
	data, cleanup, err := benchData(data)
	if err != nil {
		return err
	}
	defer cleanup()
	key, err := benchKey(ctx, "", data)
	if err != nil {
		return err
	}
	up, err := startFakeReplicate(int64(size), nil)
	if err != nil {
		return err
	}
	defer up.Close()
	cfgPath := filepath.Join(data, "providers.yaml")
	cfg := fmt.Sprintf("providers:\n  replicate:\n    apiKey: bench-key\n    baseUrl: http://%s/v1\n", up.Addr)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	var under benchServe
	under.set("config", cfgPath)
	if storage != "" {
		under.set("storage", storage)
	}
	if count > defaultWorkers {
		under.set("workers", strconv.Itoa(count))
	}
	if int64(size) > gengate.DefaultMaxOutputBytes {
		under.set("max-output-bytes", strconv.Itoa(size))
	}
	fmt.Fprintf(stdout, "gengate under test: %s\n", under)
	srv, err := startBenchServer(ctx, data, "", under.args...)
	if err != nil {
		return err
	}
	defer srv.stop()
	store, err := sqlstore.Open(ctx, "", data)
	if err != nil {
		return err
	}
	defer store.Close()
	idle := srv.rss()
	start := time.Now()
	for i := range count {
		body := fmt.Sprintf(`{"type":"video","modelId":"google-veo-3","prompt":"a long video %d"}`, i)
		status, answer, err := benchPost(http.DefaultClient, srv.base, key, body)
		if err != nil {
			return err
		}
		if status != http.StatusAccepted {
			return fmt.Errorf("gengate answered %d, not 202: %s", status, answer)
		}
	}
	var peakSeen int64
	for {
		counts, err := store.CountTasks(ctx)
		if err != nil {
			return err
		}
		peakSeen = max(peakSeen, srv.rss())
		if counts[gengate.StatusSucceeded] == count {
			break
		}
		if n := counts[gengate.StatusFailed] + counts[gengate.StatusNeedsReview]; n > 0 {
			return fmt.Errorf("%d tasks failed or went to review; see %s", n, filepath.Join(data, "serve.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-srv.done:
			return fmt.Errorf("the server ended; see %s", filepath.Join(data, "serve.log"))
		case <-time.After(100 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	peak := srv.status("VmHWM:")
	fmt.Fprintf(stdout, "gengate bench outputs: %d video outputs of %d MiB stored at once (fake Replicate upstream on loopback, storage %s)\n",
		count, size>>20, map[bool]string{true: "local files", false: storage}[storage == ""])
	fmt.Fprintf(stdout, "all stored after %s (%.0f MB/s in total); %d MiB served by the upstream\n",
		elapsed.Round(time.Millisecond), float64(count)*float64(size)/1e6/elapsed.Seconds(), up.sent()>>20)
	fmt.Fprintf(stdout, "server RSS: idle %d MB, highest sampled %d MB, peak (VmHWM) %d MB\n", idle>>20, peakSeen>>20, peak>>20)
	return nil
}

// status returns a size line of the child's /proc status ("VmRSS:",
// "VmHWM:") in bytes (Linux).
func (c *benchChild) status(field string) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
