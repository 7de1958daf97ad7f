// Package replicate keeps a copy of an embedded install (the SQLite
// database, the files under local storage and the server key gengate made
// in the data directory) in an S3-compatible bucket, continuously, and
// brings it back into an empty directory (serve --replicate, gengate
// restore, serve --restore-if-missing).
//
// The database is replicated by Litestream, used as a library on the same
// SQLite driver gengate uses (modernc.org/sqlite): it copies each new WAL
// frame into LTX files, uploads them, compacts them and restores the
// database to any point in its retention window. While it runs, Litestream
// alone checkpoints the WAL (gengate's own checkpointer is off, the
// writer's connection never checkpoints): a checkpoint that Litestream did
// not see coming could restart the WAL under pages it has not copied yet
// (docs/operations.md, "Backups").
//
// Layout in the bucket, under the URL's prefix:
//
//	db/ltx/<level>/…   Litestream's LTX files
//	files/<key>        each file of the local storage, under its own key
//	webhook.key        the server key, when gengate made it in <data>
package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/gengate/gengate/internal/blob"
)

// DefaultInterval is how often the database and files are copied
// (serve --replicate-interval).
const DefaultInterval = time.Second

// BehindFactor: a replica whose lag exceeds this many intervals (and at
// least MinBehind) is behind: a warning in the log, /readyz, /metrics and
// the engines page.
const (
	BehindFactor = 10
	MinBehind    = 10 * time.Second
)

// KeyObject is the server key's name in the bucket (under the prefix).
const KeyObject = "webhook.key"

// DBFile is the database's name in the data directory.
const DBFile = "gengate.db"

// Target is where a replica lives: the bucket and prefix of an s3:// URL
// and the credentials to reach it.
type Target struct {
	S3 blob.S3Config
	// Name is the URL without its parameters (s3://bucket/prefix), for logs
	// and status pages.
	Name string
}

// ParseURL reads the replica's URL: the same form and AWS_* credentials
// as serve --storage (blob.ParseS3URL).
func ParseURL(spec string, getenv func(string) string) (Target, error) {
	cfg, err := blob.ParseS3URL(spec, getenv)
	if err != nil {
		return Target{}, fmt.Errorf("replica url: %s", strings.TrimPrefix(err.Error(), "storage: "))
	}
	name := "s3://" + cfg.Bucket
	if cfg.Prefix != "" {
		name += "/" + cfg.Prefix
	}
	return Target{S3: cfg, Name: name}, nil
}

// under returns the S3 configuration of a folder under the target's
// prefix.
func (t Target) under(dir string) blob.S3Config {
	c := t.S3
	c.Prefix = strings.Trim(path.Join(c.Prefix, dir), "/")
	return c
}

// litestreamClient returns Litestream's S3 client for the database's LTX
// files (under db/), configured from the same URL: endpoint, TLS, path
// style and region, with the static credentials.
func (t Target) litestreamClient(log *slog.Logger) *lss3.ReplicaClient {
	c := lss3.NewReplicaClient()
	c.SetLogger(log)
	c.Bucket = t.S3.Bucket
	c.Path = strings.Trim(path.Join(t.S3.Prefix, "db"), "/")
	c.Region = t.S3.Region
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if t.S3.Endpoint != "" && t.S3.Endpoint != "s3.amazonaws.com" {
		scheme := "https"
		if !t.S3.Secure {
			scheme = "http"
		}
		c.Endpoint = (&url.URL{Scheme: scheme, Host: t.S3.Endpoint}).String()
		c.ForcePathStyle = true // what self-hosted servers need, as blob.S3 picks
	}
	if t.S3.PathStyle != nil {
		c.ForcePathStyle = *t.S3.PathStyle
	}
	if t.S3.SessionToken == "" {
		c.AccessKeyID, c.SecretAccessKey = t.S3.AccessKeyID, t.S3.SecretAccessKey
	} // else: the AWS default chain reads AWS_* with the session token
	return c
}

// litestreamLog is the logger given to Litestream: its warnings and
// errors go to gengate's log; its routine lines (each compaction, each
// snapshot) do not.
func litestreamLog(log *slog.Logger) *slog.Logger {
	return slog.New(warnOnly{log.Handler()}).With("component", "litestream")
}

type warnOnly struct{ slog.Handler }

func (h warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}
func (h warnOnly) WithAttrs(a []slog.Attr) slog.Handler { return warnOnly{h.Handler.WithAttrs(a)} }
func (h warnOnly) WithGroup(n string) slog.Handler      { return warnOnly{h.Handler.WithGroup(n)} }

// dropAWSCABundle removes AWS_CA_BUNDLE from the process's environment
// before Litestream's S3 client is made: the AWS SDK inside it refuses to
// load at all when it is set ("unable to add custom RootCAs HTTPClient":
// Litestream brings its own HTTP client). gengate's S3 clients take extra
// roots from Go's SSL_CERT_FILE and SSL_CERT_DIR instead
// (docs/operations.md, "Backups").
func dropAWSCABundle(log *slog.Logger) {
	if os.Getenv("AWS_CA_BUNDLE") == "" {
		return
	}
	os.Unsetenv("AWS_CA_BUNDLE")
	log.Info("AWS_CA_BUNDLE is not read by --replicate and restore: give a private CA by SSL_CERT_FILE or SSL_CERT_DIR")
}

// errNothing says a replica holds no database yet.
var errNothing = errors.New("the replica holds no database")
