package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// Every answer a test of this package reads through stack.send is
// validated against the OpenAPI document (libopenapi-validator): its status
// must be documented for the path and method, and its body must match the
// schema, with every object schema that lists its members closed
// (strictSpecValidator): an answer may carry only members the document
// names, so a member the server adds, or one the document misspells,
// fails the test that sees it. Answers for paths or methods the document does not have (the
// 404 of an unknown path, a 405) are what the document leaves out on
// purpose.

var (
	specOnce sync.Once
	specVal  validator.Validator
	specErr  error
	seenMu   sync.Mutex
	seen     = map[string]bool{} // "METHOD /path status"
)

func specValidator() (validator.Validator, error) {
	specOnce.Do(func() {
		c, err := gengate.DefaultCatalog()
		if err != nil {
			specErr = err
			return
		}
		data, _ := json.Marshal(httpapi.OpenAPI(c))
		doc, err := libopenapi.NewDocument(data)
		if err != nil {
			specErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			specErr = fmt.Errorf("%v", errs)
			return
		}
		specVal = v
	})
	return specVal, specErr
}

// validateAnswer checks one real answer against the document; it returns
// "" when it conforms or is out of the document's scope.
func validateAnswer(req *http.Request, resp *http.Response, body []byte) string {
	v, err := strictSpecValidator()
	if err != nil {
		return "the OpenAPI document does not load: " + err.Error()
	}
	if msg := checkTimestamps(body); msg != "" {
		return msg
	}
	r := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	ok, errs := v.ValidateHttpResponse(req, r)
	if ok {
		if tmpl := specPath(req); tmpl != "" {
			seenMu.Lock()
			seen[fmt.Sprintf("%s %s %d", req.Method, tmpl, resp.StatusCode)] = true
			seenMu.Unlock()
		}
		return ""
	}
	var msgs []string
	for _, e := range errs {
		if e.ValidationType == "path" && (resp.StatusCode == 404 || resp.StatusCode == 405) {
			return "" // an unknown path or method: outside the document
		}
		msgs = append(msgs, e.Message+": "+e.Reason)
		for _, se := range e.SchemaValidationErrors {
			msgs = append(msgs, se.Reason)
		}
	}
	return strings.Join(msgs, "; ")
}

// oneTimeForm is the one form of a time in an answer (gengate.TimeFormat);
// looksLikeTime is any string that begins as an RFC 3339 time does.
var (
	oneTimeForm   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	looksLikeTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:`)
)

// checkTimestamps walks a JSON answer: every string that is a time must be
// in the one form (RFC 3339, UTC, milliseconds), and so must every string
// member named as a time (…At, …_at, timestamp). It returns "" when all
// are, or names the first that is not.
func checkTimestamps(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var walk func(path string, v any) string
	walk = func(path string, v any) string {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				s, isString := e.(string)
				named := strings.HasSuffix(k, "At") || strings.HasSuffix(k, "_at") || k == "timestamp"
				if isString && (named || looksLikeTime.MatchString(s)) && !oneTimeForm.MatchString(s) {
					return fmt.Sprintf("time %s.%s is %q, not in the one form 2006-01-02T15:04:05.000Z", path, k, s)
				}
				if msg := walk(path+"."+k, e); msg != "" {
					return msg
				}
			}
		case []any:
			for i, e := range x {
				if s, ok := e.(string); ok && looksLikeTime.MatchString(s) && !oneTimeForm.MatchString(s) {
					return fmt.Sprintf("time %s[%d] is %q, not in the one form 2006-01-02T15:04:05.000Z", path, i, s)
				}
				if msg := walk(fmt.Sprintf("%s[%d]", path, i), e); msg != "" {
					return msg
				}
			}
		}
		return ""
	}
	return walk("", v)
}

// specPath is the document's path template matching the request: the
// template whose segments all match (a {param} matches any one segment),
// the one with the most literal segments when several do.
func specPath(req *http.Request) string {
	got := strings.Split(req.URL.Path, "/")
	best, bestLiterals := "", -1
	for _, tmpl := range documentedPaths() {
		want := strings.Split(tmpl, "/")
		if len(want) != len(got) {
			continue
		}
		literals := 0
		for i, w := range want {
			if strings.HasPrefix(w, "{") {
				if got[i] == "" {
					literals = -1
					break
				}
				continue
			}
			if w != got[i] {
				literals = -1
				break
			}
			literals++
		}
		if literals > bestLiterals {
			best, bestLiterals = tmpl, literals
		}
	}
	return best
}

var documentedPaths = sync.OnceValue(func() []string {
	c, _ := gengate.DefaultCatalog()
	var out []string
	for p := range httpapi.OpenAPI(c)["paths"].(map[string]any) {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
})

// TestOpenAPIDocument: the document is a valid OpenAPI 3.1 document, is
// served as it is built, has a schema per model, and the reference page
// shows every path and model.
func TestOpenAPIDocument(t *testing.T) {
	v, err := specValidator()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("document: %s: %s", e.Message, e.Reason)
		}
	}
	s := newStack(t, stackOpts{noWorkers: true})
	r := s.do(call{Method: "GET", Path: "/api/v1/openapi.json"})
	wantStatus(t, r, http.StatusOK)
	if r.str("openapi") != "3.1.0" {
		t.Errorf("openapi %q", r.str("openapi"))
	}
	schemas := r.JSON["components"].(map[string]any)["schemas"].(map[string]any)
	for _, m := range s.svc.Catalog.Models() {
		sc, ok := schemas["Generate_"+m.ID].(map[string]any)
		if !ok {
			t.Errorf("no schema for %s", m.ID)
			continue
		}
		props := sc["properties"].(map[string]any)
		for _, f := range m.Fields() {
			if _, ok := props[f.Name]; !ok && !strings.HasPrefix(f.Name, "inputs.") {
				t.Errorf("schema of %s lacks %s", m.ID, f.Name)
			}
		}
	}
	page := s.do(call{Method: "GET", Path: "/docs/api"})
	wantStatus(t, page, http.StatusOK)
	html := string(page.Body)
	for p := range r.JSON["paths"].(map[string]any) {
		if !strings.Contains(html, "<code>"+p+"</code>") {
			t.Errorf("/docs/api does not show %s", p)
		}
	}
	for _, m := range s.svc.Catalog.Models() {
		if !strings.Contains(html, `id="model-`+m.ID+`"`) {
			t.Errorf("/docs/api does not show model %s", m.ID)
		}
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "http://") || strings.Contains(html, "https://") {
		t.Error("/docs/api loads scripts or external assets")
	}
}

// TestOpenAPIRejectsUndocumented: the validation the suite relies on does
// catch an answer the document does not describe.
func TestOpenAPIRejectsUndocumented(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://x/api/v1/models", nil)
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}}
	if msg := validateAnswer(req, resp, []byte(`{"models": "not a list"}`)); msg == "" {
		t.Error("a models answer with a string for the list passed")
	}
	if msg := validateAnswer(req, resp, []byte(`{"models": [], "count": 0}`)); msg == "" {
		t.Error("a models answer with an undocumented member passed")
	}
	resp.StatusCode = 418
	if msg := validateAnswer(req, resp, []byte(`{}`)); msg == "" {
		t.Error("an undocumented status passed")
	}
}

// documentedStatuses lists "METHOD /path status" for every documented answer.
func documentedStatuses() []string {
	c, _ := gengate.DefaultCatalog()
	var out []string
	for p, item := range httpapi.OpenAPI(c)["paths"].(map[string]any) {
		for m, o := range item.(map[string]any) {
			for st := range o.(map[string]any)["responses"].(map[string]any) {
				out = append(out, fmt.Sprintf("%s %s %s", strings.ToUpper(m), p, st))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestMain runs the suite, then checks that every documented answer was
// produced by some test: when the whole package ran (no -run, -skip or
// -short, which leave tests out), a documented (path, method, status) no
// test produced fails the run. GENGATE_OPENAPI_COVERAGE=1 prints the
// figures in any run.
func TestMain(m *testing.M) {
	code := m.Run()
	documented := documentedStatuses()
	var missing []string
	for _, d := range documented {
		if !seen[d] {
			missing = append(missing, d)
		}
	}
	if os.Getenv("GENGATE_OPENAPI_COVERAGE") != "" {
		fmt.Printf("openapi: %d of %d documented answers produced by the suite; not produced:\n  %s\n",
			len(documented)-len(missing), len(documented), strings.Join(missing, "\n  "))
	}
	if code == 0 && wholeSuite() && len(missing) > 0 {
		fmt.Printf("FAIL: %d documented answers of internal/httpapi/openapi.go are produced by no test; "+
			"test them, or remove them from the document if the server can never give them:\n  %s\n",
			len(missing), strings.Join(missing, "\n  "))
		code = 1
	}
	os.Exit(code)
}

// wholeSuite reports whether this run ran every test of the package.
func wholeSuite() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}
