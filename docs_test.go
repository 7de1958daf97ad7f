package gengate_test

import (
	"os"
	"path/filepath"
	"regexp"
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

// TestDocLinksResolve: every relative link of the README and the pages
// under docs/ (docs/notes/ included) to another page or a directory, and
// every docs/….md path they name in their text, points at something that
// exists, so that moving a section to another page cannot leave its
// readers at a dead link. (Pictures are checked where they are made: the
// console's screenshots by internal/console's tests.)
func TestDocLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	notes, _ := filepath.Glob("docs/notes/*.md")
	pages = append(append(pages, notes...), "README.md", "CHANGELOG.md")
	if len(notes) == 0 {
		t.Fatal("found no docs/notes/*.md")
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	named := regexp.MustCompile(`\bdocs/[a-z0-9/-]+\.md\b`)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, ":") {
				continue // an anchor on the page, or a URL
			}
			if ext := filepath.Ext(target); ext != "" && ext != ".md" {
				continue // a picture or another file, not a page
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			}
		}
		for _, p := range named.FindAllString(string(data), -1) {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s names %s, which does not exist", page, p)
			}
		}
	}
}
