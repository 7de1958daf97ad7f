// Package blob stores files by key: the fetched inputs of tasks and their
// finished outputs. Local keeps them in a directory, written atomically
// (temporary file, fsync, rename), so a crash never leaves half a file
// under a key.
package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gengate/gengate"
)

// Local is a gengate.Blobs in a local directory.
type Local struct {
	dir  string
	bufs sync.Pool // *[]byte of copyBufferSize: the copy buffers of PutStream
	dirs sync.Map  // directory path -> *dirSyncer, for directories known to exist
	// parents holds the *dirSyncer of each directory mkdirs made one in
	// (the root, outputs/, inputs/): a few, kept apart from dirs so that
	// dirs holds only directories that still exist.
	parents sync.Map
}

var (
	_ gengate.Blobs = (*Local)(nil)

	_ gengate.BlobLister     = (*Local)(nil)
	_ gengate.PartialSweeper = (*Local)(nil)
)

// NewLocal returns a store rooted at dir, creating it. Files are the
// operator's alone: directories 0700, files 0600. A dir that exists with
// another mode (made by hand, or restored from a copy) has every entry
// under it fixed first; once the root is 0700, later starts skip the walk,
// and nothing below a 0700 directory is reachable by other users anyway.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm() != 0o700 {
		if err := secureTree(dir); err != nil {
			return nil, err
		}
	}
	// The directories made from now on get block groups of their own
	// (spread_linux.go), those made in the root's directories too.
	spreadSubdirs(dir)
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				spreadSubdirs(filepath.Join(dir, e.Name()))
			}
		}
	}
	return &Local{dir: dir}, nil
}

// secureTree makes every directory under root 0700 and every file 0600,
// root last.
func secureTree(root string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(p, 0o700)
		case d.Type().IsRegular():
			return os.Chmod(p, 0o600)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("blob: set file modes under %s: %w", root, err)
	}
	return os.Chmod(root, 0o700)
}

func (l *Local) path(key string) (string, error) {
	clean := filepath.Clean("/" + key)
	if key == "" || clean != "/"+key || strings.Contains(key, "\\") || strings.HasPrefix(key, tmpPrefix) {
		return "", fmt.Errorf("blob: bad key %q", key)
	}
	return filepath.Join(l.dir, filepath.FromSlash(key)), nil
}

// Put writes data under key atomically, replacing what was there.
func (l *Local) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := l.PutStream(ctx, key, bytes.NewReader(data), contentType)
	return err
}

// PutStream copies r to its end under key atomically, replacing what was
// there, and returns the bytes written. The file is written as a temporary
// file (".tmp-…", which List skips) in the key's own directory, synced,
// renamed to its key, and the directory synced, so that the name survives
// a crash before PutStream returns: a reader never sees a partial file, and
// one that fails (r's error, a full disk, ctx ended) is removed. A crash
// mid-copy leaves only the temporary file, which SweepPartial removes once
// it is old. A rename within one directory takes no file-system-wide lock
// and touches one directory; directories known to exist are not made again.
func (l *Local) PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(p)
	f, err := l.createTemp(dir)
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	n, err := l.copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameFile(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return n, err
	}
	return n, l.syncDir(dir)
}

// copyBufferSize is the size of PutStream's copy buffer, io.Copy's.
const copyBufferSize = 32 << 10

// copy copies r to its end into f through a buffer of the store's pool.
// io.Copy into an *os.File made a new 32 KiB buffer for every file
// (File.ReadFrom falls back to a plain copy for a reader that is neither
// a file nor a socket): a third of the bytes the server allocated in
// `gengate bench e2e`.
func (l *Local) copy(f *os.File, r io.Reader) (int64, error) {
	bp, _ := l.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, copyBufferSize)
		bp = &b
	}
	defer l.bufs.Put(bp)
	// struct{ io.Writer } hides File.ReadFrom, which would not use buf.
	return io.CopyBuffer(struct{ io.Writer }{f}, r, *bp)
}

// renameFile is os.Rename(from, to) of a regular file without the Lstat
// of to that os.Rename makes first (to refuse a directory there, which
// rename(2) refuses itself: EISDIR): one system call less per file.
func renameFile(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// createTemp creates a temporary file in dir, making dir first unless it
// is known to exist. A Delete of the last file of a directory removes it,
// so a directory that has gone is made again.
func (l *Local) createTemp(dir string) (*os.File, error) {
	for try := 0; ; try++ {
		if _, ok := l.dirs.Load(dir); ok || try > 0 {
			f, err := createTempFile(dir)
			if !errors.Is(err, fs.ErrNotExist) || try == 3 {
				return f, err
			}
			l.dirs.Delete(dir)
		}
		if err := l.mkdirs(dir); err != nil {
			return nil, err
		}
		l.dirs.LoadOrStore(dir, &dirSyncer{})
	}
}

// mkdirs makes dir and the directories above it that are missing, from
// the highest down, each marked to spread the directories made in it
// (spread_linux.go) before they are made, and syncs the directory of each
// one it made, so that a file renamed into dir later is not lost with its
// directory's name in a crash; directories made at once in one parent
// share its fsync (dirSyncer).
func (l *Local) mkdirs(dir string) error {
	var missing []string // from dir up to the highest directory missing
	for d := dir; d != l.dir && len(d) > len(l.dir); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		spreadSubdirs(missing[i])
	}
	top := dir // the highest directory made; dir's name is synced even when it was there
	if len(missing) > 0 {
		top = missing[len(missing)-1]
	}
	for d := dir; ; d = filepath.Dir(d) {
		// Shared like a rename's: the 256 output shards are made in
		// the first moments of a new store, all in outputs/.
		if err := syncShared(&l.parents, filepath.Dir(d)); err != nil {
			return err
		}
		if d == top || len(d) <= len(l.dir) {
			return nil
		}
	}
}

func syncPath(dir string) error {
	// A bare descriptor: os.Open would also try (and fail) to put it in
	// non-blocking mode and register it with the poller, and undo that:
	// four fcntl and one epoll_ctl per sync.
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return fmt.Errorf("blob: sync directory: %w", &os.PathError{Op: "open", Path: dir, Err: err})
	}
	_, err = ignoringEINTR(func() (int, error) { return 0, syscall.Fsync(fd) })
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("blob: sync directory: %w", &os.PathError{Op: "sync", Path: dir, Err: err})
	}
	return nil
}

// createTempFile creates a new file (mode 0600) named tmpPrefix and a
// random number in dir, like os.CreateTemp(dir, tmpPrefix+"*"), but opens
// it with open(2) and wraps it with os.NewFile: os.OpenFile would also put
// a regular file in non-blocking mode, fail to register it with the
// poller, and put it back (four fcntl and one epoll_ctl, against one fcntl
// for os.NewFile). Writes to it block, as those to any regular file do.
func createTempFile(dir string) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, tmpPrefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err := ignoringEINTR(func() (int, error) {
			return syscall.Open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		})
		if err == syscall.EEXIST {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, tmpPrefix+"*"), Err: fs.ErrExist}
}

func ignoringEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// syncDir makes the renames done in dir durable (fsync of the directory).
// Writers finishing at once share one fsync: a sync started after a
// writer's rename covers it, so a writer that finds one done skips its own.
func (l *Local) syncDir(dir string) error { return syncShared(&l.dirs, dir) }

// syncShared syncs dir through its dirSyncer in syncers.
func syncShared(syncers *sync.Map, dir string) error {
	v, ok := syncers.Load(dir)
	if !ok {
		v, _ = syncers.LoadOrStore(dir, &dirSyncer{})
	}
	return v.(*dirSyncer).sync(dir)
}

type dirSyncer struct {
	renamed atomic.Uint64 // renames done, counted after each
	mu      sync.Mutex
	synced  uint64 // renames covered by the last finished fsync
}

func (d *dirSyncer) sync(dir string) error {
	mine := d.renamed.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.synced >= mine {
		return nil // a sync that started after this rename is done
	}
	upTo := d.renamed.Load()
	if err := syncPath(dir); err != nil {
		return err
	}
	d.synced = upTo
	return nil
}

// tmpPrefix starts the names of files being written. Older versions wrote
// them in partialDir, the directory under the root named with it; those
// are swept like the rest.
const (
	tmpPrefix  = ".tmp-"
	partialDir = ".tmp-partial"
)

// ctxReader stops a copy once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// SweepPartial removes the temporary files of writes that a crash cut
// short, last written before the time, and returns how many it removed.
// They lie beside the keys (and, from older versions, in partialDir), so
// it reads every directory of the store, stating only temporary files.
func (l *Local) SweepPartial(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := filepath.WalkDir(l.dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p != l.dir {
			return nil // removed just now
		}
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), tmpPrefix) || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // renamed or removed just now
		}
		if err != nil {
			return err
		}
		if !info.ModTime().Before(before) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return ctx.Err()
	})
	return n, err
}

// Get reads the file under key; a missing one is an ENotFound error.
func (l *Local) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gengate.Errorf(gengate.ENotFound, "no file")
	}
	return data, err
}

// Open opens the file under key for streaming; a missing one is an
// ENotFound error.
func (l *Local) Open(ctx context.Context, key string) (gengate.BlobFile, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gengate.Errorf(gengate.ENotFound, "no file")
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, gengate.Errorf(gengate.ENotFound, "no file")
	}
	return &localFile{File: f, info: info}, nil
}

type localFile struct {
	*os.File
	info fs.FileInfo
}

func (f *localFile) Size() int64        { return f.info.Size() }
func (f *localFile) ModTime() time.Time { return f.info.ModTime() }

// Delete removes the file under key; a missing one is no error.
func (l *Local) Delete(ctx context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if dir := filepath.Dir(p); os.Remove(dir) == nil { // only succeeds when empty
		l.dirs.Delete(dir) // a task's inputs directory is not kept in memory
	}
	return nil
}

// List returns the keys under prefix whose files were last written before
// the time, in lexical order.
func (l *Local) List(ctx context.Context, prefix string, before time.Time) ([]string, error) {
	// Walk only the directory the prefix lies in, not every output.
	root := filepath.Join(l.dir, filepath.FromSlash(prefix[:strings.LastIndex(prefix, "/")+1]))
	var keys []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return fs.SkipAll // nothing stored under the prefix yet
		}
		if d != nil && d.IsDir() && d.Name() == partialDir {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), tmpPrefix) {
			return err
		}
		rel, err := filepath.Rel(l.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().Before(before) {
			keys = append(keys, key)
		}
		return ctx.Err()
	})
	return keys, err
}
