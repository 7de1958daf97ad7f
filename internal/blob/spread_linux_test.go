package blob

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLocalSpreadsDirectories checks that the store marks its root, the
// directories it finds there and every directory it makes with
// FS_TOPDIR_FL, so that ext4 places the directories made in them (and
// their files) in block groups of their own (spread_linux.go).
func TestLocalSpreadsDirectories(t *testing.T) {
	root := filepath.Join(t.TempDir(), "files")
	if err := os.MkdirAll(filepath.Join(root, "inputs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, supported := spreadsSubdirs(root); !supported {
		t.Skip("the file system has no inode flags (FS_IOC_GETFLAGS)")
	}
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Put(context.Background(), "outputs/ab/task-0.png", []byte("png"), "image/png"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "inputs"), filepath.Join(root, "outputs"), filepath.Join(root, "outputs", "ab")} {
		marked, supported := spreadsSubdirs(d)
		if !supported {
			t.Skip("the file system refuses FS_TOPDIR_FL")
		}
		if !marked {
			t.Errorf("%s is not marked FS_TOPDIR_FL", d)
		}
	}
}

// spreadsSubdirs reports whether dir is marked by spreadSubdirs, and
// whether its file system has inode flags at all.
func spreadsSubdirs(dir string) (marked, supported bool) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	defer syscall.Close(fd)
	var flags uint32
	if ioctl(fd, fsIocGetFlags, &flags) != nil {
		return false, false
	}
	return flags&fsTopDirFl != 0, true
}
