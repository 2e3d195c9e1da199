package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server die with the test process, even when a timeout kills it
// before its cleanups run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
