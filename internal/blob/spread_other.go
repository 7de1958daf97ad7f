//go:build !linux

package blob

// spreadSubdirs does nothing where FS_TOPDIR_FL does not exist
// (spread_linux.go).
func spreadSubdirs(dir string) {}
