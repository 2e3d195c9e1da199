//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing where the platform cannot tie the server's life to the test
// process; Main's wrapper and the tests' cleanups stop it.
func dieWithParent(*exec.Cmd) {}
