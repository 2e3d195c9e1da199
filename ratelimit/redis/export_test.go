package redis

import (
	"fmt"
	"testing"
	"time"
)

// UniquePrefix returns a key prefix of t's own, so that tests (and repeated runs with
// -count) never share a key: for the tests of this package, inside and outside it.
func UniquePrefix(t testing.TB) string {
	return fmt.Sprintf("r4ctest:%s:%d:", t.Name(), time.Now().UnixNano())
}
