package bulkhead

import (
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// ErrFull is the errors.Is target of every rejection by a bulkhead: no slot was free at
// once (MaxWait 0) or within MaxWait, or the caller's context ended while it waited.
// It is itself a *FullError (with no instance id), so that the bare sentinel is a
// policy.Rejection as every rejection is.
var ErrFull error = &FullError{msg: "bulkhead: bulkhead full"}

// FullError is a bulkhead's rejection. Each bulkhead creates its rejections once, at
// construction, so rejecting allocates nothing. It matches ErrFull and, when the caller's
// context ended the wait, the context's error (context.Canceled or
// context.DeadlineExceeded).
type FullError struct {
	instance string
	cause    error // nil, or the context error that ended the wait
	msg      string
}

func newFull(instance string, cause error) *FullError {
	msg := `bulkhead: bulkhead "` + instance + `" is full`
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &FullError{instance: instance, cause: cause, msg: msg}
}

// Error returns `bulkhead: bulkhead "<instance>" is full`, followed by the context error
// if one ended the wait.
func (e *FullError) Error() string { return e.msg }

// InstanceID returns the id of the bulkhead that rejected the call.
func (e *FullError) InstanceID() string { return e.instance }

// Is reports whether target is ErrFull.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// Unwrap returns the context error that ended the wait, or nil.
func (e *FullError) Unwrap() error { return e.cause }

// RejectedBy returns the layer that refused the call: bulkhead.Layer.
func (e *FullError) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the bulkhead has no slot free.
func (e *FullError) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: when a slot frees up depends on the calls in flight.
func (e *FullError) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*FullError)(nil)
