package main

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestAPIDocModelsExample: the first model of docs/api.md's GET
// /api/v1/models example is exactly what a fresh server lists for it, so the
// example cannot drift from the listing.
func TestAPIDocModelsExample(t *testing.T) {
	data, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## GET /api/v1/models\n")
	if !ok {
		t.Fatal("docs/api.md has no GET /api/v1/models section")
	}
	_, block, _ := strings.Cut(section, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	var doc struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal([]byte(block), &doc); err != nil || len(doc.Models) == 0 {
		t.Fatalf("the models example is not a listing with a model (%v):\n%s", err, block)
	}
	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	r := mustAPI(t, s.base, "GET", "/api/v1/models", s.key, nil, nil)
	wantCode(t, r, http.StatusOK)
	want := doc.Models[0]
	for _, m := range r.json["models"].([]any) {
		if m := m.(map[string]any); m["id"] == want["id"] {
			if !reflect.DeepEqual(m, want) {
				got, _ := json.MarshalIndent(m, "", "  ")
				t.Errorf("docs/api.md shows %v for %v; the server lists:\n%s", want, want["id"], got)
			}
			return
		}
	}
	t.Errorf("the server does not list %v", want["id"])
}
