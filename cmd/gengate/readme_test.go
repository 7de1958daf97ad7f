package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeCall is one curl command of the README walk-through with the answer
// the README shows for it ("# → 200 {...}"), when it shows one.
type readmeCall struct {
	command string
	status  int    // 0: the README shows no answer
	answer  string // the JSON-ish text after the status
}

// readmeWalkthrough returns the curl commands of the README's walk-through.
func readmeWalkthrough(t *testing.T) []readmeCall {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Walk-through")
	if !ok {
		t.Fatal("README.md has no Walk-through section")
	}
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var calls []readmeCall
	var cur *readmeCall
	continued := false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case continued:
			cur.command += "\n" + line
		case strings.HasPrefix(line, "curl "):
			calls = append(calls, readmeCall{command: line})
			cur = &calls[len(calls)-1]
		case strings.HasPrefix(line, "# → ") && cur != nil && cur.status == 0:
			status, answer, _ := strings.Cut(strings.TrimPrefix(line, "# → "), " ")
			cur.status, _ = strconv.Atoi(status)
			cur.answer = answer
		}
		continued = strings.HasSuffix(line, "\\")
	}
	if len(calls) < 5 {
		t.Fatalf("found %d curl commands in the walk-through", len(calls))
	}
	return calls
}

// TestReadmeWalkthrough runs every curl command of the README's walk-through
// with bash and curl against a running server, and checks each answer the
// README shows: the status, every member it names and every number it
// quotes. <jobId> and <outputUrl> stand for the latest task id and first
// image url answered before. https://example.com/photo.jpg is served by a loopback server (the
// test runs with --allow-private-inputs for it).
func TestReadmeWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "od"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required under CI: %v", tool, err)
			}
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
	photo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		img := image.NewRGBA(image.Rect(0, 0, 64, 48))
		for y := range 48 {
			for x := range 64 {
				img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 120, 255})
			}
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_ = jpeg.Encode(w, img, nil)
	}))
	defer photo.Close()

	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-private-inputs")
	host := strings.TrimPrefix(s.base, "http://")
	numbers := regexp.MustCompile(`"(\w+)":(\d+)`)
	members := regexp.MustCompile(`"(\w+)":`)
	jobID, outputURL := "", "" // the latest answered, for <jobId> and <outputUrl>
	for i, c := range readmeWalkthrough(t) {
		cmd := strings.ReplaceAll(c.command, "localhost:8080", host)
		cmd = strings.ReplaceAll(cmd, "https://example.com/photo.jpg", photo.URL+"/photo.jpg")
		if strings.Contains(cmd, "<outputUrl>") {
			if outputURL == "" {
				t.Fatalf("command %d needs an output url and no image was answered before it", i)
			}
			cmd = strings.ReplaceAll(cmd, "<outputUrl>", outputURL)
		}
		if strings.Contains(cmd, "<jobId>") {
			if jobID == "" {
				t.Fatalf("command %d needs a jobId and none was answered before it", i)
			}
			cmd = strings.ReplaceAll(cmd, "<jobId>", jobID)
			// The README shows the finished task: wait for it to finish.
			poll(t, 60*time.Second, 20*time.Millisecond, "the walk-through's task to finish", func() bool {
				return mustAPI(t, s.base, "GET", "/api/generation/jobs/"+jobID, s.key, nil, nil).str("status") != "processing"
			})
		}
		sh := exec.Command("bash", "-c", cmd+` -w '\n%{http_code}'`)
		sh.Env = append(os.Environ(), "KEY="+s.key)
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("command %d failed: %v\n%s\n%s", i, err, cmd, out)
		}
		out = bytes.TrimSpace(out)
		cut := bytes.LastIndexByte(out, '\n')
		status, _ := strconv.Atoi(string(out[cut+1:]))
		body := out[:cut+1]
		if k := bytes.Index(body, []byte("\r\n\r\n")); k >= 0 { // curl -i: headers first
			body = body[k+4:]
		}
		var answer map[string]any
		if err := json.Unmarshal(body, &answer); err != nil {
			t.Fatalf("command %d answered %d with no JSON object: %v\n%s", i, status, err, out)
		}
		if id, ok := answer["jobId"].(string); ok {
			jobID = id
		}
		if images, _ := answer["images"].([]any); len(images) > 0 {
			outputURL, _ = images[0].(string)
		}
		if c.status == 0 {
			if status >= 300 {
				t.Errorf("command %d answered %d:\n%s\n%s", i, status, cmd, body)
			}
			t.Logf("command %d answered %d %s", i, status, body)
			continue
		}
		if status != c.status {
			t.Errorf("command %d answered %d, the README shows %d:\n%s\n%s", i, status, c.status, cmd, body)
			continue
		}
		for _, m := range members.FindAllStringSubmatch(c.answer, -1) {
			if m[1] == "field" { // inside errors[]
				continue
			}
			if _, ok := answer[m[1]]; !ok {
				t.Errorf("command %d: the answer has no %q, the README shows it:\n%s", i, m[1], body)
			}
		}
		for _, m := range numbers.FindAllStringSubmatch(c.answer, -1) {
			if got, _ := answer[m[1]].(float64); strconv.Itoa(int(got)) != m[2] {
				t.Errorf("command %d: %s is %v, the README shows %s:\n%s", i, m[1], answer[m[1]], m[2], body)
			}
		}
		for _, m := range regexp.MustCompile(`"(\w+)":"([^".]+)"`).FindAllStringSubmatch(c.answer, -1) {
			if m[1] == "field" {
				continue
			}
			if got, _ := answer[m[1]].(string); got != m[2] {
				t.Errorf("command %d: %s is %q, the README shows %q:\n%s", i, m[1], got, m[2], body)
			}
		}
	}
}
