package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/openai/openaitest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestUpstreamCostShown: each task records what its provider charged —
// fal's list price × the megapixels of the images its result names,
// Replicate's predict_time × the route's hardware price per second,
// OpenAI's usage tokens × gpt-image-1's published token prices — and the
// operator's engines page (API and console) and gengate providers check
// show credits charged against upstream cost per model.
func TestUpstreamCostShown(t *testing.T) {
	chromiumPath(t)
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	oai := openaitest.New(t)
	fal.SetPrice("fal-ai/flux/dev", 0.025, "megapixels")
	dir := t.TempDir()
	cfg := writeConfig(t, "providers:\n"+falConfig(fal)+replicateConfig(rep)+
		fmt.Sprintf("  openai:\n    apiKey: %s\n    baseUrl: %s\n", oai.Key(), oai.URL())+
		"routes:\n  flux:\n    - provider: fal\n      model: fal-ai/flux/dev\n"+
		"  flux-schnell:\n    - provider: replicate\n      model: black-forest-labs/flux-schnell\n      hardware: gpu-l40s\n"+
		"  gpt-image-2:\n    - provider: openai\n      model: gpt-image-1\n")
	s := runServerEnv(t, nil, "--data", dir, "--addr", "127.0.0.1:0", "--config", cfg, "--sync-wait", "30s")

	charged := map[string]int{}
	balance := mustAPI(t, s.base, "GET", "/api/v1/account", s.key, nil, nil).num("remainingCredits")
	for _, model := range []string{"flux", "flux-schnell", "gpt-image-2"} {
		body := map[string]any{"type": "image", "modelId": model, "prompt": "a lighthouse at dusk", "aspectRatio": "16:9"}
		if model == "gpt-image-2" {
			body["aspectRatio"] = "1:1"
		}
		r := mustAPI(t, s.base, "POST", "/api/v1/generate", s.key, body, nil)
		if images, _ := r.json["images"].([]any); r.status != 200 || len(images) != 1 {
			t.Fatalf("%s: %d %v", model, r.status, r.json)
		}
		left := r.num("remainingCredits")
		charged[model], balance = balance-left, left
	}

	// fal: the fake's 16:9 images are 64×36 (its result says so), 0.002304
	// MP at 0.025 USD/megapixels; Replicate: 1.2 s
	// on gpu-l40s at 0.000975 USD/s; OpenAI: 50 text input tokens at 5
	// USD and 4160 output tokens at 40 USD per million.
	want := map[string]int64{"flux fal": 58, "flux-schnell replicate": 1170, "gpt-image-2 openai": 166650}
	var keyOut, keyErr bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--data", dir, "--account", s.account, "--operator", "--name", "ops"},
		noEnv, &keyOut, &keyErr); err != nil {
		t.Fatalf("keys create --operator: %v\n%s", err, keyErr.String())
	}
	op := lastLine(keyOut.String())
	r := mustAPI(t, s.base, "GET", "/api/v1/admin/engines", op, nil, nil)
	got := map[string]int64{}
	for _, e := range r.json["data"].([]any) {
		e := e.(map[string]any)
		costs, _ := e["costs"].([]any)
		for _, c := range costs {
			c := c.(map[string]any)
			key := c["modelId"].(string) + " " + c["provider"].(string)
			got[key] = int64(c["upstreamMicroUsd"].(float64))
			model := c["modelId"].(string)
			if c["tasks"].(float64) != 1 || c["pricedTasks"].(float64) != 1 || int(c["credits"].(float64)) != charged[model] {
				t.Errorf("%s: %v, want 1 task priced, %d credits", key, c, charged[model])
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: upstream cost %d micro-USD, want %d (all: %v)", k, got[k], v, got)
		}
	}

	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"providers", "check", "--config", cfg, "--data", dir}, noEnv, &out, &errb); err != nil {
		t.Fatalf("providers check: %v\n%s", err, errb.String())
	}
	table := out.String()
	for _, row := range []string{
		fmt.Sprintf("flux fal 1 %d 1 0.000058", charged["flux"]),
		fmt.Sprintf("flux-schnell replicate 1 %d 1 0.001170", charged["flux-schnell"]),
		fmt.Sprintf("gpt-image-2 openai 1 %d 1 0.166650", charged["gpt-image-2"]),
	} {
		found := false
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(strings.Join(strings.Fields(line), " "), row) {
				found = true
			}
		}
		if !found {
			t.Errorf("providers check lacks the row %q:\n%s", row, table)
		}
	}

	b := startBrowser(t)
	b.useLink(setupLink(t, dir, s.base, "op@example.com", 0, true), "operator password 1")
	b.open(s.base, "#/admin/engines", ".engine")
	b.waitFor("the costs", `document.querySelectorAll('.engine .upstream-costs tbody tr').length >= 3`)
	for engine, want := range map[string]string{"fal": "$0.000058", "replicate": "$0.001170", "openai": "$0.166"} {
		if text := b.text(`.engine[data-engine="` + engine + `"] .upstream-costs`); !strings.Contains(text, want) {
			t.Errorf("the %s card's costs say %q, want %q", engine, text, want)
		}
	}
	b.shot("admin-engines-costs")
	b.noErrors()
}
