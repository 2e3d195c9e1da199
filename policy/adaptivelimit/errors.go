package adaptivelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// ErrLimitExceeded is the errors.Is target of every rejection by an adaptive limiter: the
// call did not fit under the limit at once (MaxWait 0) or within MaxWait, or the caller's
// context ended while it waited.
// It is itself an *ExceededError (with no instance id), so that the bare sentinel is a
// policy.Rejection as every rejection is.
var ErrLimitExceeded error = &ExceededError{msg: "adaptivelimit: concurrency limit exceeded"}

// ExceededError is an adaptive limiter's rejection. Each limiter creates its rejections
// once, at construction, so rejecting allocates nothing. It matches ErrLimitExceeded and,
// when the caller's context ended the wait or was over on arrival, the context's error
// (context.Canceled, context.DeadlineExceeded or policy.ErrNilContext).
type ExceededError struct {
	instance string
	cause    error // nil, or the context error that ended the wait
	msg      string
}

func newExceeded(instance string, cause error) *ExceededError {
	msg := `adaptivelimit: concurrency limit of "` + instance + `" exceeded`
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &ExceededError{instance: instance, cause: cause, msg: msg}
}

// Error returns `adaptivelimit: concurrency limit of "<instance>" exceeded`, followed by
// the context error if one ended the wait.
func (e *ExceededError) Error() string { return e.msg }

// InstanceID returns the id of the limiter that rejected the call.
func (e *ExceededError) InstanceID() string { return e.instance }

// Is reports whether target is ErrLimitExceeded.
func (e *ExceededError) Is(target error) bool { return target == ErrLimitExceeded }

// Unwrap returns the context error that ended the wait, or nil.
func (e *ExceededError) Unwrap() error { return e.cause }

// RejectedBy returns the layer that refused the call: adaptivelimit.Layer.
func (e *ExceededError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the call does not fit under the limit.
func (e *ExceededError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: when the call would fit depends on the calls in flight.
func (e *ExceededError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*ExceededError)(nil)
