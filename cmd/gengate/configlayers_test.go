package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gengate/gengate/internal/sqlstore"
)

// TestVersionNamesCommit: the real binary, built by go build from this
// checkout, names the checkout's commit and the schema version it knows.
func TestVersionNamesCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (or no git): %v", err)
	}
	out, err := exec.Command(binary(t), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("gengate version: %v\n%s", err, out)
	}
	short := strings.TrimSpace(string(head))
	if !strings.Contains(string(out), "commit "+short) {
		t.Errorf("gengate version = %q, want it to name commit %s", out, short)
	}
	if want := "schema " + strconv.FormatInt(sqlstore.SchemaVersion(), 10); !strings.Contains(string(out), want) {
		t.Errorf("gengate version = %q, want %q", out, want)
	}
}

// TestServeConfigFile: the real binary given only --config takes its
// address, data directory and limits (a size with a unit) from serve:.
func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	path := filepath.Join(dir, "gengate.yaml")
	os.WriteFile(path, []byte("serve:\n  addr: "+addr+"\n  data: "+filepath.Join(dir, "data")+"\n  max-body: 1MiB\n  sync-wait: 20s\n"), 0o600)
	p := startProcess(t, "--config", path)
	if p.base != "http://"+addr {
		t.Fatalf("listening on %s, want http://%s", p.base, addr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "gengate.db")); err != nil {
		t.Errorf("the data directory of the file was not used: %v", err)
	}
	// A 1.5 MB body is over the file's 1MiB (the default is 32 MiB).
	body := `{"model":"flux","prompt":"` + strings.Repeat("a", 1_500_000) + `"}`
	req, _ := http.NewRequest("POST", p.base+"/api/v1/generate", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1.5 MB body answered %d, want 413 under max-body: 1MiB", resp.StatusCode)
	}
}

// mapEnv is a getenv of a map that also lists its GENGATE_ names under
// envNamesKey, as main's does.
func mapEnv(m map[string]string) func(string) string {
	return func(name string) string {
		if name == envNamesKey {
			var names []string
			for k := range m {
				if strings.HasPrefix(k, "GENGATE_") {
					names = append(names, k)
				}
			}
			return strings.Join(names, "\n")
		}
		return m[name]
	}
}

// TestConfigRefusals: a mistyped key or variable, or a bad value, refuses
// to start, names what was wrong, and creates nothing.
func TestConfigRefusals(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		want []string
	}{
		{name: "unknown file key", yaml: "serve:\n  max-bdoy: 1MiB\n", want: []string{`"max-bdoy"`, "line 2", "max-body"}},
		{name: "unknown top-level key", yaml: "serv:\n  addr: x\n", want: []string{"serv"}},
		{name: "file names a file", yaml: "serve:\n  config: other.yaml\n", want: []string{`"config"`}},
		{name: "bad file value", yaml: "serve:\n  max-body: lots\n", want: []string{"serve.max-body", `"lots" is not a size`}},
		{name: "mapping value", yaml: "serve:\n  addr:\n    host: x\n", want: []string{"serve.addr", "not a mapping"}},
		{name: "unknown variable", env: map[string]string{"GENGATE_MAX_BDOY": "1MiB"}, want: []string{"GENGATE_MAX_BDOY", "GENGATE_MAX_BODY"}},
		{name: "unknown variable, empty", env: map[string]string{"GENGATE_NOPE": ""}, want: []string{"GENGATE_NOPE"}},
		{name: "bad variable size", env: map[string]string{"GENGATE_MAX_BODY": "64XB"}, want: []string{"GENGATE_MAX_BODY", "not a size"}},
		{name: "bad flag size", args: []string{"--max-body", "1.5 ponies"}, want: []string{"max-body", "not a size"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"serve", "--data", filepath.Join(dir, "data")}, tc.args...)
			if tc.yaml != "" {
				path := filepath.Join(dir, "c.yaml")
				os.WriteFile(path, []byte(tc.yaml), 0o600)
				args = append(args, "--config", path)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, mapEnv(tc.env), &stdout, &stderr)
			if err == nil {
				t.Fatal("serve started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
				t.Error("a data directory was created")
			}
			if strings.Count(stderr.String(), "\n") > 2 {
				t.Errorf("the whole usage was printed:\n%s", stderr.String())
			}
		})
	}
	// The variables of the API client and of the project's tests are not
	// settings of serve, and not refused.
	var out bytes.Buffer
	env := mapEnv(map[string]string{"GENGATE_URL": "http://x", "GENGATE_KEY": "k", "GENGATE_TEST_POSTGRES": "postgres://x"})
	if err := run(context.Background(), []string{"serve", "--print-config"}, env, &out, &out); err != nil {
		t.Errorf("client and test variables refused: %v", err)
	}
}

// TestConfigPrecedence: flag > environment > file > default, as
// --print-config shows it; its output reads back as a config file that
// gives the same settings; secrets are masked.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(`serve:
  addr: 127.0.0.1:1111
  sync-wait: 20s
  max-body: 1MiB
  workers: 7
  review-terms: [alpha, beta]
  metrics-token: from-the-file-0123456789
`), 0o600)
	env := mapEnv(map[string]string{"GENGATE_SYNC_WAIT": "30s", "GENGATE_MAX_BODY": "64MB", "GENGATE_WEBHOOK_KEY": strings.Repeat("s", 40)})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--config", path, "--print-config", "--max-body", "2MiB",
		"--database", "postgres://u:hunter2@db.example/gengate"}, env, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var doc struct {
		Serve map[string]yaml.Node `yaml:"serve"`
	}
	if err := yaml.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("--print-config is not YAML: %v\n%s", err, stdout.String())
	}
	want := map[string][2]string{ // value, source
		"max-body":       {"2MiB", "flag"},
		"sync-wait":      {"30s", "env GENGATE_SYNC_WAIT"},
		"addr":           {"127.0.0.1:1111", "file"},
		"workers":        {"7", "file"},
		"review-terms":   {"alpha,beta", "file"},
		"shutdown-grace": {"30s", "default"},
		"webhook-key":    {"********", "env GENGATE_WEBHOOK_KEY"},
		"metrics-token":  {"********", "file"},
		"database":       {"postgres://u:********@db.example/gengate", "flag"},
	}
	for name, w := range want {
		n, ok := doc.Serve[name]
		if !ok {
			t.Errorf("%s missing from --print-config", name)
			continue
		}
		if n.Value != w[0] || strings.TrimSpace(strings.TrimPrefix(n.LineComment, "#")) != w[1] {
			t.Errorf("%s = %q (%s), want %q (%s)", name, n.Value, n.LineComment, w[0], w[1])
		}
	}
	for _, secret := range []string{"hunter2", "from-the-file", "ssssssss"} {
		if strings.Contains(stdout.String(), secret) {
			t.Errorf("--print-config shows a secret (%s):\n%s", secret, stdout.String())
		}
	}
	// The printed settings, as a file, give the same settings again
	// (secrets left out: they are masked).
	printed := regexpLines(stdout.String(), "********", "# ")
	again := filepath.Join(dir, "again.yaml")
	os.WriteFile(again, []byte(printed), 0o600)
	c, err := parseServeFlags([]string{"--config", again}, mapEnv(nil), &stderr)
	if err != nil {
		t.Fatalf("the printed config does not read back: %v\n%s", err, printed)
	}
	if c.MaxBody != 2<<20 || c.Addr != "127.0.0.1:1111" || c.Workers != 7 || c.SyncWait.String() != "30s" {
		t.Errorf("read back: max-body %d addr %s workers %d sync-wait %s", c.MaxBody, c.Addr, c.Workers, c.SyncWait)
	}
}

// regexpLines drops the lines holding drop and cuts each line at cut.
func regexpLines(s, drop, cut string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, drop) {
			continue
		}
		if i := strings.Index(line, cut); i > 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1048576", 1 << 20, false},
		{"1MiB", 1 << 20, false},
		{"64MB", 64e6, false},
		{"64mb", 64e6, false},
		{"512KiB", 512 << 10, false},
		{"1.5GiB", 3 << 29, false},
		{"2G", 2 << 30, false},
		{"10 KB", 10e3, false},
		{"-1", -1, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"1XB", 0, true},
		{"1e400", 0, true},
	}
	for _, tc := range cases {
		got, err := parseSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil {
			if back, _ := parseSize(formatSize(got)); back != got {
				t.Errorf("formatSize(%d) = %q reads back as %d", got, formatSize(got), back)
			}
		}
	}
}
