//go:build !unix

package redistest

import "os"

// stopProcess cannot stop a process where the platform has no SIGSTOP: the tests that
// pause a server then see it answer on.
func stopProcess(*os.Process) {}

// continueProcess does nothing where stopProcess does nothing.
func continueProcess(*os.Process) {}
