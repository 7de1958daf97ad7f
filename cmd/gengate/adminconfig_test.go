package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminCommandsReadConfig: the operator commands read data (and the
// rest of the storage settings) from serve's --config file as serve does:
// a key made with only --config works on the server that file describes;
// a flag wins over the file; a file naming a directory where no server
// ran is refused, naming the file, and creates nothing.
func TestAdminCommandsReadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, "serve:\n  data: "+dir+"\n  addr: 127.0.0.1:0\n")
	srv := runServer(t, "--config", cfg)
	out := cli(t, "keys", "create", "--config", cfg, "--credits", "7", "--name", "from-config")
	key := lastLine(out)
	r := mustAPI(t, srv.base, "GET", "/api/v1/account", key, nil, nil)
	if r.status != 200 || r.num("remainingCredits") != 7 {
		t.Fatalf("the key keys create --config made: %d %s", r.status, r.body)
	}
	if out := cli(t, "accounts", "list", "--config", cfg); !strings.Contains(out, "from-config") {
		t.Errorf("accounts list --config does not list the account:\n%s", out)
	}

	empty := filepath.Join(t.TempDir(), "nothing-here")
	bad := writeConfig(t, "serve:\n  data: "+empty+"\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"keys", "create", "--config", bad, "--credits", "5"}, noEnv, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), bad) {
		t.Errorf("keys create --config with a data where no server ran: %v; want it refused, naming %s and %s", err, empty, bad)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Errorf("%s was created", empty)
	}
	// A flag wins over the file.
	if out := cli(t, "accounts", "list", "--config", bad, "--data", dir); !strings.Contains(out, "from-config") {
		t.Errorf("accounts list --config BAD --data DIR does not read DIR:\n%s", out)
	}
}
