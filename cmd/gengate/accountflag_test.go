package main

import (
	"strings"
	"testing"
)

// TestAccountFlagTakesEmail runs the real binary: every --account flag
// (keys create, credits grant, keys list) takes an account's id or a
// member's email, and keys create --account gives the existing account
// a key that works on its server.
func TestAccountFlagTakesEmail(t *testing.T) {
	dir := t.TempDir()
	srv := runServer(t, "--data", dir, "--addr", "127.0.0.1:0")
	out, err := binaryCLI(t, "accounts", "create", "--email", "ann@acme.example", "--credits", "5", "--data", dir)
	if err != nil {
		t.Fatalf("accounts create: %v\n%s", err, out)
	}
	out, err = binaryCLI(t, "keys", "create", "--account", "Ann@Acme.example", "--name", "by-email", "--data", dir)
	if err != nil {
		t.Fatalf("keys create --account EMAIL: %v\n%s", err, out)
	}
	key := lastLine(out)
	r := mustAPI(t, srv.base, "GET", "/api/v1/account", key, nil, nil)
	if r.status != 200 || r.num("remainingCredits") != 5 {
		t.Fatalf("the key keys create --account EMAIL made: %d %s; want ann's account (5 credits)", r.status, r.body)
	}
	if out, err := binaryCLI(t, "credits", "grant", "--account", "ann@acme.example", "--credits", "3", "--data", dir); err != nil || !strings.Contains(out, "balance 8") {
		t.Errorf("credits grant --account EMAIL: %v\n%s", err, out)
	}
	if out, err := binaryCLI(t, "keys", "list", "--account", "ann@acme.example", "--data", dir); err != nil || !strings.Contains(out, "by-email") {
		t.Errorf("keys list --account EMAIL: %v\n%s", err, out)
	}
	if out, err := binaryCLI(t, "credits", "grant", "--account", "nobody@acme.example", "--credits", "3", "--data", dir); err == nil || !strings.Contains(out, "no member with email nobody@acme.example") {
		t.Errorf("credits grant --account UNKNOWN-EMAIL: %v\n%s", err, out)
	}
}

// TestErrorOnePrefix runs the real binary: an API client command's error
// (the client package's, which says gengate: itself) is printed after
// one "gengate:", not two.
func TestErrorOnePrefix(t *testing.T) {
	srv := runServer(t, "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	out, err := binaryCLI(t, "jobs", "get", "01a22000-0000-7000-8000-000000000000", "--url", srv.base, "--key", srv.key)
	if err == nil || !strings.HasPrefix(out, "gengate: ") || strings.Contains(out, "gengate: gengate:") || !strings.Contains(out, "NOT_FOUND") {
		t.Errorf("jobs get of an unknown task: %v\n%s; want one gengate: prefix and NOT_FOUND", err, out)
	}
}

// TestJobsHelp runs the real binary: gengate jobs --help prints the jobs
// commands' usage and flags, not the global usage, and exits 0.
func TestJobsHelp(t *testing.T) {
	out, err := binaryCLI(t, "jobs", "--help")
	if err != nil || !strings.Contains(out, "usage: gengate jobs get|wait|cancel") || !strings.Contains(out, "-out") ||
		strings.Contains(out, "usage: gengate <command>") {
		t.Errorf("gengate jobs --help: %v\n%s", err, out)
	}
}
