package replicate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
)

// Config is what a Replicator copies and how often.
type Config struct {
	Target Target
	// DBPath is the SQLite database (<data>/gengate.db).
	DBPath string
	// FilesDir is the local storage's directory; empty when files live in
	// S3 already (serve --storage s3://…), which is its own copy.
	FilesDir string
	// KeyFile is the server key gengate made in <data>; empty when the
	// operator gave the key by flag or environment (it is theirs to keep).
	KeyFile string
	// Interval is how often the database and files are copied.
	Interval time.Duration
	// WALMB is the WAL size, in MiB, past which Litestream runs its
	// blocking TRUNCATE checkpoint (serve --sqlite-wal-mb).
	WALMB int
	Log   *slog.Logger
}

// maxPendingFiles bounds the files waiting to be copied; past it the
// queue is dropped and the whole directory is compared with the bucket
// instead (a rescan), which also runs once at start.
const maxPendingFiles = 10000

// Replicator replicates an embedded install while the server runs.
type Replicator struct {
	cfg     Config
	log     *slog.Logger
	store   *litestream.Store
	db      *litestream.DB
	replica *litestream.Replica
	files   *blob.S3 // <prefix>/files/
	root    *blob.S3 // <prefix>/
	local   *blob.Local
	started time.Time

	kick chan struct{}
	quit chan struct{}
	// keySent is the key file as last copied to the replica (under mu).
	keySent []byte
	done    sync.WaitGroup

	mu sync.Mutex
	st state
}

// fileOp is one file to copy (or delete) in the bucket.
type fileOp struct {
	key    string
	delete bool
	at     time.Time // when the local write was done
}

// state is what Status reports, guarded by Replicator.mu.
type state struct {
	dbThrough    time.Time // every commit before it is in the replica
	dbErr        string
	dbErrSince   time.Time
	txid         string
	pending      []fileOp
	rescan       bool      // the queue overflowed (or at start): compare the whole directory
	rescanSince  time.Time // the oldest write the rescan must cover
	filesErr     string
	filesThrough time.Time // the last time the file queue was seen empty
	keyDone      bool
	keyErr       string
	warned       string // the last warning logged ("" when healthy)
}

// Start opens the replica: it creates the bucket when missing, starts
// Litestream on the database (which must exist: open the store first) and
// the copies of the files and the server key. Close stops it.
func Start(ctx context.Context, cfg Config) (*Replicator, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	log := cfg.Log.With("replica", cfg.Target.Name)
	r := &Replicator{cfg: cfg, log: log, started: time.Now(), kick: make(chan struct{}, 1), quit: make(chan struct{})}
	var err error
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if r.root, err = blob.NewS3(octx, cfg.Target.S3); err != nil { // creates the bucket
		return nil, fmt.Errorf("replica %s: %s", cfg.Target.Name, strings.TrimPrefix(err.Error(), "storage: "))
	}
	if r.files, err = blob.NewS3(octx, cfg.Target.under("files")); err != nil {
		return nil, fmt.Errorf("replica %s: %s", cfg.Target.Name, strings.TrimPrefix(err.Error(), "storage: "))
	}
	if cfg.FilesDir != "" {
		if r.local, err = blob.NewLocal(cfg.FilesDir); err != nil {
			return nil, err
		}
		r.st.rescan, r.st.rescanSince = true, r.started
	}
	r.st.keyDone = cfg.KeyFile == ""

	dropAWSCABundle(log)
	lslog := litestreamLog(log)
	r.db = litestream.NewDB(cfg.DBPath)
	r.db.MonitorInterval = cfg.Interval
	if cfg.WALMB > 0 {
		// Litestream's emergency checkpoint (TRUNCATE, blocking) takes
		// over the writer's: past --sqlite-wal-mb the WAL starts over.
		r.db.TruncatePageN = max(cfg.WALMB<<20/4096, litestream.DefaultMinCheckpointPageN+1)
	}
	r.replica = litestream.NewReplicaWithClient(r.db, cfg.Target.litestreamClient(lslog))
	r.replica.SyncInterval = cfg.Interval
	r.db.Replica = r.replica
	r.store = litestream.NewStore([]*litestream.DB{r.db}, litestream.DefaultCompactionLevels)
	r.store.Logger = lslog
	r.db.SetLogger(lslog)
	if err := r.store.Open(ctx); err != nil {
		return nil, fmt.Errorf("replica %s: start litestream: %w", cfg.Target.Name, err)
	}
	r.done.Add(2)
	go r.runDB()
	go r.runFiles()
	return r, nil
}

// Close stops copying; Litestream makes a last sync of the database first
// (bounded by ctx and its 30 s shutdown limit). Call it after the
// database's own connections are closed.
func (r *Replicator) Close(ctx context.Context) error {
	close(r.quit)
	r.done.Wait()
	return r.store.Close(ctx)
}

// FileWritten queues a file just written to local storage for copying.
func (r *Replicator) FileWritten(key string) { r.queue(fileOp{key: key, at: time.Now()}) }

// FileDeleted queues the deletion of a file's copy.
func (r *Replicator) FileDeleted(key string) {
	r.queue(fileOp{key: key, delete: true, at: time.Now()})
}

func (r *Replicator) queue(op fileOp) {
	if r.local == nil || skipKey(op.key) {
		return
	}
	r.mu.Lock()
	switch {
	case r.st.rescan:
		// The rescan to come compares the whole directory: a write it
		// began before is covered by it; one after it waits in the queue.
		r.st.pending = append(r.st.pending, op)
	case len(r.st.pending) >= maxPendingFiles:
		r.st.rescan, r.st.rescanSince = true, r.st.pending[0].at
		r.st.pending = nil
	default:
		r.st.pending = append(r.st.pending, op)
	}
	if len(r.st.pending) > maxPendingFiles { // during a rescan
		r.st.pending = r.st.pending[len(r.st.pending)-maxPendingFiles:]
	}
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// skipKey says which local files are not copied: temporary files of
// writes in progress and the local signing key of input URLs (made anew
// at start; URLs signed with the old one are at most 24 hours old).
func skipKey(key string) bool {
	base := key[strings.LastIndex(key, "/")+1:]
	return strings.HasPrefix(base, ".") || strings.HasPrefix(key, ".")
}

// syncTimeout bounds one round of copying.
func (r *Replicator) syncTimeout() time.Duration {
	return max(30*time.Second, 10*r.cfg.Interval)
}

// runDB copies the database every interval: Litestream reads the new WAL
// frames into an LTX file and uploads it. A round that succeeds moves
// dbThrough to its start: every commit before then is in the replica.
func (r *Replicator) runDB() {
	defer r.done.Done()
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		r.syncDB()
		r.syncKey()
		r.report()
		select {
		case <-r.quit:
			return
		case <-t.C:
		}
	}
}

func (r *Replicator) syncDB() {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), r.syncTimeout())
	defer cancel()
	go func() { // Close stops a round that hangs on the network
		select {
		case <-r.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := r.db.Sync(ctx)
	var pos string
	if err == nil {
		lp, perr := r.db.Pos()
		if perr != nil {
			err = perr
		} else if lp.IsZero() {
			err = errors.New("litestream has not read the database yet")
		} else {
			pos = lp.TXID.String()
			err = r.replica.Sync(ctx)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.st.dbErr == "" {
			r.st.dbErrSince = began
		}
		r.st.dbErr = err.Error()
		return
	}
	r.st.dbErr, r.st.dbThrough, r.st.txid = "", began, pos
}

func (r *Replicator) syncKey() {
	if r.cfg.KeyFile == "" {
		return
	}
	// Read every round: a rotation (gengate server-key rotate) rewrites
	// the file, and the replica must carry the keys that open the rows
	// it holds.
	b, err := os.ReadFile(r.cfg.KeyFile)
	r.mu.Lock()
	same := err == nil && r.st.keyDone && bytes.Equal(b, r.keySent)
	r.mu.Unlock()
	if same {
		return
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), r.syncTimeout())
		err = r.root.Put(ctx, KeyObject, b, "application/octet-stream")
		cancel()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.st.keyDone, r.st.keyErr = false, "server key: "+err.Error()
		return
	}
	r.st.keyDone, r.st.keyErr, r.keySent = true, "", b
}

// runFiles copies queued files in the order they were written, one at a
// time; a failed copy is retried every interval, the queue behind it
// waiting.
func (r *Replicator) runFiles() {
	defer r.done.Done()
	if r.local == nil {
		return
	}
	for {
		progressed := r.copyFiles()
		if progressed {
			continue
		}
		select {
		case <-r.quit:
			return
		case <-r.kick:
		case <-time.After(r.cfg.Interval):
		}
	}
}

// copyFiles does one step (a rescan, or the queue's first file) and says
// whether it made progress.
func (r *Replicator) copyFiles() bool {
	select {
	case <-r.quit:
		return false
	default:
	}
	r.mu.Lock()
	rescan := r.st.rescan
	var op fileOp
	if !rescan && len(r.st.pending) > 0 {
		op = r.st.pending[0]
	}
	if !rescan && len(r.st.pending) == 0 {
		r.st.filesThrough = time.Now()
	}
	r.mu.Unlock()
	if !rescan && op.key == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.syncTimeout())
	defer cancel()
	var err error
	if rescan {
		began := time.Now()
		err = r.rescan(ctx)
		r.mu.Lock()
		if err == nil {
			r.st.rescan = false
			// Writes queued while it ran and done before it began are
			// covered by it.
			kept := r.st.pending[:0]
			for _, p := range r.st.pending {
				if !p.at.Before(began) {
					kept = append(kept, p)
				}
			}
			r.st.pending = kept
		}
	} else {
		err = r.copyFile(ctx, op)
		r.mu.Lock()
		if err == nil && len(r.st.pending) > 0 && r.st.pending[0] == op {
			r.st.pending = r.st.pending[1:]
		}
	}
	if err != nil {
		r.st.filesErr = err.Error()
	} else {
		r.st.filesErr = ""
	}
	r.mu.Unlock()
	return err == nil
}

// copyFile copies one file, or deletes its copy. A file gone from the
// disk by the time it is copied was deleted: its deletion follows in the
// queue.
func (r *Replicator) copyFile(ctx context.Context, op fileOp) error {
	if op.delete {
		err := r.files.Delete(ctx, op.key)
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("delete %s: %w", op.key, err)
		}
		return nil
	}
	f, err := r.local.Open(ctx, op.key)
	if isNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	if _, err := r.files.PutStream(ctx, op.key, f, ""); err != nil {
		return fmt.Errorf("copy %s: %w", op.key, err)
	}
	return nil
}

// rescan copies every local file the bucket does not hold yet.
func (r *Replicator) rescan(ctx context.Context) error {
	local, err := r.local.List(ctx, "", time.Now().Add(time.Hour))
	if err != nil {
		return err
	}
	remote, err := r.files.List(ctx, "", time.Now().Add(time.Hour))
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(remote))
	for _, k := range remote {
		have[k] = true
	}
	copied := 0
	for _, k := range local {
		if have[k] || skipKey(k) {
			continue
		}
		if err := r.copyFile(ctx, fileOp{key: k}); err != nil {
			return err
		}
		copied++
	}
	if copied > 0 {
		r.log.Info("replica: copied the files the bucket did not hold", "files", copied)
	}
	return nil
}

// Status is the replica's state, as /readyz, /metrics and the engines
// page show it.
type Status struct {
	// State is "ok", "behind" (the lag is over BehindFactor intervals) or
	// "failing" (the last copy failed; Error says why).
	State string `json:"status"`
	// Target is the bucket and prefix (no parameters, no credentials).
	Target string `json:"target"`
	// LagSeconds: every write older than this is in the replica.
	LagSeconds float64 `json:"lagSeconds"`
	// ReplicatedThrough: every write committed (and file written) before
	// this time is in the replica.
	ReplicatedThrough gengate.JSONTime `json:"replicatedThrough,omitzero"`
	// TXID is the last database transaction Litestream replicated.
	TXID string `json:"txid,omitempty"`
	// FilesPending counts the files waiting to be copied.
	FilesPending int `json:"filesPending"`
	// Interval is --replicate-interval.
	Interval string `json:"interval"`
	Error    string `json:"error,omitempty"`
}

// Status returns the replica's state now.
func (r *Replicator) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(time.Now())
}

func (r *Replicator) statusLocked(now time.Time) Status {
	through := r.st.dbThrough
	if r.local != nil {
		ft := r.st.filesThrough
		if r.st.rescan {
			ft = minTime(ft, r.st.rescanSince.Add(-time.Nanosecond))
		}
		if len(r.st.pending) > 0 {
			ft = minTime(ft, r.st.pending[0].at.Add(-time.Nanosecond))
		}
		through = minTime(through, ft)
	}
	if !r.st.keyDone {
		through = time.Time{}
	}
	since := through
	if since.IsZero() {
		since = r.started
	}
	s := Status{State: "ok", Target: r.cfg.Target.Name, ReplicatedThrough: gengate.JSONTime{Time: through.UTC()},
		LagSeconds: max(now.Sub(since), 0).Seconds(), TXID: r.st.txid, FilesPending: len(r.st.pending),
		Interval: r.cfg.Interval.String()}
	if through.IsZero() {
		s.ReplicatedThrough = gengate.JSONTime{}
	}
	var errs []string
	for _, e := range []string{r.st.dbErr, r.st.filesErr, r.st.keyErr} {
		if e != "" {
			errs = append(errs, e)
		}
	}
	switch {
	case len(errs) > 0:
		s.State, s.Error = "failing", strings.Join(errs, "; ")
	case now.Sub(since) > r.behindAfter():
		s.State = "behind"
	}
	return s
}

// behindAfter is the lag past which the replica is behind.
func (r *Replicator) behindAfter() time.Duration {
	return max(BehindFactor*r.cfg.Interval, MinBehind)
}

// report logs a change of state: a warning when the replica falls behind
// or fails, a line when it has caught up again.
func (r *Replicator) report() {
	r.mu.Lock()
	s := r.statusLocked(time.Now())
	was := r.st.warned
	now := ""
	if s.State != "ok" {
		now = s.State + ": " + s.Error
	}
	r.st.warned = now
	r.mu.Unlock()
	switch {
	case now != "" && now != was:
		r.log.Warn("replica "+s.State+": writes since replicatedThrough would be lost with this disk",
			"lagSeconds", s.LagSeconds, "replicatedThrough", s.ReplicatedThrough.Time, "filesPending", s.FilesPending, "error", s.Error)
	case now == "" && was != "":
		r.log.Info("replica caught up", "lagSeconds", s.LagSeconds)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.IsZero() {
		return time.Time{}
	}
	if b.Before(a) {
		return b
	}
	return a
}

func isNotFound(err error) bool {
	return err != nil && (errors.Is(err, os.ErrNotExist) || gengate.ErrorCode(err) == gengate.ENotFound)
}

// metaDir is Litestream's local state beside the database.
func metaDir(dbPath string) string {
	dir, file := filepath.Split(dbPath)
	return filepath.Join(dir, "."+file+litestream.MetaDirSuffix)
}
