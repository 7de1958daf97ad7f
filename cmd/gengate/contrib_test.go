package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSystemdUnit: contrib/gengate.service passes systemd-analyze verify
// with no warning (an unknown key, a bad value), where systemd is
// installed, and keeps what docs/deploy.md promises of it.
func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile("../../contrib/gengate.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(data)
	for _, want := range []string{"User=gengate", "StateDirectory=gengate", "Wants=network-online.target",
		"After=network-online.target", "NoNewPrivileges=yes", "ProtectSystem=strict", "TimeoutStopSec=60"} {
		if !strings.Contains(unit, "\n"+want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
	// systemd takes no comment after a value: "EnvironmentFile=x # y"
	// names the file "x # y".
	if m := regexp.MustCompile(`(?m)^[A-Za-z]+=[^\n]*[ \t]#`).FindString(unit); m != "" {
		t.Errorf("a line has an inline comment, which systemd reads as part of the value: %q", m)
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed: the unit is not verified here (apt-get install systemd)")
	}
	// verify checks that ExecStart's binary exists: point it at one that does.
	path := filepath.Join(t.TempDir(), "gengate.service")
	os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/gengate", binary(t))), 0o644)
	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestContainerRecipe: contrib/Dockerfile builds in two stages a static
// binary (CGO off) with the commit stamped, and runs it as a user that is
// not root. Building the image needs a Docker daemon, which this test does
// not have; it reads the recipe.
func TestContainerRecipe(t *testing.T) {
	data, err := os.ReadFile("../../contrib/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	if n := len(regexp.MustCompile(`(?m)^FROM `).FindAllString(df, -1)); n != 2 {
		t.Errorf("%d stages, want 2 (build, then run)", n)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-X main.commit=${COMMIT}", "-trimpath", "USER 65532:65532",
		"distroless/static", "COPY --from=build /out/gengate", `CMD ["serve"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
	if regexp.MustCompile(`(?m)^USER (root|0)`).MatchString(df) {
		t.Error("the image runs as root")
	}
}
