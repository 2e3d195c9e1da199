// Package sysclock reads the system clock (clock.System) directly, for the hot paths
// that would otherwise read it through the clock.Clock interface.
package sysclock

import (
	"time"

	"github.com/resilience4go/resilience4go/clock"
)

// Is reports whether c is the clock returned by clock.System. Hot paths use it to read
// the monotonic clock with Now, without an interface call.
func Is(c clock.Clock) bool { return c == clock.System() }

// Now returns the system clock's current reading: the monotonic time since its origin,
// with one clock read.
func Now() time.Duration { return clock.System().Now() }
