//go:build !bench

package main

import (
	"context"
	"errors"
	"io"
)

// errNoBench is what "gengate bench" answers in the default build. The
// harness (a fake fal server, a bare handler, load clients) is about a
// thousand lines that a production server never runs, so it is compiled
// only with -tags bench; exit code 2 tells a script it asked a binary
// that cannot answer, not that a bench ran and failed.
var errNoBench = exitCodeError{code: 2, err: errors.New("this binary was built without the benchmark harness: go build -tags bench ./cmd/gengate")}

// benchCmd refuses every "gengate bench" subcommand with errNoBench.
func benchCmd(ctx context.Context, sub string, rest []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errNoBench
}
