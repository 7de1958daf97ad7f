// Package keyfile keeps a server key in a file of its own under the
// operator's directory: read when it is there, made once when it is not.
// gengate keeps two such keys (the one sealing webhook secrets, and the
// one signing input URLs of a local store); docs/security.md says where.
package keyfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadOrCreate returns the contents of the file at path. When there is no
// such file it makes one with the contents fresh returns: written to a
// temporary file beside it (0600), synced, and hard-linked into place,
// which fails if another process got there first; then the file in place
// is read. So processes starting together agree on one key, and no
// process ever reads a half-written one.
func ReadOrCreate(path string, fresh func() ([]byte, error)) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	content, err := fresh()
	if err != nil {
		return nil, err
	}
	tmp, err := writeTemp(path, content)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// Replace writes content to the file at path in one step: to a temporary
// file beside it (0600), synced, renamed over it, and the directory
// synced, so a crash leaves the old file or the new one, never a mix.
func Replace(path string, content []byte) error {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(path, content)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeTemp writes content to a new temporary file beside path (0600)
// and syncs it; it returns the file's name, which the caller removes (a
// no-op once it is renamed).
func writeTemp(path string, content []byte) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*") // 0600
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
