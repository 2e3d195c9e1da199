// Package clock is the time source of every policy in resilience4go.
//
// A Clock reports monotonic time as a time.Duration since its own origin, sleeps with a
// context, and schedules functions. System is the process's monotonic clock; Manual is a
// clock that moves only when a test advances it, so that every time-dependent behaviour
// (permits coming back, retry delays, timeouts, breaker waits) can be tested exactly: a
// call that waits on a Manual clock advances it instead of sleeping, and PendingTasks
// tells a test what is still scheduled.
package clock

import (
	"context"
	"time"
)

// Clock is a monotonic time source. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the time elapsed since the clock's origin, in nanoseconds.
	// It never goes backwards.
	Now() time.Duration
	// Sleep blocks for d, or until ctx ends, whichever comes first. It returns ctx.Err()
	// if ctx ended first (or was already done), nil otherwise. d <= 0 returns at once.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc runs f once, d from now, and returns a Timer that can stop it. It never
	// runs f on the calling goroutine before it returns, not even for d <= 0: the
	// policies arm timers while they hold a lock that f takes. Both clocks of this package
	// keep to this (System runs f on its own goroutine, Manual at the next Advance).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a function scheduled by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the function from running. It returns false if the function has
	// already run (or started) or the timer was already stopped.
	Stop() bool
}

// origin is the fixed instant System measures from. time.Since of a Time that carries a
// monotonic reading reads only the monotonic clock: one clock read per Now.
var origin = time.Now()

type systemClock struct{}

// System returns the process's monotonic clock. Now costs one monotonic clock read;
// AfterFunc uses real runtime timers; Sleep honours the context (a nil ctx never ends).
// It is safe for concurrent use and is the default clock of every policy.
func System() Clock { return systemClock{} }

func (systemClock) Now() time.Duration { return time.Since(origin) }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (systemClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}
