package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPriceOverrides: --prices changes what models cost, in the listing and
// in the charge; a bad file stops the server from starting.
func TestPriceOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, bad := range []string{
		write("unknown.json", `{"prices": {"flux": 5, "no-such-model": 1}}`),
		write("negative.json", `{"prices": {"flux": -1}}`),
		write("typo.json", `{"price": {"flux": 5}}`),
		write("broken.json", `{"prices": `),
		filepath.Join(dir, "missing.json"),
	} {
		var stdout, stderr bytes.Buffer
		data := filepath.Join(t.TempDir(), "data")
		err := run(context.Background(), []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--prices", bad}, noEnv, &stdout, &stderr)
		if err == nil || strings.Contains(stdout.String(), "listening") {
			t.Errorf("--prices %s: server started (err %v)", filepath.Base(bad), err)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("--prices %s: the refused start left a data directory behind (%v)", filepath.Base(bad), err)
		}
	}

	good := write("good.json", `{"prices": {"flux": 5, "openai-sora-2": 60}}`)
	s := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--prices", good)
	models := mustAPI(t, s.base, "GET", "/api/v1/models", s.key, nil, nil)
	wantCode(t, models, http.StatusOK)
	credits := map[string]float64{}
	notes := map[string]string{}
	for _, m := range models.json["models"].([]any) {
		m := m.(map[string]any)
		credits[m["id"].(string)] = m["credits"].(float64)
		notes[m["id"].(string)], _ = m["pricing"].(map[string]any)["note"].(string)
	}
	// The listing's note never quotes the figure the override replaced.
	if strings.Contains(notes["openai-sora-2"], "50 credits") || !strings.Contains(notes["openai-sora-2"], "60 credits") {
		t.Errorf("openai-sora-2 pricing note after the override: %q", notes["openai-sora-2"])
	}
	if credits["flux"] != 5 || credits["openai-sora-2"] != 60 || credits["flux-schnell"] != 2 {
		t.Fatalf("listed credits flux %v, sora %v, flux-schnell %v; want 5, 60, 2", credits["flux"], credits["openai-sora-2"], credits["flux-schnell"])
	}
	r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key,
		map[string]any{"type": "image", "modelId": "flux", "prompt": "priced", "numOutputs": 3}, nil)
	wantCode(t, r, http.StatusOK)
	if got := r.num("remainingCredits"); got != 1000-15 {
		t.Fatalf("remainingCredits %d after 3 flux images at 5, want %d", got, 1000-15)
	}
}
