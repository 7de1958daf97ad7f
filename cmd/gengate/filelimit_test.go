//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDefaultMaxConns: the default --max-conns is the file limit less a
// reserve of a quarter of it, at most 1024.
func TestDefaultMaxConns(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int
	}{
		{0, fallbackMaxConns}, // unknown
		{256, 192},
		{1024, 768},
		{2000, 1500},
		{20000, 18976},
		{1 << 20, 1<<20 - 1024},
		{1 << 62, 1 << 30}, // RLIM_INFINITY-like
	} {
		if got := defaultMaxConns(c.nofile); got != c.want {
			t.Errorf("defaultMaxConns(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
}

// TestMaxConnsFollowsFileLimit starts the real binary with a soft file
// limit of 1000 under a hard one of 2000: serve raises the soft limit to
// 2000 (the process's /proc limits say so) and, without --max-conns,
// takes 1500 connections (2000 less its reserve of 500), which it logs.
func TestMaxConnsFollowsFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < 2000 {
		t.Skipf("the hard file limit (%d) is under 2000", lim.Max)
	}
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command("sh", "-c", `ulimit -Sn 1000 && ulimit -Hn 2000 && exec "$0" serve --data "$1" --addr 127.0.0.1:0`,
		binary(t), t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	var line struct {
		Msg       string `json:"msg"`
		MaxConns  int    `json:"maxConns"`
		FileLimit uint64 `json:"fileLimit"`
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	poll(t, untilDeadline(t), 20*time.Millisecond, "the connections log line", func() bool {
		select {
		case <-exited:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("the server exited: %s", data)
		default:
		}
		f, err := os.Open(logPath)
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "connections" {
				return true
			}
		}
		return false
	})
	if line.FileLimit != 2000 || line.MaxConns != 1500 {
		t.Errorf("logged file limit %d and max conns %d, want 2000 and 1500", line.FileLimit, line.MaxConns)
	}
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/limits")
	if err != nil {
		t.Skipf("no /proc limits: %v", err)
	}
	for _, l := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(l, "Max open files") {
			if f := strings.Fields(l); len(f) < 5 || f[3] != "2000" {
				t.Errorf("the process's file limit: %q, want a soft limit of 2000", l)
			}
		}
	}
}
