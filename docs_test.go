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
	}
}
