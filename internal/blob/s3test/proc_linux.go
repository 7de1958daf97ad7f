package s3test

import (
	"os/exec"
	"syscall"
)

// setProcAttr has the kernel kill the server if the test binary dies
// without running its cleanups (a test timeout's panic, say).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
