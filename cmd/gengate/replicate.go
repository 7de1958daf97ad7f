package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/replicate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// Replication of the embedded install (internal/replicate): serve
// --replicate copies the SQLite database (Litestream), the files of local
// storage and the server key gengate made to an S3-compatible bucket as
// they are written; gengate restore and serve --restore-if-missing bring
// them back.

// ReplicateFlags are serve's replication settings.
type ReplicateFlags struct {
	// URL is the replica, s3://bucket[/prefix]?endpoint=…; empty: off.
	URL string
	// Interval is how often the database and files are copied.
	Interval time.Duration
	// RestoreIfMissing restores from URL at start when <data> has no
	// database.
	RestoreIfMissing bool
}

func (r *ReplicateFlags) add(f *flags) error {
	f.str(&r.URL, "replicate", "", "replicate the SQLite database, the files of local storage and the server key made in <data> to s3://bucket[/prefix]?endpoint=host:port&region=r&secure=true&pathStyle=true, continuously (credentials from AWS_*; docs/operations.md, Backups)")
	return errors.Join(
		f.dur(&r.Interval, "replicate-interval", replicate.DefaultInterval, "how often --replicate copies new database pages and files (the replica's lag when healthy)"),
		f.boolean(&r.RestoreIfMissing, "restore-if-missing", "at start, when <data> has no database, restore the database, the files and the server key from --replicate (a replica holding nothing starts a new install)"),
	)
}

func (r *ReplicateFlags) validate(c *Config) error {
	switch {
	case r.URL == "" && r.RestoreIfMissing:
		return errors.New("--restore-if-missing restores from --replicate: give both")
	case r.URL == "":
		return nil
	case c.Database != "":
		return errors.New("--replicate replicates the SQLite database; on PostgreSQL use its own tools (pg_basebackup and WAL archiving, pg_dump: docs/operations.md, Backups)")
	case c.Role != "all":
		return errors.New("--replicate needs --role all: one process owns the SQLite database")
	case r.Interval < 100*time.Millisecond || r.Interval > time.Hour:
		return errors.New("--replicate-interval must be between 100ms and 1h")
	}
	return nil
}

// localFilesDir is the local storage's directory, or "" when files live
// in S3 (which is then their own copy).
func localFilesDir(cfg *Config) string {
	if cfg.Storage == "" {
		return filepath.Join(cfg.Data, "files")
	}
	if strings.HasPrefix(cfg.Storage, "s3://") {
		return ""
	}
	return strings.TrimPrefix(cfg.Storage, "file://")
}

// restoreIfMissing restores <data> from the replica when it has no
// database (serve --restore-if-missing). It runs before the server key is
// read or made, so that the restored key is the one used.
// A bad --replicate URL (or missing credentials) is refused here too,
// before anything is created in <data>.
func restoreIfMissing(ctx context.Context, cfg *Config, getenv func(string) string, log *slog.Logger, stdout io.Writer) error {
	if cfg.Replicate.URL == "" {
		return nil
	}
	target, err := replicate.ParseURL(cfg.Replicate.URL, getenv)
	if err != nil {
		return fmt.Errorf("--replicate: %w", err)
	}
	if !cfg.Replicate.RestoreIfMissing {
		return nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Data, replicate.DBFile)); err == nil {
		return nil
	}
	res, err := replicate.Restore(ctx, replicate.RestoreConfig{Target: target, Data: cfg.Data,
		FilesDir: localFilesDir(cfg), Log: log})
	if errors.Is(err, replicate.ErrNothingReplicated) {
		log.Info("no database in "+cfg.Data+" and none replicated yet: starting a new install", "replica", target.Name)
		return nil
	} else if err != nil {
		return err
	}
	printRestored(stdout, target.Name, cfg.Data, res)
	log.Info("restored from the replica", "replica", target.Name, "tasks", res.Tasks, "ledgerEntries", res.LedgerEntries,
		"files", res.Files, "serverKey", res.Key, "lastReplicatedWrite", res.LastWrite)
	return nil
}

// startReplication starts the replica of an open SQLite store.
func startReplication(ctx context.Context, cfg *Config, getenv func(string) string, log *slog.Logger) (*replicate.Replicator, error) {
	target, err := replicate.ParseURL(cfg.Replicate.URL, getenv)
	if err != nil {
		return nil, fmt.Errorf("--replicate: %w", err)
	}
	keyFile := ""
	if cfg.WebhookKey == "" {
		keyFile = filepath.Join(cfg.Data, webhookKeyFile)
	}
	r, err := replicate.Start(ctx, replicate.Config{Target: target, DBPath: filepath.Join(cfg.Data, replicate.DBFile),
		FilesDir: localFilesDir(cfg), KeyFile: keyFile, Interval: cfg.Replicate.Interval, WALMB: cfg.SQLiteWALMB, Log: log})
	if err != nil {
		return nil, err
	}
	log.Info("replicating the database, the files and the server key", "replica", target.Name,
		"interval", cfg.Replicate.Interval.String(), "serverKey", keyFile != "")
	return r, nil
}

// sqliteCheckpoints is the store option of the checkpoints' owner: with
// --replicate, Litestream.
func sqliteCheckpoints(cfg *Config) []sqlstore.Option {
	if cfg.Replicate.URL != "" {
		return []sqlstore.Option{sqlstore.WithCheckpointsByOther()}
	}
	return nil
}

// mirroredBlobs is local storage whose writes and deletions are also
// queued for the replica.
type mirroredBlobs struct {
	blob.Store
	r *replicate.Replicator
}

func (m mirroredBlobs) Put(ctx context.Context, key string, data []byte, contentType string) error {
	err := m.Store.Put(ctx, key, data, contentType)
	if err == nil {
		m.r.FileWritten(key)
	}
	return err
}

func (m mirroredBlobs) PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	n, err := m.Store.PutStream(ctx, key, r, contentType)
	if err == nil {
		m.r.FileWritten(key)
	}
	return n, err
}

func (m mirroredBlobs) Delete(ctx context.Context, key string) error {
	err := m.Store.Delete(ctx, key)
	if err == nil {
		m.r.FileDeleted(key)
	}
	return err
}

var _ gengate.Blobs = mirroredBlobs{}

// replicaCollector serves the replica's state on /metrics.
type replicaCollector struct{ status func() any } // returns a replicate.Status

var (
	replicaLagDesc = prometheus.NewDesc("gengate_replica_lag_seconds",
		"Every write older than this is in the --replicate replica.", nil, nil)
	replicaHealthyDesc = prometheus.NewDesc("gengate_replica_healthy",
		"1 while the replica keeps up, 0 when it is behind or failing.", nil, nil)
	replicaPendingDesc = prometheus.NewDesc("gengate_replica_files_pending",
		"Files written to local storage not yet copied to the replica.", nil, nil)
	replicaThroughDesc = prometheus.NewDesc("gengate_replica_replicated_through_seconds",
		"Unix time before which every write is in the replica.", nil, nil)
)

func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- replicaLagDesc
	ch <- replicaHealthyDesc
	ch <- replicaPendingDesc
	ch <- replicaThroughDesc
}

func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	s, _ := c.status().(replicate.Status)
	healthy := 0.0
	if s.State == "ok" {
		healthy = 1
	}
	through := 0.0
	if !s.ReplicatedThrough.IsZero() {
		through = float64(s.ReplicatedThrough.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(replicaLagDesc, prometheus.GaugeValue, s.LagSeconds)
	ch <- prometheus.MustNewConstMetric(replicaHealthyDesc, prometheus.GaugeValue, healthy)
	ch <- prometheus.MustNewConstMetric(replicaPendingDesc, prometheus.GaugeValue, float64(s.FilesPending))
	ch <- prometheus.MustNewConstMetric(replicaThroughDesc, prometheus.GaugeValue, through)
}

// printRestored says what a restore brought back.
func printRestored(w io.Writer, from, data string, res replicate.Restored) {
	last := "unknown"
	if !res.LastWrite.IsZero() {
		last = res.LastWrite.UTC().Format(time.RFC3339)
	}
	key := "not in the replica (give the server key by --webhook-key or GENGATE_WEBHOOK_KEY)"
	if res.Key {
		key = "restored to " + filepath.Join(data, webhookKeyFile)
	}
	fmt.Fprintf(w, "restored %s into %s\n", from, data)
	fmt.Fprintf(w, "  tasks: %d\n  ledger entries: %d\n  files: %d\n  server key: %s\n  last replicated write: %s (transaction %s)\n",
		res.Tasks, res.LedgerEntries, res.Files, key, last, res.TXID)
}

const restoreHelp = `usage: gengate restore --from s3://bucket[/prefix]?endpoint=host:port&… --data DIR [--timestamp RFC3339]

Restores what serve --replicate copied to the bucket: the SQLite database
(as it was at --timestamp, or the newest), the files of local storage into
DIR/files and the server key into DIR/webhook.key. DIR must be empty or
missing. Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
Then: gengate serve --data DIR.`

// restoreCmd is gengate restore.
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var from, data, at string
	f := newFlags("restore", getenv, stderr)
	f.StringVar(&from, "from", "", "the replica: the URL given to serve --replicate")
	f.StringVar(&data, "data", "", "the data directory to restore into: empty or missing")
	f.StringVar(&at, "timestamp", "", "restore the database as it was at this time (RFC 3339, e.g. 2026-11-28T03:00:00Z); default: the newest")
	f.Usage = func() {
		fmt.Fprintln(f.Output(), restoreHelp)
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	if from == "" || data == "" {
		return errors.New("restore needs --from and --data")
	}
	var when time.Time
	if at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return fmt.Errorf("--timestamp %q: want RFC 3339, such as 2026-11-28T03:00:00Z", at)
		}
		when = t
	}
	target, err := replicate.ParseURL(from, getenv)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if entries, err := os.ReadDir(data); err == nil && len(entries) > 0 {
		return fmt.Errorf("--data %s is not empty: restore only into an empty or new directory (nothing was changed)", data)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--data: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err := replicate.Restore(ctx, replicate.RestoreConfig{Target: target, Data: data, At: when, Log: log})
	if err != nil {
		// The directory was empty: a restore cut short leaves it so, to be
		// run again.
		if entries, rerr := os.ReadDir(data); rerr == nil {
			for _, e := range entries {
				os.RemoveAll(filepath.Join(data, e.Name()))
			}
		}
		return err
	}
	printRestored(stdout, target.Name, data, res)
	return nil
}
