package timeout

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// sentinel is the type of ErrTimeout: an error that is also a context.DeadlineExceeded.
type sentinel struct{ msg string }

func (e *sentinel) Error() string { return e.msg }

// Is reports whether target is context.DeadlineExceeded.
func (e *sentinel) Is(target error) bool { return target == context.DeadlineExceeded }

// ErrTimeout is the errors.Is target of every call that ran past its timeout. It also
// matches context.DeadlineExceeded, so code that checks for a missed deadline keeps
// working: errors.Is(ErrTimeout, context.DeadlineExceeded) is true (the reverse is not: a
// deadline of the caller's own context is not this policy's timeout).
var ErrTimeout error = &sentinel{msg: "timeout: call timed out"}

// Error is a timeout's error. Each timeout creates it once per instance and configured
// Duration (when it is built, and again when a reload changes the Duration), so that
// timing out allocates no error. It matches ErrTimeout and context.DeadlineExceeded
// (errors.Is), and is the cause (context.Cause) of the context that the timed-out call ran
// under. Its message names the timeout's id.
//
// A synchronous call that ran past its deadline and whose function then returned an error
// that no retry may retry (a policy.NeverRetried that reports true, e.g. a call that must
// not be sent twice) fails with an error that wraps the Error (errors.As finds it) and is
// itself a policy.NeverRetried that reports true: a retry outside the timeout does not
// retry it. The Error alone is retried as any other error.
type Error struct {
	d   time.Duration
	msg string
}

// final is the error of a timed-out call whose function's own error was never to be
// retried: its Error, which no retry retries.
type final struct{ err *Error }

func (e final) Error() string      { return e.err.msg }
func (e final) Unwrap() error      { return e.err }
func (e final) NeverRetried() bool { return true }

// newTimeoutErrors returns the two errors of the timeout instance of d: the plain one,
// and the one that no retry retries.
func newTimeoutErrors(instance string, d time.Duration) (*Error, error) {
	e := &Error{d: d, msg: "timeout: call" + contract.IDPhrase(" to ", instance) + " timed out after " + d.String()}
	return e, final{e}
}

// Error returns `timeout: call to "<instance>" timed out after <duration>`.
func (e *Error) Error() string { return e.msg }

// Duration returns the timeout that the call exceeded.
func (e *Error) Duration() time.Duration { return e.d }

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *Error) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}
