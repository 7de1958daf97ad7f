package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/sqlstore/sqltest"
)

// TestAdminCommandsNeverInventDatabase: the real binary's operator
// commands, run where no server ran, exit non-zero, create no ./data, and
// say what they looked at; --init creates the database. On PostgreSQL a
// database without gengate's tables is refused the same way, and left
// without them.
func TestAdminCommandsNeverInventDatabase(t *testing.T) {
	dir := t.TempDir()
	gg := func(args ...string) (string, error) {
		cmd := exec.Command(binary(t), args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{
		{"keys", "create", "--credits", "5"},
		{"keys", "list"},
		{"accounts", "create", "--email", "a@example.com", "--credits", "5"},
		{"accounts", "list"},
		{"credits", "grant", "--account", "x", "--credits", "5"},
		{"review", "list"},
	} {
		out, err := gg(args...)
		if err == nil {
			t.Errorf("gengate %s succeeded where no server ran:\n%s", strings.Join(args, " "), out)
		}
		if want := filepath.Join(dir, "data", "gengate.db"); !strings.Contains(out, want) || !strings.Contains(out, "--data ./data") ||
			!strings.Contains(out, "--init") {
			t.Errorf("gengate %s does not say it looked at %s (the default --data) nor name --init:\n%s", strings.Join(args, " "), want, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
			t.Fatalf("gengate %s created ./data", strings.Join(args, " "))
		}
	}
	if out, err := gg("keys", "create", "--credits", "5", "--data", "elsewhere"); err == nil || !strings.Contains(out, "from --data") {
		t.Errorf("keys create --data elsewhere: %v\n%s", err, out)
	}
	if out, err := gg("keys", "create", "--credits", "5", "--init"); err != nil || !strings.Contains(out, "gg_live_") {
		t.Fatalf("keys create --init: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "gengate.db")); err != nil {
		t.Errorf("--init made no database: %v", err)
	}
	if out, err := gg("keys", "list"); err != nil {
		t.Errorf("keys list on the database --init made: %v\n%s", err, out)
	}

	url := sqltest.URL(t, "postgres")
	out, err := gg("keys", "create", "--credits", "5", "--database", url)
	if err == nil || !strings.Contains(out, "no gengate tables") || !strings.Contains(out, "from --database") {
		t.Errorf("keys create on an empty PostgreSQL database: %v\n%s", err, out)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the empty PostgreSQL database has %d tables now (%v), want 0", n, err)
	}
}
