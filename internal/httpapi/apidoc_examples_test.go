package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// docBlock is one fenced block of docs/api.md: its info string ("json",
// "go" or ""), the heading it is under, and its text.
type docBlock struct {
	lang, heading, text string
	line                int
}

// apiDocBlocks returns every fenced block of the markdown text, in order.
func apiDocBlocks(doc string) []docBlock {
	var out []docBlock
	var cur *docBlock
	heading := ""
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```"):
			cur = &docBlock{lang: strings.TrimPrefix(line, "```"), heading: heading, line: i + 1}
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	return out
}

// apiDocCheck says what one block of docs/api.md illustrates and how the
// test checks it.
type apiDocCheck struct {
	heading string // the heading the block is under
	lang    string
	// For a JSON body: the answer of method path with status, validated
	// against the OpenAPI document like every real answer.
	method, path string
	status       int
	// check, for the other blocks (headers, curl, Go, the webhook payload).
	check func(t *testing.T, s *stack, key string, b docBlock)
}

// apiDocExamples covers the fenced blocks of docs/api.md one by one, in
// order. A block added to docs/api.md without an entry here fails
// TestAPIDocExamples, so every example is checked.
var apiDocExamples = []apiDocCheck{
	{heading: "API reference", lang: "", check: checkDocAuthHeaders},
	{heading: "GET /api/generation/jobs/{jobId}", lang: "json", method: "GET", path: "/api/generation/jobs/0b6f", status: 200},
	{heading: "Webhooks", lang: "json", check: checkDocWebhookPayload},
	{heading: "Webhooks", lang: "go", check: goBlockCompiles(`
import (
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func verify(secret string, body []byte, r *http.Request) {
%s}
`)},
	{heading: "Webhook endpoints", lang: "json", method: "POST", path: "/api/v1/webhooks", status: 201},
	{heading: "Webhook endpoints", lang: "json", method: "GET", path: "/api/v1/webhooks/ep_0c6f/attempts", status: 200},
	{heading: "GET /api/v1/models", lang: "json", method: "GET", path: "/api/v1/models", status: 200},
	{heading: "POST /api/v1/files", lang: "", check: checkDocUploadCurl},
	{heading: "POST /api/v1/files", lang: "json", method: "POST", path: "/api/v1/files", status: 201},
	{heading: "OpenAI-compatible images: POST /v1/images/generations, POST /v1/images/edits", lang: "go", check: goBlockCompiles(`
import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func generate(ctx context.Context, key string) {
%s	_, _ = res, err
}
`)},
	{heading: "GET /healthz, GET /readyz, GET /metrics", lang: "json", method: "GET", path: "/readyz", status: 200},
	{heading: "GET /healthz, GET /readyz, GET /metrics", lang: "json", check: checkDocReadyMember},
	{heading: "Authentication: API key or session", lang: "json", method: "GET", path: "/api/v1/auth/session", status: 200},
	{heading: "GET /api/v1/account", lang: "json", method: "GET", path: "/api/v1/account", status: 200},
	{heading: "GET /api/v1/account/sessions?limit=&cursor=", lang: "json", method: "GET", path: "/api/v1/account/sessions", status: 200},
	{heading: "GET /api/v1/account/ledger?limit=&cursor=", lang: "json", method: "GET", path: "/api/v1/account/ledger", status: 200},
	{heading: "Errors", lang: "json", method: "POST", path: "/api/v1/generate", status: 402},
}

// TestAPIDocExamples checks every fenced block of docs/api.md against what
// it illustrates: a JSON body against the OpenAPI document's schema of its
// operation and status (a "..." or "…" is a placeholder for a string), the
// header and curl examples by running them against a real server, the Go
// examples by building them in a package of this module.
func TestAPIDocExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := apiDocBlocks(string(data))
	if len(blocks) != len(apiDocExamples) {
		t.Errorf("docs/api.md has %d fenced blocks, apiDocExamples covers %d: add an entry for each new example", len(blocks), len(apiDocExamples))
	}
	s := newStack(t, stackOpts{})
	_, key := s.account(100)
	for i, b := range blocks {
		if i >= len(apiDocExamples) {
			t.Errorf("docs/api.md:%d (block %d, under %q) is checked by nothing", b.line, i, b.heading)
			continue
		}
		c := apiDocExamples[i]
		name := fmt.Sprintf("%d_line%d", i, b.line)
		t.Run(name, func(t *testing.T) {
			if b.heading != c.heading || b.lang != c.lang {
				t.Fatalf("docs/api.md:%d is a %q block under %q; entry %d expects a %q block under %q", b.line, b.lang, b.heading, i, c.lang, c.heading)
			}
			if c.check != nil {
				c.check(t, s, key, b)
				return
			}
			if msg := validateDocBody(c.method, c.path, c.status, []byte(b.text)); msg != "" {
				t.Errorf("docs/api.md:%d is not a %s %s %d answer: %s\n%s", b.line, c.method, c.path, c.status, msg, b.text)
			}
		})
	}
}

// validateDocBody validates an example body as the answer of method path
// with status, the way validateAnswer does a real one.
func validateDocBody(method, path string, status int, body []byte) string {
	if !json.Valid(body) {
		var v any
		return "not JSON: " + fmt.Sprint(json.Unmarshal(body, &v))
	}
	req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
	ct := "application/json"
	if status >= 400 {
		ct = "application/problem+json"
	}
	v, err := strictSpecValidator()
	if err != nil {
		return "the strict OpenAPI document does not load: " + err.Error()
	}
	resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Message+": "+e.Reason)
			for _, se := range e.SchemaValidationErrors {
				msgs = append(msgs, se.Reason)
			}
		}
		return strings.Join(msgs, "; ")
	}
	return ""
}

// strictSpecValidator validates against the OpenAPI document with every
// object schema that lists its properties closed (additionalProperties:
// false): an example may show only members the document names, so a
// misspelt or stale member fails; real answers are validated against it
// too (validateAnswer).
var strictSpecValidator = sync.OnceValues(func() (validator.Validator, error) {
	c, err := gengate.DefaultCatalog()
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(httpapi.OpenAPI(c))
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	closeObjects(doc["components"])
	closeObjects(doc["paths"])
	data, _ = json.Marshal(doc)
	d, err := libopenapi.NewDocument(data)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%v", errs)
	}
	return v, nil
})

// closeObjects sets additionalProperties: false on every schema below v
// that has properties and says nothing of others.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok && v["type"] == "object" {
			if _, set := v["additionalProperties"]; !set {
				v["additionalProperties"] = false
			}
			for _, p := range props {
				closeObjects(p)
			}
		}
		for k, e := range v {
			if k != "properties" {
				closeObjects(e)
			}
		}
	case []any:
		for _, e := range v {
			closeObjects(e)
		}
	}
}

// checkDocAuthHeaders: each header line authenticates a real request.
func checkDocAuthHeaders(t *testing.T, s *stack, key string, b docBlock) {
	lines := strings.Split(strings.TrimSpace(b.text), "\n")
	if len(lines) != 2 {
		t.Fatalf("docs/api.md:%d shows %d header lines, the test knows 2", b.line, len(lines))
	}
	for _, line := range lines {
		name, value, _ := strings.Cut(line, ":")
		value, _, _ = strings.Cut(strings.TrimSpace(value), "  ") // before the "(recommended)"
		value = strings.Replace(value, "gg_live_...", key, 1)
		if !strings.Contains(value, key) {
			t.Fatalf("docs/api.md:%d: %q shows no gg_live_... key", b.line, line)
		}
		r := s.do(call{Method: "GET", Path: "/api/v1/account", Header: map[string]string{name: value}})
		if r.Status != 200 {
			t.Errorf("with %s: %s the account answered %s", name, value, r)
		}
	}
}

// checkDocWebhookPayload: the event payload, with the task record example
// for its data, has an event type, an RFC 3339 time and a task record, and
// nothing else.
func checkDocWebhookPayload(t *testing.T, s *stack, key string, b docBlock) {
	const placeholder = "{ ...the task record of GET /api/generation/jobs/{jobId}... }"
	if !strings.Contains(b.text, placeholder) {
		t.Fatalf("docs/api.md:%d: the payload's data is no longer %q", b.line, placeholder)
	}
	var payload struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	// data is the task record: the example of GET /api/generation/jobs/{jobId}.
	var record string
	for _, o := range apiDocBlocks(readAPIDoc(t)) {
		if o.heading == "GET /api/generation/jobs/{jobId}" && o.lang == "json" {
			record = o.text
			break
		}
	}
	dec := json.NewDecoder(strings.NewReader(strings.Replace(b.text, placeholder, record, 1)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&payload); err != nil {
		t.Fatalf("docs/api.md:%d: %v\n%s", b.line, err, b.text)
	}
	if !slices.Contains(gengate.EventTypes, payload.Type) {
		t.Errorf("docs/api.md:%d: type %q is none of %v", b.line, payload.Type, gengate.EventTypes)
	}
	if _, err := time.Parse(time.RFC3339Nano, payload.Timestamp); err != nil {
		t.Errorf("docs/api.md:%d: timestamp: %v", b.line, err)
	}
	if msg := validateDocBody("GET", "/api/generation/jobs/0b6f", 200, payload.Data); msg != "" {
		t.Errorf("docs/api.md:%d: data is not a task record: %s", b.line, msg)
	}
}

// checkDocUploadCurl runs the upload curl with bash against the stack,
// photo.png being a real PNG, and validates its answer; the answer has the
// members the following example shows.
func checkDocUploadCurl(t *testing.T, s *stack, key string, b docBlock) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required under CI: %v", tool, err)
			}
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.png"), pic.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := strings.ReplaceAll(strings.TrimSpace(b.text), "http://127.0.0.1:8080", s.URL)
	if cmd == strings.TrimSpace(b.text) {
		t.Fatalf("docs/api.md:%d: the curl names no http://127.0.0.1:8080", b.line)
	}
	sh := exec.Command("bash", "-c", cmd+` -i`)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "KEY="+key)
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/api.md:%d: %v\n%s", b.line, err, out)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
	if err != nil {
		t.Fatalf("docs/api.md:%d: the curl's answer is no HTTP answer: %v\n%s", b.line, err, out)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 {
		t.Fatalf("docs/api.md:%d: the curl answered %d: %s", b.line, resp.StatusCode, body)
	}
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/files", nil)
	if msg := validateAnswer(req, resp, body); msg != "" {
		t.Errorf("the curl's answer: %s", msg)
	}
	var got map[string]any
	_ = json.Unmarshal(body, &got)
	members := regexp.MustCompile(`"(\w+)":`)
	next := apiDocBlocks(readAPIDoc(t))
	for i, nb := range next {
		if nb.line == b.line && i+1 < len(next) {
			for _, m := range members.FindAllStringSubmatch(next[i+1].text, -1) {
				if _, ok := got[m[1]]; !ok {
					t.Errorf("the curl's answer has no %q, docs/api.md:%d shows it: %s", m[1], next[i+1].line, body)
				}
			}
		}
	}
}

func readAPIDoc(t *testing.T) string {
	data, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goBlockCompiles returns a check that puts the block, indented, into the
// body of wrapper (after "package docexample") and runs go vet on it as a
// package of this module, so it is built with the module's versions.
func goBlockCompiles(wrapper string) func(t *testing.T, s *stack, key string, b docBlock) {
	return func(t *testing.T, s *stack, key string, b docBlock) {
		goBin, err := exec.LookPath("go")
		if err != nil {
			t.Skipf("go not installed: %v", err)
		}
		var body strings.Builder
		for _, line := range strings.SplitAfter(b.text, "\n") {
			if line != "" {
				body.WriteString("\t" + line)
			}
		}
		src := "package docexample\n" + fmt.Sprintf(wrapper, body.String())
		// Inside the module (testdata: outside ./... patterns), removed after.
		if _, err := os.Stat("testdata"); os.IsNotExist(err) {
			if err := os.Mkdir("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove("testdata") })
		}
		dir, err := os.MkdirTemp("testdata", "docexample")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "example.go"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		vet := exec.Command(goBin, "vet", "./"+dir)
		if out, err := vet.CombinedOutput(); err != nil {
			t.Errorf("docs/api.md:%d does not build: %v\n%s\n%s", b.line, err, out, src)
		}
	}
}

// checkDocReadyMember checks a block that shows one member of the /readyz
// answer ("routes": {...}) as that member of a whole answer.
func checkDocReadyMember(t *testing.T, _ *stack, _ string, b docBlock) {
	body := []byte(`{"status": "ready", ` + strings.TrimSpace(b.text) + `}`)
	if msg := validateDocBody("GET", "/readyz", 200, body); msg != "" {
		t.Errorf("docs/api.md:%d is not a member of a GET /readyz 200 answer: %s\n%s", b.line, msg, b.text)
	}
}
