package slots

import (
	"time"

	"github.com/resilience4go/resilience4go/policy"
)

// Rejection is the rejection of a call by a policy that limits the calls in flight: no
// room at once (MaxWait 0) or within MaxWait, or the caller's context ended while it
// waited, or was nil or already done when the call arrived. It matches the policy's
// sentinel and, when a context ended the call, the context's error. Every Rejection is a
// policy.Rejection: RejectedBy the policy's layer, Refusal policy.RefusalOverloaded,
// RetryIn unknown, since when room comes depends on the calls in flight. Each instance
// makes its rejections once, in Init, so rejecting allocates nothing.
type Rejection struct {
	layer    policy.Layer
	target   error // the sentinel it matches
	instance string
	cause    error // nil, or the context error that ended the call
	msg      string
}

// NewSentinel returns the errors.Is target of every rejection by the policies of layer l,
// a Rejection with message msg, no instance and no cause, which matches itself. A policy
// hands it to Init as Config.Sentinel.
func NewSentinel(l policy.Layer, msg string) error {
	e := &Rejection{layer: l, msg: msg}
	e.target = e
	return e
}

// newRejection returns the rejection by instance (its message msg, which names it) of
// layer l, matching sentinel and cause; cause is nil or a context error, whose message
// then follows msg.
func newRejection(l policy.Layer, sentinel error, instance, msg string, cause error) *Rejection {
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Rejection{layer: l, target: sentinel, instance: instance, cause: cause, msg: msg}
}

// Error returns the message: the one the policy gave, followed by the context error if
// one ended the call.
func (e *Rejection) Error() string { return e.msg }

// InstanceID returns the id of the policy instance that rejected the call, which tells a
// composition's own instance from another's; "" for the sentinel and an instance without
// an id.
func (e *Rejection) InstanceID() string { return e.instance }

// Is reports whether target is the policy's sentinel.
func (e *Rejection) Is(target error) bool { return target == e.target }

// Unwrap returns the context error that ended the call, or nil.
func (e *Rejection) Unwrap() error { return e.cause }

// RejectedBy returns the layer of the policy that refused the call.
func (e *Rejection) RejectedBy() policy.Layer { return e.layer }

// Refusal returns policy.RefusalOverloaded: the call found no room.
func (e *Rejection) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns false: when room comes depends on the calls in flight.
func (e *Rejection) RetryIn() (time.Duration, bool) { return 0, false }

var _ policy.Rejection = (*Rejection)(nil)
