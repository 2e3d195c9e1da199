package timeout

import (
	"context"
	"time"
)

// sentinel is the type of ErrTimeout: an error that is also a context.DeadlineExceeded.
type sentinel struct{ msg string }

func (e *sentinel) Error() string { return e.msg }

// Is reports whether target is context.DeadlineExceeded.
func (e *sentinel) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true, as net.Error timeouts do.
func (e *sentinel) Timeout() bool { return true }

// ErrTimeout is the errors.Is target of every call that ran past its timeout. It also
// matches context.DeadlineExceeded, so code that checks for a missed deadline keeps
// working: errors.Is(ErrTimeout, context.DeadlineExceeded) is true (the reverse is not: a
// deadline of the caller's own context is not this policy's timeout).
var ErrTimeout error = &sentinel{msg: "timeout: call timed out"}

// TimeoutError is a timeout's error. Each timeout creates it once, at construction, so
// that timing out allocates no error. It matches ErrTimeout and context.DeadlineExceeded
// (errors.Is), and is the cause (context.Cause) of the context that the timed-out call ran
// under.
type TimeoutError struct {
	instance string
	d        time.Duration
	msg      string
}

func newTimeoutError(instance string, d time.Duration) *TimeoutError {
	return &TimeoutError{instance: instance, d: d,
		msg: `timeout: call to "` + instance + `" timed out after ` + d.String()}
}

// Error returns `timeout: call to "<instance>" timed out after <duration>`.
func (e *TimeoutError) Error() string { return e.msg }

// InstanceID returns the id of the timeout that ended the call.
func (e *TimeoutError) InstanceID() string { return e.instance }

// Duration returns the timeout that the call exceeded.
func (e *TimeoutError) Duration() time.Duration { return e.d }

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}
