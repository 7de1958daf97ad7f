package replicate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/gengate/gengate/internal/blob"
)

// Restored says what a restore brought back.
type Restored struct {
	// Tasks and LedgerEntries count the rows of the restored database.
	Tasks, LedgerEntries int
	// Files counts the files copied into <data>/files.
	Files int
	// Key says whether the server key was restored to <data>/webhook.key.
	Key bool
	// LastWrite is when the last replicated write was copied to the
	// bucket (the newest LTX file the restore applied).
	LastWrite time.Time
	// TXID is the database transaction restored to.
	TXID string
}

// ErrNothingReplicated is returned by Restore when the replica holds no
// database.
var ErrNothingReplicated = errNothing

// RestoreConfig says what to restore and where.
type RestoreConfig struct {
	Target Target
	// Data is the data directory; the database goes to Data/gengate.db,
	// the server key to Data/webhook.key, the files to FilesDir.
	Data string
	// FilesDir is where the files go; empty: Data/files.
	FilesDir string
	// At, when set, restores the database as it was at that time (the
	// newest state replicated before it); zero restores the newest.
	At  time.Time
	Log *slog.Logger
}

// Restore brings a replica back into a data directory that has no
// database: the database (to a point in time when At is set), the server
// key (unless Data has one) and the files (those Data/files lacks).
// A replica with no database is ErrNothingReplicated, and nothing is
// written.
func Restore(ctx context.Context, cfg RestoreConfig) (Restored, error) {
	var res Restored
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.FilesDir == "" {
		cfg.FilesDir = filepath.Join(cfg.Data, "files")
	}
	dbPath := filepath.Join(cfg.Data, DBFile)
	if _, err := os.Stat(dbPath); err == nil {
		return res, fmt.Errorf("restore: %s exists already", dbPath)
	}
	dropAWSCABundle(cfg.Log)
	lslog := litestreamLog(cfg.Log)
	client := cfg.Target.litestreamClient(lslog)
	if err := client.Init(ctx); err != nil {
		return res, fmt.Errorf("restore from %s: %w", cfg.Target.Name, err)
	}
	plan, err := litestream.CalcRestorePlan(ctx, client, 0, cfg.At, lslog)
	if err != nil && strings.Contains(err.Error(), "NoSuchBucket") {
		err = litestream.ErrNoSnapshots // no bucket yet: nothing was replicated
	}
	if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) || (err == nil && len(plan) == 0) {
		if !cfg.At.IsZero() {
			return res, fmt.Errorf("restore from %s: nothing was replicated before %s", cfg.Target.Name, cfg.At.UTC().Format(time.RFC3339))
		}
		return res, fmt.Errorf("restore from %s: %w", cfg.Target.Name, ErrNothingReplicated)
	} else if err != nil {
		return res, fmt.Errorf("restore from %s: %w", cfg.Target.Name, err)
	}
	for _, info := range plan {
		if info.CreatedAt.After(res.LastWrite) {
			res.LastWrite = info.CreatedAt
		}
	}
	res.TXID = plan[len(plan)-1].MaxTXID.String()

	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return res, err
	}
	// Litestream's local state from a database that is gone would not
	// match the restored one.
	if err := os.RemoveAll(metaDir(dbPath)); err != nil {
		return res, err
	}
	// A DB the replica is not attached to in any other way gives
	// Litestream's restore our logger instead of slog's default.
	logDB := litestream.NewDB(dbPath)
	logDB.Logger = lslog
	replica := litestream.NewReplicaWithClient(logDB, client)
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = dbPath
	opt.TXID = plan[len(plan)-1].MaxTXID
	opt.IntegrityCheck = litestream.IntegrityCheckQuick
	if err := replica.Restore(ctx, opt); err != nil {
		return res, fmt.Errorf("restore from %s: %w", cfg.Target.Name, err)
	}
	if err := os.Chmod(dbPath, 0o600); err != nil {
		return res, err
	}
	if res.Tasks, res.LedgerEntries, err = countRows(ctx, dbPath); err != nil {
		return res, fmt.Errorf("restore: read the restored database: %w", err)
	}

	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	root, err := blob.NewS3(octx, cfg.Target.S3)
	if err != nil {
		return res, fmt.Errorf("restore: %s", strings.TrimPrefix(err.Error(), "storage: "))
	}
	keyPath := filepath.Join(cfg.Data, "webhook.key")
	if _, err := os.Stat(keyPath); errors.Is(err, os.ErrNotExist) {
		b, err := root.Get(ctx, KeyObject)
		switch {
		case isNotFound(err):
			// The operator gives the key by flag or environment.
		case err != nil:
			return res, fmt.Errorf("restore the server key: %w", err)
		default:
			if err := writeFileAtomic(keyPath, b, 0o600); err != nil {
				return res, err
			}
			res.Key = true
		}
	}
	if res.Files, err = restoreFiles(ctx, cfg); err != nil {
		return res, err
	}
	return res, nil
}

// restoreFiles copies every file of the replica that FilesDir lacks.
func restoreFiles(ctx context.Context, cfg RestoreConfig) (int, error) {
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	remote, err := blob.NewS3(octx, cfg.Target.under("files"))
	if err != nil {
		return 0, fmt.Errorf("restore: %s", strings.TrimPrefix(err.Error(), "storage: "))
	}
	local, err := blob.NewLocal(cfg.FilesDir)
	if err != nil {
		return 0, err
	}
	keys, err := remote.List(ctx, "", time.Now().Add(24*time.Hour))
	if err != nil {
		return 0, fmt.Errorf("restore: list the files: %w", err)
	}
	have, err := local.List(ctx, "", time.Now().Add(24*time.Hour))
	if err != nil {
		return 0, err
	}
	present := make(map[string]bool, len(have))
	for _, k := range have {
		present[k] = true
	}
	n := 0
	for _, k := range keys {
		if present[k] || skipKey(k) {
			continue
		}
		f, err := remote.Open(ctx, k)
		if err != nil {
			return n, fmt.Errorf("restore %s: %w", k, err)
		}
		_, err = local.PutStream(ctx, k, f, "")
		f.Close()
		if err != nil {
			return n, fmt.Errorf("restore %s: %w", k, err)
		}
		n++
	}
	return n, nil
}

// countRows counts the restored database's tasks and ledger entries.
func countRows(ctx context.Context, dbPath string) (tasks, ledger int, err error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM tasks`).Scan(&tasks); err != nil {
		return 0, 0, err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM ledger`).Scan(&ledger); err != nil {
		return 0, 0, err
	}
	return tasks, ledger, nil
}

// writeFileAtomic writes a file whole or not at all (temporary file,
// sync, rename).
func writeFileAtomic(path string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
