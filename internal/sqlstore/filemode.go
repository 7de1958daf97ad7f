package sqlstore

import (
	"errors"
	"io/fs"
	"os"
)

// File modes of the SQLite database.
//
// The database holds key hashes, balances and every prompt: it is the
// operator's alone. Its directory is 0700 and the database, its WAL and
// its shared-memory file 0600, set on every start, so a --data directory
// made by hand (0755) or by an older gengate (0644 files) is fixed too.
// SQLite creates the WAL and shared-memory files with the database file's
// mode, so new ones follow.

const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// secureDir creates dir (and its parents) if needed and makes it 0700.
func secureDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	return os.Chmod(dir, dirMode)
}

// secureDBFiles creates the database file at path 0600 if it does not
// exist, and makes it and its -wal, -shm and -journal files 0600.
func secureDBFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Chmod(p, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
