package gengate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

// TestProvidersDocListsEveryRoute: docs/providers.md shows every catalog
// model with each of its default routes, so the document cannot drift from
// the catalog.
func TestProvidersDocListsEveryRoute(t *testing.T) {
	data, err := os.ReadFile("docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if id, ok := strings.CutPrefix(line, "| `"); ok {
			id, _, _ = strings.Cut(id, "`")
			rows[id] = line
		}
	}
	c, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		row, ok := rows[m.ID]
		if !ok {
			t.Errorf("docs/providers.md has no row for %s", m.ID)
			continue
		}
		for _, r := range m.Routes {
			if !strings.Contains(row, "`"+r.Upstream+"`") || !strings.Contains(row, r.Engine) {
				t.Errorf("docs/providers.md row for %s lacks route %s %s", m.ID, r.Engine, r.Upstream)
			}
		}
		// The live-routes column names nothing the catalog does not route
		// to: a retired route goes to the last column.
		if cols := strings.Split(row, " | "); len(cols) >= 5 {
			spans := strings.Split(cols[3], "`")
			for i := 1; i < len(spans); i += 2 {
				up := spans[i]
				found := false
				for _, r := range m.Routes {
					found = found || r.Upstream == up
				}
				if !found {
					t.Errorf("docs/providers.md lists %s as a live route of %s; the catalog does not", up, m.ID)
				}
			}
		}
	}
}

// TestRetiredRoutesAreNotDefaults: a model its provider retired, or a route
// to an engine gengate does not have, is not a default route
// (docs/providers.md says since when each is gone).
func TestRetiredRoutesAreNotDefaults(t *testing.T) {
	retired := map[string]string{
		"openai sora-2":                        "OpenAI's Sora API, shut down 2026-09-24",
		"google imagen-4.0-ultra-generate-001": "Imagen :predict, Vertex AI only",
		"google imagen-4.0-fast-generate-001":  "Imagen :predict, Vertex AI only",
	}
	engines := map[string]bool{"sandbox": true, "builtin": true, "fal": true, "replicate": true, "openai": true, "google": true, "vertex": true, "comfyui": true}
	c, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		for _, r := range m.Routes {
			if why, ok := retired[r.Engine+" "+r.Upstream]; ok {
				t.Errorf("%s routes to %s %s: %s", m.ID, r.Engine, r.Upstream, why)
			}
			if !engines[r.Engine] {
				t.Errorf("%s routes to engine %s, which gengate does not have", m.ID, r.Engine)
			}
		}
	}
}
