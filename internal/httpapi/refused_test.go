package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gengate/gengate"
)

// TestRefusedRequests: every kind of bad request is answered with its
// status and code in a problem body, stores nothing (no task, no input
// file, no charge), and leaves the server serving good requests.
func TestRefusedRequests(t *testing.T) {
	t.Parallel()
	png := testPNG(t, 32, 32)
	img := serveBytes(t, "image/png", png)
	port := img.Listener.Addr().(*net.TCPAddr).Port
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(100)

	prompt := func(n int) string { return strings.Repeat("a", n) }
	over32MiB := `{"type":"image","modelId":"flux","prompt":"` + strings.Repeat("x", 33<<20) + `"}`
	photo := func(u string) map[string]any {
		return map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": u}
	}
	tests := []struct {
		name      string
		body      any
		header    map[string]string
		status    int
		code      string
		fieldCode string // errors[0].code, when set
		field     string // errors[0].field, when set
	}{
		{"broken JSON", `{"type":"image",`, nil, 400, gengate.EInvalid, "", ""},
		{"trailing data", `{"type":"image","modelId":"flux","prompt":"x"} {}`, nil, 400, gengate.EInvalid, "", ""},
		{"empty body", ``, nil, 400, gengate.EInvalid, "", ""},
		{"JSON array", `[{"type":"image","modelId":"flux","prompt":"x"}]`, nil, 400, gengate.EInvalid, "", ""},
		{"JSON string", `"flux"`, nil, 400, gengate.EInvalid, "", ""},
		{"prompt not a string", map[string]any{"type": "image", "modelId": "flux", "prompt": 5}, nil, 400, gengate.EInvalid, gengate.FieldType, "prompt"},
		{"numOutputs a string", map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "numOutputs": "2"}, nil, 400, gengate.EInvalid, gengate.FieldType, "numOutputs"},
		{"numOutputs fractional", map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "numOutputs": 1.5}, nil, 400, gengate.EInvalid, gengate.FieldType, "numOutputs"},
		{"modelId a number", map[string]any{"type": "image", "modelId": 7, "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldType, "modelId"},
		{"inputs not an object", map[string]any{"type": "video", "modelId": "kling-2-1", "prompt": "x", "inputs": []any{}}, nil, 400, gengate.EInvalid, gengate.FieldType, "inputs"},
		{"missing modelId", map[string]any{"type": "image", "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldRequired, "modelId"},
		{"missing type", map[string]any{"modelId": "flux", "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldRequired, "type"},
		{"missing prompt", map[string]any{"type": "image", "modelId": "flux"}, nil, 400, gengate.EInvalid, gengate.FieldRequired, "prompt"},
		{"video without prompt", map[string]any{"type": "video", "modelId": "kling-2-1"}, nil, 400, gengate.EInvalid, gengate.FieldRequired, "prompt"},
		{"unknown model", map[string]any{"type": "image", "modelId": "dall-e-9", "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldValue, "modelId"},
		{"type/model mismatch", map[string]any{"type": "video", "modelId": "flux", "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldValue, "type"},
		{"bad type", map[string]any{"type": "audio", "modelId": "flux", "prompt": "x"}, nil, 400, gengate.EInvalid, gengate.FieldValue, "type"},
		{"unknown field", map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "colour": "red"}, nil, 400, gengate.EInvalid, gengate.FieldUnknown, "colour"},
		{"option the model cannot do: numOutputs", map[string]any{"type": "image", "modelId": "nano-banana", "prompt": "x", "numOutputs": 2}, nil, 400, gengate.EUnsupportedOption, gengate.FieldUnsupported, "numOutputs"},
		{"option the model cannot do: webp", map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "outputFormat": "webp"}, nil, 400, gengate.EUnsupportedOption, gengate.FieldUnsupported, "outputFormat"},
		{"option the model cannot do: aspect", map[string]any{"type": "image", "modelId": "gpt-image-2-5-flare", "prompt": "x", "aspectRatio": "21:9"}, nil, 400, gengate.EUnsupportedOption, gengate.FieldUnsupported, "aspectRatio"},
		{"numOutputs out of range", map[string]any{"type": "image", "modelId": "flux", "prompt": "x", "numOutputs": 5}, nil, 400, gengate.EUnsupportedOption, gengate.FieldUnsupported, "numOutputs"},
		{"prompt too long", map[string]any{"type": "image", "modelId": "flux", "prompt": prompt(32001)}, nil, 400, gengate.EInvalid, gengate.FieldTooLong, "prompt"},
		{"prompt too long in runes", map[string]any{"type": "image", "modelId": "flux", "prompt": strings.Repeat("é", 32001)}, nil, 400, gengate.EInvalid, gengate.FieldTooLong, "prompt"},
		{"body over 32 MiB", over32MiB, nil, 413, gengate.ETooLarge, "", ""},
		{"Content-Type text/plain", map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Content-Type": "text/plain"}, 415, gengate.EUnsupportedMedia, "", ""},
		{"Content-Type form", map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, gengate.EUnsupportedMedia, "", ""},
		{"no Content-Type", map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Content-Type": ""}, 415, gengate.EUnsupportedMedia, "", ""},
		{"Idempotency-Key too long", map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 400, gengate.EInvalid, gengate.FieldValue, "Idempotency-Key"},
		{"Idempotency-Key not ASCII", map[string]any{"type": "image", "modelId": "flux", "prompt": "x"}, map[string]string{"Idempotency-Key": "ключ"}, 400, gengate.EInvalid, gengate.FieldValue, "Idempotency-Key"},
		{"SSRF loopback with a real PNG", photo(fmt.Sprintf("http://127.0.0.1:%d/x.png", port)), nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"SSRF metadata", photo("http://169.254.169.254/latest"), nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"SSRF private", photo("http://10.0.0.1/x.png"), nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"SSRF localhost", photo(fmt.Sprintf("http://localhost:%d/", port)), nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"SSRF IPv6 loopback", photo(fmt.Sprintf("http://[::1]:%d/x.png", port)), nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"SSRF on an optional input", map[string]any{"type": "image", "modelId": "flux-kontext-pro", "prompt": "x", "imageUrl": "http://10.0.0.1/x.png"}, nil, 400, gengate.EInvalid, gengate.InputNotAllowed, "imageUrl"},
		{"not a URL", photo("/etc/passwd"), nil, 400, gengate.EInvalid, gengate.FieldValue, "imageUrl"},
		{"garbage data: URL", photo(dataURL("image/png", []byte("this is not an image at all"))), nil, 400, gengate.EInvalid, gengate.InputNotSupported, "imageUrl"},
		{"truncated PNG", photo(dataURL("image/png", png[:len(png)/2])), nil, 400, gengate.EInvalid, gengate.InputUndecodable, "imageUrl"},
		{"PNG header only", photo(dataURL("image/png", png[:8])), nil, 400, gengate.EInvalid, gengate.InputUndecodable, "imageUrl"},
		{"HTML", photo("data:text/html," + url.PathEscape("<!doctype html><html><body>hi</body></html>")), nil, 400, gengate.EInvalid, gengate.InputNotSupported, "imageUrl"},
		{"insufficient credits", map[string]any{"type": "image", "modelId": "gpt-image-2-5-flare", "prompt": "x", "numOutputs": 4}, nil, 402, gengate.EInsufficient, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tasks, balance, files := s.taskCount(), s.balance(acct), s.fileCount()
			c := call{Method: "POST", Path: "/api/v1/generate", Key: key, Body: tc.body, Header: tc.header}
			r := s.do(c)
			wantProblem(t, r, tc.status, tc.code)
			if tc.fieldCode != "" && fieldCode(r) != tc.fieldCode {
				t.Errorf("errors[0].code %q, want %q: %s", fieldCode(r), tc.fieldCode, r.Body)
			}
			if tc.field != "" {
				errs, _ := r.JSON["errors"].([]any)
				if len(errs) == 0 || errs[0].(map[string]any)["field"] != tc.field {
					t.Errorf("errors[0].field is not %q: %s", tc.field, r.Body)
				}
			}
			if tc.status == http.StatusPaymentRequired {
				if r.num("requiredCredits") != 200 || r.num("remainingCredits") != balance {
					t.Errorf("402 requiredCredits %d remainingCredits %d, want 200 and %d", r.num("requiredCredits"), r.num("remainingCredits"), balance)
				}
			}
			if len(r.Body) > 4096 {
				t.Errorf("problem body is %d bytes; it echoes the request", len(r.Body))
			}
			if s.taskCount() != tasks || s.balance(acct) != balance || s.fileCount() != files {
				t.Errorf("refused request stored something: tasks %d→%d, balance %d→%d, files %d→%d",
					tasks, s.taskCount(), balance, s.balance(acct), files, s.fileCount())
			}
			// The server still serves a good request.
			good := s.generate(key, map[string]any{"type": "image", "modelId": "z-image-turbo", "prompt": "ok"}, async)
			wantAccepted(t, good)
			if s.taskCount() != tasks+1 || s.balance(acct) != balance-1 {
				t.Errorf("good request after: tasks %d, balance %d", s.taskCount(), s.balance(acct))
			}
		})
	}
	s.ledgerCheck(acct)
}

// TestInputFetchedWhenAllowed is the other half of the SSRF cases: the same
// loopback server, allowed by the operator, serves an image that is
// accepted and an HTML page that is refused for its content.
func TestInputFetchedWhenAllowed(t *testing.T) {
	t.Parallel()
	png := testPNG(t, 40, 40)
	img := serveBytes(t, "image/png", png)
	html := serveBytes(t, "text/html", []byte("<!doctype html><html><body>not an image</body></html>"))
	s := newStack(t, stackOpts{allowPrivate: true, noWorkers: true})
	acct, key := s.account(100)
	wantAccepted(t, s.generate(key, map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": img.URL + "/x.png"}, async))
	r := s.generate(key, map[string]any{"type": "image", "modelId": "photo-restoration", "imageUrl": html.URL + "/page"}, async)
	wantProblem(t, r, http.StatusBadRequest, gengate.EInvalid)
	if fieldCode(r) != gengate.InputNotSupported {
		t.Errorf("errors[0].code %q, want %s", fieldCode(r), gengate.InputNotSupported)
	}
	if s.taskCount() != 1 || s.balance(acct) != 96 {
		t.Errorf("%d tasks, balance %d; want 1, 96", s.taskCount(), s.balance(acct))
	}
}

// TestConcurrentDebits is the headline: 24 requests of 4 credits at once
// on a balance of 40 → exactly 10 accepted, 14 refused, balance 0, and the
// ledger explains it.
func TestConcurrentDebits(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(40)
		const n = 24
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]response, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = s.send(call{Method: "POST", Path: "/api/v1/generate", Key: key,
					Body: map[string]any{"type": "image", "modelId": "flux", "prompt": fmt.Sprint("race ", i)}, Header: async})
			}()
		}
		close(start)
		wg.Wait()
		status := map[int]int{}
		for i, r := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			status[r.Status]++
			switch r.Status {
			case http.StatusAccepted:
				wantAccepted(t, r)
			case http.StatusPaymentRequired:
				wantProblem(t, r, http.StatusPaymentRequired, gengate.EInsufficient)
				if r.num("requiredCredits") != 4 || r.num("remainingCredits") >= 4 {
					t.Errorf("402 body: %s", r.Body)
				}
			default:
				t.Errorf("unexpected %s", r)
			}
		}
		if status[http.StatusAccepted] != 10 || status[http.StatusPaymentRequired] != 14 {
			t.Errorf("statuses %v, want 10×202 and 14×402", status)
		}
		if b := s.balance(acct); b != 0 {
			t.Errorf("balance %d, want 0", b)
		}
		if s.taskCount() != 10 {
			t.Errorf("%d tasks, want 10", s.taskCount())
		}
		entries := s.ledgerCheck(acct)
		if c := charges(entries, "charge"); len(c) != 10 {
			t.Errorf("%d charges, want 10", len(c))
		}
	})
}
