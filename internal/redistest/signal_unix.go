//go:build unix

package redistest

import (
	"os"
	"syscall"
)

// stopProcess stops p (SIGSTOP) without ending it; a process that has exited is left as
// it is.
func stopProcess(p *os.Process) { _ = p.Signal(syscall.SIGSTOP) }

// continueProcess lets a stopped p run again (SIGCONT).
func continueProcess(p *os.Process) { _ = p.Signal(syscall.SIGCONT) }
