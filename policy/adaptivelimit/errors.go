package adaptivelimit

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrLimitExceeded is the errors.Is target of every rejection by an adaptive limiter: the
// call did not fit under the limit at once (MaxWait 0) or within MaxWait, or the caller's
// context ended while it waited, or was over on arrival. A rejection also matches, in the
// last two cases, the context's error (context.Canceled, context.DeadlineExceeded or
// policy.ErrNilContext). Every rejection, ErrLimitExceeded itself included, is a
// policy.Rejection: its layer is Layer, its refusal policy.RefusalOverloaded, and it
// cannot tell when a call would fit, which depends on the calls in flight. A limiter's
// rejection also has an InstanceID() string method, which returns the limiter's id, and
// its message names it: `adaptivelimit: concurrency limit of "<instance>" exceeded`,
// followed by the context's error if there is one. Each limiter creates its rejections
// once, at construction, so rejecting allocates nothing.
var ErrLimitExceeded error = &exceededError{msg: "adaptivelimit: concurrency limit exceeded"}

// exceededError is an adaptive limiter's rejection (see ErrLimitExceeded).
type exceededError struct {
	instance string
	cause    error // nil, or the context error that ended the wait
	msg      string
}

func newExceeded(instance string, cause error) *exceededError {
	msg := "adaptivelimit: concurrency limit" + contract.IDPhrase(" of ", instance) + " exceeded"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &exceededError{instance: instance, cause: cause, msg: msg}
}

func (e *exceededError) Error() string { return e.msg }

// InstanceID returns the id of the limiter that rejected the call.
func (e *exceededError) InstanceID() string { return e.instance }

// Is reports whether target is ErrLimitExceeded.
func (e *exceededError) Is(target error) bool { return target == ErrLimitExceeded }

// Unwrap returns the context error that ended the wait, or nil.
func (e *exceededError) Unwrap() error { return e.cause }

// RejectedBy returns Layer.
func (e *exceededError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the call does not fit under the limit.
func (e *exceededError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: when the call would fit depends on the calls in flight.
func (e *exceededError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*exceededError)(nil)
