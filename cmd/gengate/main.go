// Command gengate runs the gengate service and its operator commands.
//
//	gengate serve                 API and workers (prints a key on first start)
//	gengate keys create --credits N [--name NAME] [--test] [--operator]
//	gengate keys create --account ID-OR-EMAIL [--name NAME] [--test] [--operator]
//	gengate keys revoke KEY-OR-PREFIX-OR-ID
//	gengate keys list [--account ID-OR-EMAIL]
//	gengate accounts create --email E --credits N [--name N] [--operator]
//	gengate accounts link --email E
//	gengate accounts list [--q TEXT]
//	gengate accounts show ID-OR-EMAIL
//	gengate version
//	gengate credits grant --account ID-OR-EMAIL --credits N
//	gengate codes create --credits N [--count C] [--expires D]
//	gengate review list
//	gengate review settle JOB-ID --refund|--deliver
//	gengate migrate-data --from SRC --to DST
//	gengate server-key rotate|drop-previous|lost|reissue
//	gengate eval builtin [--sets DIR] [--pictures DIR]
//	gengate bench submit [--clients 16] [--duration 5s] [--database URL]  (built with -tags bench)
//	gengate generate --model M --prompt P [--image FILE|URL] [--option k=v] [--out DIR] [--async]
//	gengate jobs get|wait|cancel JOB-ID
//
// Every operator command takes --data and --database, with GENGATE_*
// environment fallbacks, and works while a server runs on the same
// database. generate and jobs are API clients (package client) of a running
// server: --url and --key, or GENGATE_URL and GENGATE_KEY.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], processEnv, os.Stdout, os.Stderr); err != nil {
		if !errors.As(err, new(loggedError)) { // serve's are JSON log lines already
			fmt.Fprintln(os.Stderr, errorLine(err))
		}
		var coded exitCodeError
		if errors.As(err, &coded) {
			os.Exit(coded.code)
		}
		os.Exit(1)
	}
}

// errorLine is the line a failed command prints: its error after one
// "gengate:" (the client package's errors carry their own, which is not
// repeated).
func errorLine(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "gengate: ") {
		msg = strings.TrimPrefix(msg, "gengate: ")
	}
	return "gengate: " + msg
}

// processEnv is the process's environment, which also answers
// envNamesKey with the names of the GENGATE_ variables set.
func processEnv(name string) string {
	if name != envNamesKey {
		return os.Getenv(name)
	}
	var names []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GENGATE_") {
			names = append(names, k)
		}
	}
	return strings.Join(names, "\n")
}

const usage = `usage: gengate <command> [flags]

commands:
  serve                               run the API and workers
  keys create --credits N [--name N] [--test]
                                      create an account and an API key (--test: a gg_test_ key, sandbox only, never charged)
  keys create --account ID-OR-EMAIL [--operator]
                                      add a key to an account; --operator: it may use /api/v1/admin
  keys revoke KEY|PREFIX|ID           revoke an API key (the full key, its prefix or its id)
  keys list [--account ID-OR-EMAIL]   API keys, with last use and spend limits
  accounts create --email E --credits N [--name N] [--operator]
                                      create an account and its member; prints a set-up link last
  accounts link --email E             a one-time sign-in link for a member
  accounts list [--q TEXT]            accounts with balance and members
  accounts show ID-OR-EMAIL           one account: balance, members, keys
  credits grant --account ID-OR-EMAIL --credits N
  codes create --credits N [--count C] [--expires D]
                                      redemption codes, one a line (shown once, stored hashed)
  review list                         tasks waiting for review
  review settle JOB-ID --refund|--deliver
  server-key rotate                   seal everything the server key seals under a new key (old and new both open meanwhile)
  server-key drop-previous            end a rotation: re-seal what is left, drop the previous key
  server-key lost                     records sealed under a key this install does not have
  server-key reissue [--key-gone]     give those records new values (webhook secrets, file URL tokens)
  migrate-data --from SRC --to DST    copy all rows to another database (files not included)
  restore --from S3-URL --data DIR [--timestamp T]
                                      restore the database, files and server key serve --replicate copied
  providers check [--config FILE]     every route checked against its provider's model registry (model, provider, upstream id, state, upstream price)
  eval builtin [--sets DIR]           measure the built-in image operations on public sets
  version                             print the version

benchmark harness (only in a binary built with: go build -tags bench ./cmd/gengate):
  bench submit [--clients N]          async submits/s of gengate against a bare handler (docs/benchmarks.md)
  bench waiters [--count N]           server memory while N synchronous calls wait
  bench outputs [--size B]            server memory while 4 large outputs stream into storage
  bench e2e [--tasks N]               end-to-end tasks/s through a fake queued upstream, against the upstream direct

API client commands (--url U --key K, or GENGATE_URL, GENGATE_KEY):
  generate --model M --prompt P [--image FILE|URL] [--option k=v ...] [--out DIR] [--async]
                                      run a generation; prints output URLs (or paths with --out)
  jobs get|wait|cancel JOB-ID         read, wait for (with --out) or cancel a task
run "gengate <command> --help" for its flags`

// run is the whole program, so that tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("no command")
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 && (cmd == "keys" || cmd == "credits" || cmd == "review" || cmd == "eval" || cmd == "bench" || cmd == "accounts" || cmd == "jobs" || cmd == "codes" || cmd == "providers" || cmd == "server-key") &&
		!strings.HasPrefix(rest[0], "-") {
		sub, rest = rest[0], rest[1:]
	}
	if wantsHelp(rest) {
		// "gengate <cmd> --help": the command's flags on stdout, exit 0.
		err := dispatch(ctx, cmd, sub, rest, getenv, stdout, stdout)
		if errors.Is(err, errUnknownCommand) {
			fmt.Fprintln(stdout, usage)
			return nil
		}
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	err := dispatch(ctx, cmd, sub, rest, getenv, stdout, stderr)
	if errors.Is(err, errUnknownCommand) {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return err
}

var errUnknownCommand = errors.New("unknown command")

// exitCodeError is an error that ends the process with its own exit code
// rather than 1: a usage error that a script must tell apart from a
// command that ran and failed.
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string { return e.err.Error() }
func (e exitCodeError) Unwrap() error { return e.err }

func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

func dispatch(ctx context.Context, cmd, sub string, rest []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if cmd == "bench" {
		// Only a binary built with -tags bench has the harness
		// (bench_cmd.go); the default build answers nobench.go's refusal.
		return benchCmd(ctx, sub, rest, getenv, stdout, stderr)
	}
	switch cmd + " " + sub {
	case "keys list":
		return keysList(ctx, rest, getenv, stdout, stderr)
	case "accounts create":
		return accountsCreate(ctx, rest, getenv, stdout, stderr)
	case "accounts link":
		return accountsLink(ctx, rest, getenv, stdout, stderr)
	case "accounts list":
		return accountsList(ctx, rest, getenv, stdout, stderr)
	case "accounts show":
		return accountsShow(ctx, rest, getenv, stdout, stderr)
	case "version ", "--version ", "-version ":
		printVersion(stdout)
		return nil
	case "serve ":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "keys create":
		return keysCreate(ctx, rest, getenv, stdout, stderr)
	case "keys revoke":
		return keysRevoke(ctx, rest, getenv, stdout, stderr)
	case "credits grant":
		return creditsGrant(ctx, rest, getenv, stdout, stderr)
	case "codes create":
		return codesCreate(ctx, rest, getenv, stdout, stderr)
	case "review list":
		return reviewList(ctx, rest, getenv, stdout, stderr)
	case "review settle":
		return reviewSettle(ctx, rest, getenv, stdout, stderr)
	case "eval builtin":
		return evalBuiltin(ctx, rest, getenv, stdout, stderr)
	case "providers check":
		return providersCheck(ctx, rest, getenv, stdout, stderr)
	case "generate ":
		return generateCmd(ctx, rest, getenv, stdout, stderr)
	case "jobs ":
		// "gengate jobs --help" (no subcommand): the jobs commands and
		// their flags (those of jobs wait, a superset).
		if wantsHelp(rest) {
			fmt.Fprintln(stdout, "usage: gengate jobs get|wait|cancel JOB-ID [flags]\n  get     print the task\n  wait    wait for it to finish (--out DIR: download its outputs)\n  cancel  cancel it (docs/api.md says what is refunded)")
			return jobsCmd(ctx, "wait", rest, getenv, stdout, stdout)
		}
		return errUnknownCommand
	case "jobs get", "jobs wait", "jobs cancel":
		return jobsCmd(ctx, sub, rest, getenv, stdout, stderr)
	case "server-key rotate":
		return serverKeyRotate(ctx, rest, getenv, stdout, stderr)
	case "server-key drop-previous":
		return serverKeyDropPrevious(ctx, rest, getenv, stdout, stderr)
	case "server-key lost":
		return serverKeyLost(ctx, rest, getenv, stdout, stderr)
	case "server-key reissue":
		return serverKeyReissue(ctx, rest, getenv, stdout, stderr)
	case "migrate-data ":
		return migrateData(ctx, rest, getenv, stdout, stderr)
	case "restore ":
		return restoreCmd(ctx, rest, getenv, stdout, stderr)
	case "help ", "-h ", "--help ":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return errUnknownCommand
}
