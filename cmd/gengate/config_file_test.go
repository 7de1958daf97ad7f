package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

// TestBuildEngines: what a --config file and the usual environment
// variables turn into, and the errors that name the bad field.
func TestBuildEngines(t *testing.T) {
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		yaml      string
		env       map[string]string
		providers []string
		err       string
	}{
		{name: "nothing", providers: nil},
		{name: "env only", env: map[string]string{"FAL_KEY": "k1", "COMFYUI_URL": "http://gpu:8188"}, providers: []string{"comfyui", "fal"}},
		{name: "file with env reference", yaml: "providers:\n  replicate:\n    apiKey: ${TOKEN}\n", env: map[string]string{"TOKEN": "r8_x"}, providers: []string{"replicate"}},
		{name: "unset variable", yaml: "providers:\n  replicate:\n    apiKey: ${NOPE}\n", err: "providers.replicate.apiKey: environment variable NOPE is not set"},
		{name: "compatible server", yaml: "providers:\n  localai:\n    type: openai-compatible\n    baseUrl: http://localai:8080/v1\n", providers: []string{"localai"}},
		{name: "compatible without url", yaml: "providers:\n  localai:\n    type: openai-compatible\n", err: "providers.localai: an openai-compatible provider needs baseUrl"},
		{name: "unknown type", yaml: "providers:\n  midjourney: {}\n", err: `providers.midjourney: unknown provider type "midjourney"`},
		{name: "unknown key", yaml: "providers:\n  fal:\n    apikey: x\n", err: "field apikey not found"},
		{name: "route to unconfigured", yaml: "routes:\n  flux:\n    - provider: fal\n", err: `routes.flux[0]: provider "fal" is not configured`},
		{name: "route to unknown model", yaml: "routes:\n  fluxx:\n    - provider: sandbox\n", err: "routes.fluxx: no such model"},
		{name: "sandbox takes no settings", yaml: "providers:\n  sandbox: {}\n", err: "providers.sandbox: sandbox is built in"},
		{name: "vertex with ADC", yaml: "providers:\n  vertex:\n    project: ${GCP_PROJECT}\n    location: us-central1\n", env: map[string]string{"GCP_PROJECT": "my-project-1"}, providers: []string{"vertex"}},
		{name: "vertex without location", yaml: "providers:\n  vertex:\n    project: my-project-1\n", err: "providers.vertex: vertex needs project and location"},
		{name: "vertex with an api key", yaml: "providers:\n  vertex:\n    project: my-project-1\n    location: us-central1\n    apiKey: AIza0000\n", err: "providers.vertex: vertex takes credentialsFile"},
		{name: "vertex missing credentials file", yaml: "providers:\n  vertex:\n    project: my-project-1\n    location: us-central1\n    credentialsFile: /nonexistent/sa.json\n", err: "providers.vertex: credentials file:"},
		{name: "project on another provider", yaml: "providers:\n  google:\n    apiKey: AIza0000\n    project: my-project-1\n", err: "providers.google: project, location and credentialsFile are Vertex AI settings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.yaml != "" {
				path = filepath.Join(t.TempDir(), "c.yaml")
				os.WriteFile(path, []byte(tc.yaml), 0o600)
			}
			fc, err := loadFileConfig(path)
			var engs *engines
			if err == nil {
				engs, err = buildEngines(fc, catalog, func(k string) string { return tc.env[k] }, 0, engineFlags{})
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(engs.Providers, ",") != strings.Join(tc.providers, ",") {
				t.Errorf("providers %v, want %v", engs.Providers, tc.providers)
			}
			for _, name := range []string{"sandbox", "builtin"} {
				if engs.All[name] == nil {
					t.Errorf("%s engine missing", name)
				}
			}
		})
	}
}

// TestRouteParams: a route's extra keys become upstream parameters.
func TestRouteParams(t *testing.T) {
	catalog, _ := gengate.DefaultCatalog()
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("providers:\n  comfyui:\n    baseUrl: http://gpu:8188\nroutes:\n  flux-schnell:\n    - provider: comfyui\n      model: flux-schnell\n      \"1.unet_name\": mine.safetensors\n    - provider: sandbox\n"), 0o600)
	fc, err := loadFileConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	engs, err := buildEngines(fc, catalog, func(string) string { return "" }, 0, engineFlags{})
	if err != nil {
		t.Fatal(err)
	}
	rs := engs.Routes["flux-schnell"]
	if len(rs) != 2 || rs[0].Engine != "comfyui" || rs[0].Params["1.unet_name"] != "mine.safetensors" || rs[1].Engine != "sandbox" || rs[1].Upstream != "flux-schnell" {
		t.Fatalf("routes %+v", rs)
	}
}
