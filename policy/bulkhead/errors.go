package bulkhead

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrFull is the errors.Is target of every rejection by a bulkhead: no slot was free at
// once (MaxWait 0) or within MaxWait, or the caller's context ended while it waited, or
// was nil or already done when the call arrived (the rejection then matches the
// context's error too, policy.ErrNilContext for a nil context). Like every rejection,
// it is a policy.Rejection: RejectedBy Layer, Refusal policy.RefusalOverloaded, RetryIn
// unknown: it cannot tell when a slot comes free. The message of a bulkhead's rejection
// names the bulkhead's id. Each bulkhead makes its rejections once, when it is built:
// rejecting allocates nothing.
var ErrFull error = &fullError{msg: "bulkhead: bulkhead full"}

// fullError is a bulkhead's rejection. Each bulkhead creates its rejections once, at
// construction, so rejecting allocates nothing. It matches ErrFull and, when the caller's
// context ended the wait, the context's error (context.Canceled or
// context.DeadlineExceeded).
type fullError struct {
	instance string
	cause    error // nil, or the context error that ended the wait
	msg      string
}

func newFull(instance string, cause error) *fullError {
	msg := "bulkhead: bulkhead" + contract.IDPhrase(" ", instance) + " is full"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &fullError{instance: instance, cause: cause, msg: msg}
}

// Error returns `bulkhead: bulkhead "<instance>" is full`, followed by the context error
// if one ended the wait.
func (e *fullError) Error() string { return e.msg }

// InstanceID returns the id of the bulkhead that rejected the call, which tells a
// composition's own bulkhead from another's.
func (e *fullError) InstanceID() string { return e.instance }

// Is reports whether target is ErrFull.
func (e *fullError) Is(target error) bool { return target == ErrFull }

// Unwrap returns the context error that ended the wait, or nil.
func (e *fullError) Unwrap() error { return e.cause }

// RejectedBy returns the layer that refused the call: bulkhead.Layer.
func (e *fullError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the bulkhead has no slot free.
func (e *fullError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: when a slot frees up depends on the calls in flight.
func (e *fullError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*fullError)(nil)
