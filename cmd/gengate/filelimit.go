//go:build unix

package main

import "syscall"

// raiseFileLimit raises the process's soft limit of open files
// (RLIMIT_NOFILE) to its hard limit, as Go itself does for the soft limit
// since Go 1.19 on most systems, and returns the soft limit in force. Every
// client connection, parked synchronous wait included, is a file: the
// default --max-conns follows this limit (defaultMaxConns).
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = raised.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	return uint64(lim.Cur), nil
}
