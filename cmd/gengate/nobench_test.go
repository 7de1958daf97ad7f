package main

import (
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// harnessSymbols matches functions and types of the benchmark harness:
// the bench commands, their child processes and fakes.
var harnessSymbols = regexp.MustCompile(`(?m)\smain\.(benchSubmit|benchWaiters|benchOutputs|benchE2E|benchBare|startBenchServer|startBenchFal|startFakeReplicate|\(\*benchFal\)\.ServeHTTP|\(\*benchChild\)\.stop)$`)

// TestDefaultBuildHasNoBench: the default build answers "gengate bench"
// with how to build the harness and exit code 2, and its symbol table
// holds none of the harness, which the -tags bench build's does.
func TestDefaultBuildHasNoBench(t *testing.T) {
	for _, args := range [][]string{{"bench", "submit"}, {"bench", "e2e", "--tasks", "1"}, {"bench"}, {"bench", "waiters", "--help"}} {
		cmd := exec.Command(binary(t), args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("gengate %s: %v, want exit status 2\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		const want = "gengate: this binary was built without the benchmark harness: go build -tags bench ./cmd/gengate\n"
		if stderr.String() != want {
			t.Errorf("gengate %s wrote %q, want %q", strings.Join(args, " "), stderr.String(), want)
		}
	}
	symbols := func(bin string) []string {
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		var names []string
		for _, m := range harnessSymbols.FindAllStringSubmatch(string(out), -1) {
			names = append(names, m[1])
		}
		return names
	}
	if found := symbols(binary(t)); len(found) > 0 {
		t.Errorf("the default build holds the harness: %v", found)
	}
	// The pattern must find what it looks for where it exists.
	if found := symbols(benchBinary(t)); len(found) < 10 {
		t.Errorf("the -tags bench build shows only %v of the harness's 10 symbols", found)
	}
}
