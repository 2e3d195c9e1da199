package redis

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
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

// Key returns the Redis key of the limiter named name on b, a backend made by New:
// "{" + prefix + name + "}".
func Key(b backend.Backend, name string) string { return b.(*Backend).key(name) }

// HasDefaults reports whether b, a backend made by New, has the built-in configuration.
func HasDefaults(b backend.Backend) bool { return b.(*Backend).cfg == defaultConfig() }

// PrefixOf returns the key prefix of b, a backend made by New.
func PrefixOf(b backend.Backend) string { return b.(*Backend).cfg.Prefix }

// InstancesKey returns the key of the live instances of b, a backend made by New.
func InstancesKey(b *Backend) string { return instancesKey(b.cfg.Prefix) }
