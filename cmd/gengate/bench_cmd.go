//go:build bench

package main

import (
	"context"
	"io"
)

// benchCmd runs "gengate bench <sub>": the benchmark harness, compiled
// only into a binary built with -tags bench (docs/benchmarks.md).
func benchCmd(ctx context.Context, sub string, rest []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch sub {
	case "submit":
		return benchSubmit(ctx, rest, getenv, stdout, stderr)
	case "waiters":
		return benchWaiters(ctx, rest, getenv, stdout, stderr)
	case "outputs":
		return benchOutputs(ctx, rest, getenv, stdout, stderr)
	case "e2e":
		return benchE2E(ctx, rest, getenv, stdout, stderr)
	case "bare":
		return benchBare(ctx, rest, getenv, stdout, stderr)
	}
	return errUnknownCommand
}
