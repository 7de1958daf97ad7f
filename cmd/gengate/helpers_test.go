package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/sqlstore"
)

// noEnv is a getenv that sees no GENGATE_* variables, so that the
// environment of the test run cannot change the flags.
func noEnv(string) string { return "" }

// startLines reads r line by line into a channel, closed at EOF.
func startLines(r io.Reader) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// banner is what a starting server prints: the first-start account and key
// (when the database was empty) and the address it listens on.
type banner struct {
	account string
	key     string
	base    string // http://127.0.0.1:port
	admin   string // the --admin-addr listener, when there is one
	link    string // the first-start member's set-up link (--first-email)
}

// readBanner reads lines until the "listening" line, or fails after d.
func readBanner(t *testing.T, lines <-chan string, d time.Duration, onFail func() string) banner {
	t.Helper()
	var b banner
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("server output ended before it listened; %s", onFail())
			}
			if rest, ok := strings.CutPrefix(line, "Created account "); ok {
				b.account, _, _ = strings.Cut(rest, " ")
			}
			if strings.HasPrefix(line, "gg_live_") {
				b.key = line
			}
			if strings.Contains(line, "/#/link/") {
				b.link = strings.TrimSpace(line)
			}
			if rest, ok := strings.CutPrefix(line, "gengate admin listening on "); ok {
				b.admin = rest
			}
			if rest, ok := strings.CutPrefix(line, "gengate listening on "); ok {
				b.base = rest
				return b
			}
		case <-timeout:
			t.Fatalf("server did not listen within %s; %s", d, onFail())
		}
	}
}

// httpResult is an API response read whole.
type httpResult struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (r httpResult) str(name string) string { s, _ := r.json[name].(string); return s }

func (r httpResult) num(name string) int {
	f, ok := r.json[name].(float64)
	if !ok {
		return -1
	}
	return int(f)
}

var client = &http.Client{Timeout: time.Minute}

// api sends one request to a running server. body nil sends none.
func api(base, method, path, key string, body any, header map[string]string) (httpResult, error) {
	return apiWith(context.Background(), client, base, method, path, key, body, header)
}

// untilDeadline is how long a wait for a condition (a server's start, a
// task's end) may last: until shortly before the test binary's own
// deadline (go test -timeout), so that what is only slow on a loaded
// machine is waited for, and what never happens fails with its logs
// rather than with the timeout's panic.
func untilDeadline(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Second)
	}
	return 10 * time.Minute
}

// awaitAPI sends one request that waits on the server for a condition,
// such as a synchronous generate or a POST on a statusUrl under a long
// --sync-wait: the call is bounded by untilDeadline, not by client's minute.
func awaitAPI(t *testing.T, base, method, path, key string, body any, header map[string]string) httpResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), untilDeadline(t))
	defer cancel()
	r, err := apiWith(ctx, &http.Client{}, base, method, path, key, body, header)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func apiWith(ctx context.Context, c *http.Client, base, method, path, key string, body any, header map[string]string) (httpResult, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return httpResult{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return httpResult{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return httpResult{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return httpResult{}, err
	}
	r := httpResult{status: resp.StatusCode, header: resp.Header, body: data}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(data, &r.json); err != nil {
			return r, fmt.Errorf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return r, nil
}

func mustAPI(t *testing.T, base, method, path, key string, body any, header map[string]string) httpResult {
	t.Helper()
	r, err := api(base, method, path, key, body, header)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantCode(t *testing.T, r httpResult, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

// download fetches an output URL and returns its bytes.
func download(url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return data, nil
}

// isMedia reports whether data starts like a PNG, JPEG, WebP or MP4 file.
func isMedia(data []byte) bool {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return true
	case len(data) > 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return true
	case len(data) > 8 && string(data[4:8]) == "ftyp":
		return true
	}
	return false
}

// outputURLs returns the output URLs of a 200 result.
func outputURLs(r httpResult) []string {
	if v := r.str("video"); v != "" {
		return []string{v}
	}
	raw, _ := r.json["images"].([]any)
	var urls []string
	for _, u := range raw {
		s, _ := u.(string)
		urls = append(urls, s)
	}
	return urls
}

// poll checks cond every tick until it holds or d passes; for waiting on a
// server that runs on its own.
func poll(t *testing.T, d, tick time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-time.After(tick)
	}
}

// openDataStore opens the database of a server whose --data is dir, under
// its server key (<dir>/webhook.key), as another process of the install
// would: file URL tokens are sealed under that key.
func openDataStore(ctx context.Context, dbURL, dir string) (*sqlstore.DB, error) {
	box, err := webhookBox(&Config{Data: dir})
	if err != nil {
		return nil, err
	}
	return sqlstore.Open(ctx, dbURL, dir, sqlstore.WithFileTokenKey(box))
}

// copyFile copies the file at src to dst (0600).
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
