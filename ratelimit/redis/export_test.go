package redis

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TATOf reads the TAT of a TAT key's value: its first field, the TAT in nanoseconds, alone
// (as an earlier version wrote it) or followed by the rate it is written at.
func TATOf(v string) (int64, error) {
	f, _, _ := strings.Cut(v, " ")
	return strconv.ParseInt(f, 10, 64)
}

// UniquePrefix returns a key prefix of t's own, so that tests (and repeated runs with
// -count) never share a key: for the tests of this package, inside and outside it.
func UniquePrefix(t testing.TB) string {
	return fmt.Sprintf("r4ctest:%s:%d:", t.Name(), time.Now().UnixNano())
}
