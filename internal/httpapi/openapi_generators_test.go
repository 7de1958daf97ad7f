package httpapi_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/httpapi"
)

// The OpenAPI document is taken unchanged by code generators: these tests
// check what generators need (an operationId on every operation, servers,
// webhooks, one type per schema besides "null") and run two real ones,
// oapi-codegen (Go) and openapi-typescript, on the served document.

// Versions of the generators the tests run; both are on their public
// registries (the Go module proxy, npm).
const (
	oapiCodegenVersion       = "v2.8.2"
	openapiTypescriptVersion = "7.13.0"
	typescriptVersion        = "5.9.3"
)

// servedOpenAPI is the document as GET /api/v1/openapi.json serves it.
func servedOpenAPI(t *testing.T) ([]byte, map[string]any) {
	t.Helper()
	s := newStack(t, stackOpts{noWorkers: true})
	r := s.do(call{Method: "GET", Path: "/api/v1/openapi.json"})
	wantStatus(t, r, 200)
	return r.Body, r.JSON
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// TestOpenAPIForGenerators: the served document has servers, a webhooks
// section with each event type's payload, a unique operationId on every
// operation (paths and webhooks) and no schema typed with more than one
// type besides "null". Routes added later are covered: the test walks every
// operation the document has.
func TestOpenAPIForGenerators(t *testing.T) {
	_, doc := servedOpenAPI(t)
	if servers, _ := doc["servers"].([]any); len(servers) == 0 {
		t.Error("no servers")
	}
	webhooks, _ := doc["webhooks"].(map[string]any)
	for _, et := range gengate.EventTypes {
		item, ok := webhooks[et].(map[string]any)
		if !ok {
			t.Errorf("webhooks has no %s", et)
			continue
		}
		post, _ := item["post"].(map[string]any)
		body, _ := post["requestBody"].(map[string]any)
		schema, _ := jsonPath(body, "content", "application/json", "schema").(map[string]any)
		if schema == nil {
			t.Errorf("webhook %s has no payload schema", et)
		}
	}
	ids := map[string]string{}
	count := 0
	check := func(where string, item map[string]any) {
		for _, m := range httpMethods {
			o, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			count++
			name := strings.ToUpper(m) + " " + where
			id, _ := o["operationId"].(string)
			if id == "" {
				t.Errorf("%s has no operationId", name)
				continue
			}
			if prev, dup := ids[id]; dup {
				t.Errorf("operationId %q on both %s and %s", id, prev, name)
			}
			ids[id] = name
		}
	}
	for p, item := range doc["paths"].(map[string]any) {
		check(p, item.(map[string]any))
	}
	for w, item := range webhooks {
		check("webhook "+w, item.(map[string]any))
	}
	if count < 50 {
		t.Errorf("only %d operations walked", count)
	}
	var multi []string
	walkSchemas(doc, "#", func(at string, node map[string]any) {
		types, ok := node["type"].([]any)
		if !ok {
			return
		}
		n := 0
		for _, ty := range types {
			if ty != "null" {
				n++
			}
		}
		if n > 1 {
			multi = append(multi, fmt.Sprintf("%s: %v", at, types))
		}
	})
	sort.Strings(multi)
	for _, m := range multi {
		t.Errorf("schema with more than one type besides null: %s", m)
	}
}

// TestOpenAPIDocumentsEveryRoute: every operationId names an operation of
// the server's own table (httpapi.OperationIDs), so a route a later change
// adds without a name in that table is caught here.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	_, doc := servedOpenAPI(t)
	named := httpapi.OperationIDs()
	for p, item := range doc["paths"].(map[string]any) {
		for _, m := range httpMethods {
			if _, ok := item.(map[string]any)[m]; !ok {
				continue
			}
			key := strings.ToUpper(m) + " " + p
			if _, ok := named[key]; !ok {
				t.Errorf("%s has no name in openapi_ids.go's table: add one", key)
			}
		}
	}
}

func jsonPath(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// walkSchemas calls f on every JSON object of the document.
func walkSchemas(v any, at string, f func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(at, v)
		for k, c := range v {
			walkSchemas(c, at+"/"+k, f)
		}
	case []any:
		for i, c := range v {
			walkSchemas(c, fmt.Sprintf("%s/%d", at, i), f)
		}
	}
}

// run runs a command in dir and returns its combined output.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestOpenAPIGoClient: oapi-codegen makes a Go client (types and client)
// from the served document unchanged, and it compiles. Skipped, with a
// message, only when the generator's module cannot be fetched.
func TestOpenAPIGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a generated client")
	}
	body, _ := servedOpenAPI(t)
	dir := t.TempDir()
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	mod := "github.com/oapi-codegen/oapi-codegen/v2@" + oapiCodegenVersion
	if out, err := runIn(t, dir, env, "go", "mod", "download", mod); err != nil {
		t.Skipf("oapi-codegen %s cannot be fetched: %v\n%s", oapiCodegenVersion, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module gengateclient\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, dir, env, "go", "run", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@"+oapiCodegenVersion,
		"-generate", "types,client", "-package", "gengateclient", "-o", "client.gen.go", "openapi.json"); err != nil {
		t.Fatalf("oapi-codegen refused the document: %v\n%s", err, out)
	}
	if out, err := runIn(t, dir, env, "go", "mod", "tidy"); err != nil {
		t.Skipf("the generated client's dependencies cannot be fetched: %v\n%s", err, out)
	}
	if out, err := runIn(t, dir, env, "go", "build", "./..."); err != nil {
		t.Fatalf("the generated Go client does not compile: %v\n%s", err, out)
	}
	src, _ := os.ReadFile(filepath.Join(dir, "client.gen.go"))
	for _, fn := range []string{"func (c *Client) Generate(", "func (c *Client) GetJob(", "func (c *Client) CreateImageEdit"} {
		if !strings.Contains(string(src), fn) {
			t.Errorf("the generated client lacks %s", fn)
		}
	}
}

// TestOpenAPITypeScript: openapi-typescript makes TypeScript types from the
// served document unchanged, and tsc checks them. Skipped, with a message,
// where node and npm are not installed or the packages cannot be fetched.
func TestOpenAPITypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs openapi-typescript")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx (node and npm) is not installed")
	}
	body, _ := servedOpenAPI(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"npm_config_update_notifier=false", "npm_config_cache=" + filepath.Join(os.TempDir(), "gengate-npm-cache")}
	if out, err := runIn(t, dir, env, "npx", "--yes", "openapi-typescript@"+openapiTypescriptVersion, "--version"); err != nil {
		t.Skipf("openapi-typescript %s cannot be fetched: %v\n%s", openapiTypescriptVersion, err, out)
	}
	if out, err := runIn(t, dir, env, "npx", "--yes", "openapi-typescript@"+openapiTypescriptVersion, "openapi.json", "-o", "schema.d.ts"); err != nil {
		t.Fatalf("openapi-typescript refused the document: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"/api/v1/generate"`, "webhooks", "generate: {"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("schema.d.ts lacks %s", want)
		}
	}
	if out, err := runIn(t, dir, env, "npx", "--yes", "-p", "typescript@"+typescriptVersion, "tsc", "--noEmit", "--strict", "schema.d.ts"); err != nil {
		if strings.Contains(out, "ERR!") && !strings.Contains(out, "error TS") {
			t.Skipf("typescript %s cannot be fetched: %v\n%s", typescriptVersion, err, out)
		}
		t.Fatalf("tsc refuses the generated types: %v\n%s", err, out)
	}
}

var _ = json.Marshal
