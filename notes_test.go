package gengate_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNotesNameRealTests: docs/notes/testing.md and docs/security.md point
// readers at tests by name; each name must be a test function somewhere
// in the module, so a renamed or deleted test cannot leave a claim backed
// by nothing.
func TestNotesNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test[A-Z][A-Za-z0-9_]*)")
	for _, doc := range []string{"docs/notes/testing.md", "docs/security.md"} {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			n++
			if !defined[m[1]] {
				t.Errorf("%s names %s, which is no test of this module", doc, m[1])
			}
		}
		if n == 0 {
			t.Errorf("%s names no test", doc)
		}
	}
}
