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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// Local is a gengate.Blobs in a local directory.
type Local struct {
	dir string
}

var _ gengate.Blobs = (*Local)(nil)

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
// file in the store's partial directory (".tmp-partial", which List skips),
// synced, then renamed to its key: a reader never sees a partial file, and
// one that fails (r's error, a full disk, ctx ended) is removed. A crash
// mid-copy leaves only the temporary file, which SweepPartial removes once
// it is old.
func (l *Local) PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	partial := filepath.Join(l.dir, partialDir)
	if err := os.MkdirAll(partial, 0o700); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(partial, tmpPrefix+"*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The key's directory is made only now, so a failed stream
		// leaves no empty one behind.
		err = os.MkdirAll(filepath.Dir(p), 0o700)
	}
	if err == nil {
		err = os.Rename(tmp, p)
		if errors.Is(err, fs.ErrNotExist) {
			// A Delete of the last file beside the key removed the
			// directory just now: make it again.
			if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
				err = os.Rename(tmp, p)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return n, err
	}
	return n, nil
}

// tmpPrefix starts the names of files being written, and of partialDir,
// the directory under the root that holds them (on the same file system
// as every key, so the final rename is atomic).
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
func (l *Local) SweepPartial(ctx context.Context, before time.Time) (int, error) {
	entries, err := os.ReadDir(filepath.Join(l.dir, partialDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range entries {
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or removed just now
		}
		if err != nil {
			return n, err
		}
		if !info.Mode().IsRegular() || !info.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(l.dir, partialDir, d.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
		n++
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
	return n, nil
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
	os.Remove(filepath.Dir(p)) // only succeeds when empty
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
