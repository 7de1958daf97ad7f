package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/google/googletest"
)

// TestVertexProvider: providers.vertex in --config, with a service account
// key file, serves Imagen through Vertex AI (the default route now starts
// there), its check at start fetches a token (ok), a second Vertex
// provider whose key the token endpoint refuses is reported key_refused,
// and neither the key file's private key nor an access token is logged.
func TestVertexProvider(t *testing.T) {
	v := googletest.NewVertex(t)
	wrong := googletest.CredentialsSignedWithAnotherKey(t, v.TokenURL())
	vertexYAML := func(name, creds string) string {
		return fmt.Sprintf("  %s:\n    type: vertex\n    project: %s\n    location: %s\n    credentialsFile: %s\n    baseUrl: %s\n",
			name, v.Project(), v.Location(), creds, v.URL())
	}
	s := providerServer(t, vertexYAML("vertex", v.Key())+vertexYAML("vertex-b", wrong), nil)

	var providers map[string]any
	poll(t, 30*time.Second, 20*time.Millisecond, "every provider checked", func() bool {
		r := mustAPI(t, s.base, "GET", "/readyz", "", nil, nil)
		providers, _ = r.json["providers"].(map[string]any)
		for _, p := range providers {
			if p.(map[string]any)["status"] == "checking" {
				return false
			}
		}
		return len(providers) == 2
	})
	for name, want := range map[string]string{"vertex": "ok", "vertex-b": "key_refused"} {
		if p, _ := providers[name].(map[string]any); p["status"] != want {
			t.Errorf("%s: %v, want %s", name, p, want)
		}
	}

	body := map[string]any{"type": "image", "modelId": "imagen-4-ultra", "prompt": "a lighthouse at dusk", "aspectRatio": "16:9"}
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, body, nil)
	if images, _ := r.json["images"].([]any); r.status != 200 || len(images) != 1 {
		t.Fatalf("imagen-4-ultra on vertex: %d %v", r.status, r.json)
	}
	if v.Submissions() != 1 {
		t.Fatalf("%d submissions reached Vertex AI", v.Submissions())
	}

	log := s.stderr.String()
	key, err := os.ReadFile(v.Key())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log, "PRIVATE KEY") || strings.Contains(log, string(key[len(key)/2:len(key)/2+40])) {
		t.Error("the service account key is in the log")
	}
	for _, tok := range v.UsedTokens() {
		if strings.Contains(log, tok) {
			t.Error("an access token is in the log")
		}
	}
}
