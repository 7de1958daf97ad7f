package blob

// Directories spread over the disk (ext4's Orlov allocator).
//
// ext4 gives a new file an inode in its directory's block group, and a
// new directory one in its parent's group, unless the parent is marked
// the top of a directory hierarchy (FS_TOPDIR_FL, what chattr +T sets):
// then the directories made in it are spread over the groups with the
// most free inodes, as those made at the file system's root are. On an
// ext4 without a journal, finding a free inode also passes over every
// free inode of the group that was deleted in the last seconds (in the
// last minutes while its inode table block is unwritten), looking each
// one up (find_inode_bit and recently_deleted in fs/ext4/ialloc.c). In a
// group where other programs create and delete many files (/tmp on a busy
// host, where `gengate bench` makes its data directory) that made each
// output file's creation cost 0.7–1 ms of CPU, against 25–30 µs in a
// group of its own; storing outputs was half of the server's CPU in
// `bench e2e` (docs/notes/end-to-end.md).
//
// So the store marks its root and every directory it makes: the output
// shards (outputs/<2 characters>) and the other directories under the
// root get groups of their own, and so do the files made in them. The
// flag changes nothing but where new directories are placed; it is not
// inherited, and a file system without it (tmpfs, XFS, ...) refuses it,
// which is ignored.

import (
	"syscall"
	"unsafe"
)

const (
	fsIocGetFlags = 0x80086601 // FS_IOC_GETFLAGS
	fsIocSetFlags = 0x40086602 // FS_IOC_SETFLAGS
	fsTopDirFl    = 0x00020000 // FS_TOPDIR_FL
)

// spreadSubdirs marks dir so that the directories made in it are spread
// over the file system (FS_TOPDIR_FL), best effort.
func spreadSubdirs(dir string) {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	var flags uint32 // the kernel reads and writes an int
	if ioctl(fd, fsIocGetFlags, &flags) != nil || flags&fsTopDirFl != 0 {
		return
	}
	flags |= fsTopDirFl
	_ = ioctl(fd, fsIocSetFlags, &flags)
}

func ioctl(fd int, req uintptr, flags *uint32) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(flags))); e != 0 {
		return e
	}
	return nil
}
