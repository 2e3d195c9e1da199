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
//
// A synchronous call that ran past its deadline and whose function then returned an error
// that no retry may retry (a policy.NeverRetried that reports true, e.g. a call that must
// not be sent twice) fails with a TimeoutError whose NeverRetried reports true too: a
// retry outside the timeout does not retry it. Otherwise NeverRetried reports false.
type TimeoutError struct {
	instance string
	d        time.Duration
	msg      string
	final    bool // the timed-out function's error was never to be retried
}

// newTimeoutErrors returns the two errors of a timeout of d: the plain one, and the one
// that no retry retries.
func newTimeoutErrors(instance string, d time.Duration) (plain, final *TimeoutError) {
	msg := `timeout: call to "` + instance + `" timed out after ` + d.String()
	return &TimeoutError{instance: instance, d: d, msg: msg}, &TimeoutError{instance: instance, d: d, msg: msg, final: true}
}

// Error returns `timeout: call to "<instance>" timed out after <duration>`.
func (e *TimeoutError) Error() string { return e.msg }

// InstanceID returns the id of the timeout that ended the call.
func (e *TimeoutError) InstanceID() string { return e.instance }

// Duration returns the timeout that the call exceeded.
func (e *TimeoutError) Duration() time.Duration { return e.d }

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }

// NeverRetried reports whether the timed-out function's own error said that no retry may
// retry the call (policy.NeverRetried); see the type's comment.
func (e *TimeoutError) NeverRetried() bool { return e.final }

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}
