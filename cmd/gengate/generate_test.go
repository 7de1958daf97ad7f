package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// clientRun runs the real binary as an API client and returns its stdout,
// stderr and error.
func clientRun(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func lines(s string) []string { return strings.Fields(strings.TrimSpace(s)) }

// TestGenerateCLI: gengate generate and gengate jobs, the real binary
// against a running server.
func TestGenerateCLI(t *testing.T) {
	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--review-terms", "hold me")
	env := []string{"GENGATE_URL=" + s.base, "GENGATE_KEY=" + s.key}
	out := t.TempDir()

	// Two images downloaded into --out, the server and key from the environment.
	stdout, stderr, err := clientRun(t, env, "generate", "--model", "flux", "--prompt", "a lighthouse",
		"--option", "aspectRatio=16:9", "--option", "numOutputs=2", "--out", out)
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, stderr)
	}
	paths := lines(stdout)
	if len(paths) != 2 {
		t.Fatalf("want two paths, got %q (stderr %s)", stdout, stderr)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil || filepath.Dir(p) != out {
			t.Fatalf("%s: %v", p, err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width*9 != cfg.Height*16 {
			t.Errorf("%s: %dx%d %v", p, cfg.Width, cfg.Height, err)
		}
	}
	if !strings.Contains(stderr, " succeeded") || strings.Contains(stderr, "\r") {
		t.Errorf("stderr is not plain progress lines: %q", stderr)
	}
	// The files are named <jobId>-<n>.<ext>, and the cost is said.
	jobName := regexp.MustCompile(`^([0-9a-f-]{36})-([0-9]+)\.png$`)
	m0, m1 := jobName.FindStringSubmatch(filepath.Base(paths[0])), jobName.FindStringSubmatch(filepath.Base(paths[1]))
	if m0 == nil || m1 == nil || m0[1] != m1[1] || m0[2] != "0" || m1[2] != "1" {
		t.Errorf("output files %v; want <jobId>-0.png and <jobId>-1.png", paths)
	} else if r := mustAPI(t, s.base, "GET", "/api/generation/jobs/"+m0[1], s.key, nil, nil); r.status != 200 ||
		!strings.Contains(stderr, "cost "+strconv.Itoa(r.num("cost"))+" credits") || r.num("cost") == 0 {
		t.Errorf("stderr does not say the cost of job %s (%d): %q", m0[1], r.num("cost"), stderr)
	}

	// A local file as the input: uploaded, then used.
	in := filepath.Join(t.TempDir(), "in.png")
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	img.Set(3, 3, color.White)
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err = clientRun(t, nil, "generate", "--url", s.base, "--key", s.key, "--model", "image-upscaler",
		"--image", in, "--option", "scale=2")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(stdout), s.base+"/files/") {
		t.Fatalf("generate --image FILE: %v %q\n%s", err, stdout, stderr)
	}
	// Its output URL as the next model's input.
	stdout, stderr, err = clientRun(t, env, "generate", "--model", "remove-bg", "--image", strings.TrimSpace(stdout))
	if err != nil || len(lines(stdout)) != 1 {
		t.Fatalf("generate --image URL: %v %q\n%s", err, stdout, stderr)
	}

	// --async prints the job id; jobs wait and jobs get follow it.
	stdout, stderr, err = clientRun(t, env, "generate", "--model", "flux", "--prompt", "a harbour", "--async")
	id := strings.TrimSpace(stdout)
	if err != nil || len(id) != 36 {
		t.Fatalf("--async: %v %q\n%s", err, stdout, stderr)
	}
	stdout, stderr, err = clientRun(t, env, "jobs", "wait", id, "--out", out)
	if err != nil || len(lines(stdout)) != 1 || !strings.HasPrefix(lines(stdout)[0], out) {
		t.Fatalf("jobs wait: %v %q\n%s", err, stdout, stderr)
	}
	stdout, stderr, err = clientRun(t, env, "jobs", "get", id)
	var rec map[string]any
	if err != nil || json.Unmarshal([]byte(stdout), &rec) != nil || rec["status"] != "succeeded" || rec["jobId"] != id {
		t.Fatalf("jobs get: %v %q\n%s", err, stdout, stderr)
	}
	// A finished task is not canceled (docs/api.md, Cancel).
	_, stderr, err = clientRun(t, env, "jobs", "cancel", id)
	if err == nil || !strings.Contains(stderr, "TASK_FINISHED") {
		t.Errorf("jobs cancel: %v %q", err, stderr)
	}

	// Refusals exit 1 with the problem's code.
	_, stderr, err = clientRun(t, env, "generate", "--model", "flux", "--prompt", "x", "--option", "numOutputs=9")
	if err == nil || !strings.Contains(stderr, "UNSUPPORTED_MODEL_OPTION") {
		t.Errorf("bad option: %v %q", err, stderr)
	}
	_, stderr, err = clientRun(t, env, "generate", "--model", "flux", "--prompt", "please hold me")
	if err == nil || !strings.Contains(stderr, "GENERATION_NEEDS_REVIEW") {
		t.Errorf("review: %v %q", err, stderr)
	}
	_, stderr, err = clientRun(t, nil, "generate", "--url", s.base, "--model", "flux", "--prompt", "x")
	if err == nil || !strings.Contains(stderr, "GENGATE_KEY") {
		t.Errorf("no key: %v %q", err, stderr)
	}
}

// TestReadmeClientCommands runs the README's gengate generate block with
// bash and the real binary against a running server.
func TestReadmeClientCommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Client and `gengate generate`")
	if !ok {
		t.Fatal("README.md has no client section")
	}
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	dir := t.TempDir()
	if err := os.Symlink(binary(t), filepath.Join(dir, "gengate")); err != nil {
		t.Fatal(err)
	}
	// The export line names a placeholder key; the test's server and key
	// replace it.
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "export ") {
			script = append(script, line)
		}
	}
	sh := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	sh.Dir = dir
	sh.Env = append(os.Environ(), "GENGATE_URL="+s.base, "GENGATE_KEY="+s.key)
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's client commands failed: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "*.png"))
	if len(files) != 2 {
		t.Errorf("out/ holds %d images, want the first and the waited one: %v\n%s", len(files), files, out)
	}
}
