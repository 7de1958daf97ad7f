package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gengate/gengate/internal/sqlstore"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3"; commit likewise, for builds made
// without version control information (-X main.commit=<hash>).
var (
	version = "dev"
	commit  = ""
)

// buildInfo is what gengate version and serve's first log line say of
// the binary.
type buildInfo struct {
	Version string // the release, or "dev"
	// Commit is the git revision the binary was built from: Go stamps it
	// (vcs.revision) into a binary that go build made in a git checkout;
	// go run and go test binaries carry none, and then it is "unknown".
	Commit   string
	Modified bool // the checkout had uncommitted changes
	// FromCheckout is the source checkout the commit was read from at
	// run time, when the build was not stamped (checkoutHead).
	FromCheckout string
	Schema       int64 // the latest database schema version this binary knows
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Schema: sqlstore.SchemaVersion()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version // go install …@v1.2.3
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Commit == "" {
		b.Commit, b.FromCheckout = checkoutHead()
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// checkoutHead is the fallback for a binary built without version
// control information: GOFLAGS=-buildvcs=false (as on machines where git
// refuses the checkout's owner), a git worktree (whose .git is a file,
// which go build does not stamp from), go run and go test. If the source
// directory the binary was compiled from still exists on this machine
// (builds without -trimpath record it) and is a git checkout, its HEAD is
// the commit, marked as read from the checkout rather than stamped: it
// is the checkout's HEAD now, which is the build's unless the checkout
// moved since. A release binary (built elsewhere, or with -trimpath)
// carries -X main.commit instead (contrib/Dockerfile, docs/upgrading.md).
func checkoutHead() (commit, dir string) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", ""
	}
	dir = filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", ""
	}
	top, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", ""
	}
	return strings.TrimSpace(string(out)), strings.TrimSpace(string(top))
}

// short is the commit's first 12 characters (git's short hash is a
// prefix of it).
func (b buildInfo) short() string {
	if len(b.Commit) > 12 {
		return b.Commit[:12]
	}
	return b.Commit
}

// printVersion prints one line: the release, the commit (whole, so that
// any short form of it is a prefix), whether the checkout was modified,
// and the schema version.
func printVersion(stdout io.Writer) {
	b := readBuildInfo()
	mod := ""
	if b.Modified {
		mod = ", modified"
	}
	if b.FromCheckout != "" {
		mod = ", read from the checkout " + b.FromCheckout + ": the build was not stamped"
	}
	fmt.Fprintf(stdout, "gengate %s (commit %s%s; schema %d; %s, %s/%s)\n", b.Version, b.Commit, mod, b.Schema,
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
