//go:build !linux

package redis_test

import "os/exec"

// dieWithParent does nothing where the platform cannot tie the server's life to the test
// process; the tests' cleanups stop it.
func dieWithParent(*exec.Cmd) {}
