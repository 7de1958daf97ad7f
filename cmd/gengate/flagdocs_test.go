package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeFlagsDocumented: every serve flag is named (as `--name`) in
// docs/ or the README, so that a new limit cannot land without its line
// (docs/security.md and docs/operations.md list the limits).
func TestServeFlagsDocumented(t *testing.T) {
	var usage bytes.Buffer
	parseServeFlags([]string{"--help"}, func(string) string { return "" }, &usage)
	names := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1)
	if len(names) < 20 {
		t.Fatalf("read %d flags from serve's usage:\n%s", len(names), usage.String())
	}
	files, _ := filepath.Glob("../../docs/*.md")
	var docs strings.Builder
	for _, f := range append(files, "../../README.md") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(data)
	}
	for _, m := range names {
		if !regexp.MustCompile("--" + regexp.QuoteMeta(m[1]) + `\b`).MatchString(docs.String()) {
			t.Errorf("serve flag --%s is not named in docs/*.md or README.md", m[1])
		}
	}
}
