package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/comfyui/comfyuitest"
	"github.com/gengate/gengate/internal/engine/google/googletest"
)

// TestRegistryVertexComfyUI: serve checks Vertex AI routes against the
// Model Garden (publishers.models.get) and ComfyUI routes against the
// server's /object_info; a publisher model Google retired, and a workflow
// whose node type the ComfyUI server lacks, leave routing (their models,
// with no route left, leave the listing), with the reason in /readyz and
// on the operator's engines page in the console.
func TestRegistryVertexComfyUI(t *testing.T) {
	chromiumPath(t)
	v := googletest.NewVertex(t)
	c := comfyuitest.New(t)
	v.Retire("imagen-4.0-ultra-generate-001") // imagen-4-ultra's vertex route
	c.RemoveNode("SaveVideo")                 // wan-2-5-t2v's workflow saves with it
	dir := t.TempDir()
	yaml := fmt.Sprintf("providers:\n  vertex:\n    project: %s\n    location: %s\n    credentialsFile: %s\n    baseUrl: %s\n"+
		"  comfyui:\n    apiKey: %s\n    baseUrl: %s\n", v.Project(), v.Location(), v.Key(), v.URL(), c.Key(), c.URL())
	s := runServerEnv(t, nil, "--data", dir, "--addr", "127.0.0.1:0", "--config", writeConfig(t, yaml))

	var retired []any
	poll(t, 30*time.Second, 20*time.Millisecond, "the registry check", func() bool {
		r := mustAPI(t, s.base, "GET", "/readyz", "", nil, nil)
		routes, _ := r.json["routes"].(map[string]any)
		retired, _ = routes["retired"].([]any)
		at, _ := routes["checkedAt"].(string)
		return at != "" && len(retired) >= 2
	})
	var got []string
	for _, c := range retired {
		c := c.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %s %s: %s", c["model"], c["provider"], c["upstream"], c["state"], c["reason"]))
	}
	want := []string{
		"imagen-4-ultra vertex imagen-4.0-ultra-generate-001 unknown: Vertex AI's publisher models do not include imagen-4.0-ultra-generate-001",
		"wan-2-5-t2v comfyui wan-2-5-t2v unknown: the ComfyUI server has no node type SaveVideo (GET /object_info), which workflow wan-2-5-t2v uses",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("/readyz routes.retired:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ids := modelIDs(t, s)
	for _, gone := range []string{"imagen-4-ultra", "wan-2-5-t2v"} {
		if ids[gone] {
			t.Errorf("%s is still listed; its only configured route left routing", gone)
		}
	}
	for _, kept := range []string{"image-4-fast", "flux-schnell", "google-veo-3"} {
		if !ids[kept] {
			t.Errorf("%s left the listing; its route is live", kept)
		}
	}

	base := s.base
	b := startBrowser(t)
	b.useLink(setupLink(t, dir, base, "op@example.com", 0, true), "operator password 1")
	b.open(base, "#/admin/engines", ".engine")
	b.waitFor("the retired routes", `document.querySelectorAll('.engine .retired-routes tbody tr').length === 2`)
	for engine, want := range map[string]string{
		"vertex":  "Vertex AI's publisher models do not include imagen-4.0-ultra-generate-001",
		"comfyui": "the ComfyUI server has no node type SaveVideo",
	} {
		if text := b.text(`.engine[data-engine="` + engine + `"] .retired-routes`); !strings.Contains(text, want) {
			t.Errorf("the %s card's retired routes say %q, want %q", engine, text, want)
		}
	}
	b.shot("admin-engines-retired")
	b.noErrors()
}
