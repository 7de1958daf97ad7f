package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// modelIDs lists the ids of GET /api/v1/models.
func modelIDs(t *testing.T, s *server) map[string]bool {
	t.Helper()
	r := mustAPI(t, s.base, "GET", "/api/v1/models", s.key, nil, nil)
	ids := map[string]bool{}
	for _, m := range r.json["models"].([]any) {
		ids[m.(map[string]any)["id"].(string)] = true
	}
	return ids
}

// TestRegistryRetiresRoutes: at start serve checks every route against its
// provider's model registry (the fakes serve fal's Platform API model
// search and Replicate's models API): a route fal marks deprecated, or
// Replicate no longer knows, leaves routing, so a model with no route left
// leaves the listing, with the reason in /readyz ("routes").
func TestRegistryRetiresRoutes(t *testing.T) {
	fal := faltest.New(t)
	rep := replicatetest.New(t)
	fal.Retire("fal-ai/bria/background/replace", "deprecated") // ai-background-generator's only route
	rep.Retire("google/veo-3.1")                               // one of google-veo-3-1's routes
	s := providerServer(t, falConfig(fal)+replicateConfig(rep), nil)

	var routes map[string]any
	poll(t, 30*time.Second, 20*time.Millisecond, "the registry check", func() bool {
		r := mustAPI(t, s.base, "GET", "/readyz", "", nil, nil)
		routes, _ = r.json["routes"].(map[string]any)
		at, _ := routes["checkedAt"].(string)
		unreachable, _ := routes["unreachable"].(map[string]any)
		retired, _ := routes["retired"].([]any)
		return at != "" && len(unreachable) == 0 && len(retired) >= 4
	})
	ids := modelIDs(t, s)
	if ids["ai-background-generator"] {
		t.Error("ai-background-generator is still listed; its only route is deprecated")
	}
	if ids["openai-sora-2"] {
		t.Error("openai-sora-2 is still listed; neither registry lists its routes")
	}
	if !ids["flux"] || !ids["google-veo-3-1"] {
		t.Errorf("models with live routes left the listing: flux %v, google-veo-3-1 %v", ids["flux"], ids["google-veo-3-1"])
	}
	var reasons []string
	for _, c := range routes["retired"].([]any) {
		c := c.(map[string]any)
		reasons = append(reasons, fmt.Sprintf("%s %s %s %s: %s", c["model"], c["provider"], c["upstream"], c["state"], c["reason"]))
	}
	got := strings.Join(reasons, "\n")
	// Every other default route is live in the registries as the fakes
	// model them (fal's from its newest endpoint map): the catalog follows
	// them, and only Sora, whose routes are all gone, is left.
	if len(reasons) != 4 {
		t.Errorf("%d routes retired, want 4:\n%s", len(reasons), got)
	}
	for _, want := range []string{
		"ai-background-generator fal fal-ai/bria/background/replace deprecated: fal marks fal-ai/bria/background/replace deprecated",
		"google-veo-3-1 replicate google/veo-3.1 unknown: replicate does not know the model google/veo-3.1",
		"openai-sora-2 fal fal-ai/sora-2/text-to-video unknown: fal's model registry does not list fal-ai/sora-2/text-to-video",
		"openai-sora-2 replicate openai/sora-2 unknown: replicate does not know the model openai/sora-2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/readyz routes.retired lacks %q:\n%s", want, got)
		}
	}
}

// TestProvidersCheckCommand: "gengate providers check" prints every route
// with its registry's state and the upstream's published price; a registry
// that cannot be reached changes nothing and says so.
func TestProvidersCheckCommand(t *testing.T) {
	fal := faltest.New(t)
	fal.Retire("fal-ai/flux/dev", "gone")
	fal.SetPrice("fal-ai/flux/schnell", 0.003, "megapixels")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	cfg := writeConfig(t, "providers:\n"+falConfig(fal)+
		fmt.Sprintf("  replicate:\n    apiKey: r8_fakeToken0123456789abcdef\n    baseUrl: %s\n", closed))
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"providers", "check", "--config", cfg}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	table := out.String()
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= 5 {
			rows[f[0]+" "+f[1]+" "+f[2]] = f[3:]
		}
	}
	for key, want := range map[string]string{
		"flux fal fal-ai/flux/dev":                              "unknown -",
		"flux-schnell fal fal-ai/flux/schnell":                  "live 0.003 USD/megapixels",
		"flux-schnell replicate black-forest-labs/flux-schnell": "unchecked -",
	} {
		if got := strings.Join(rows[key], " "); got != want {
			t.Errorf("%s: %q, want %q\n%s", key, got, want, table)
		}
	}
	if !strings.Contains(table, "replicate: its registry could not be read") || !strings.Contains(table, "its routes are unchanged") {
		t.Errorf("the unreachable registry is not reported:\n%s", table)
	}
	if !strings.Contains(table, "out of routing: flux on fal (fal-ai/flux/dev): fal's model registry does not list fal-ai/flux/dev") {
		t.Errorf("the retired route is not reported:\n%s", table)
	}
}
