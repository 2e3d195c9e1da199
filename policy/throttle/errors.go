package throttle

import (
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// ErrThrottled is the errors.Is target of every rejection by a throttle: the call was
// rejected locally, with the window's rejection probability, and never sent. Every
// rejection, ErrThrottled itself included, is a policy.Rejection (its layer is Layer, its
// refusal policy.RefusalOverloaded), a policy.NeverRetried (true: no retry retries it, as
// none retries an open breaker's rejection, for a call the client chose to shed is not
// sent again at once) and a policy.RetryAfter. Its retry-after, which
// RetryIn and RetryAfter return alike, is read from the throttle when they are called:
// the time from then until the window, if no further call came, would admit every call
// (enough of its oldest buckets would have left it that requests ≤ K·accepts); 0 when it
// already would; at most one Window: it is for the caller, to wait before it calls again. ErrThrottled itself tells no retry-after (ok false). The message of a
// throttle's rejection names the throttle's id:
// `throttle: throttle "<id>" rejected the call locally, the backend refusing too many`.
// Each throttle makes its rejection once, when it is built: rejecting allocates nothing.
var ErrThrottled error = &rejection{msg: "throttle: the call was rejected locally, the backend refusing too many"}

// rejection is a throttle's rejection (see ErrThrottled).
type rejection struct {
	instance string
	src      *Throttle // the throttle that rejected; nil for ErrThrottled
	msg      string
}

func newRejection(instance string, src *Throttle) *rejection {
	return &rejection{instance: instance, src: src,
		msg: "throttle: throttle" + contract.IDPhrase(" ", instance) + " rejected the call locally, the backend refusing too many"}
}

func (e *rejection) Error() string { return e.msg }

// InstanceID returns the id of the throttle that rejected the call ("" for ErrThrottled
// itself, and for a throttle without an id).
func (e *rejection) InstanceID() string { return e.instance }

// Is reports whether target is ErrThrottled.
func (e *rejection) Is(target error) bool { return target == ErrThrottled }

// RejectedBy returns Layer.
func (e *rejection) RejectedBy() policy.Layer { return Layer }

// Refusal returns policy.RefusalOverloaded: the backend refuses calls, and the call may
// pass later.
func (e *rejection) Refusal() policy.Refusal { return policy.RefusalOverloaded }

// RetryIn returns the time until the throttle would admit every call (see ErrThrottled),
// read from it now; false for ErrThrottled itself.
func (e *rejection) RetryIn() (time.Duration, bool) {
	if e.src == nil {
		return 0, false
	}
	return e.src.retryIn(), true
}

// NeverRetried returns true: no retry retries a throttled call.
func (e *rejection) NeverRetried() bool { return true }

// RetryAfter returns what RetryIn returns.
func (e *rejection) RetryAfter() (time.Duration, bool) { return e.RetryIn() }

var (
	_ policy.Rejection    = (*rejection)(nil)
	_ policy.RetryAfter   = (*rejection)(nil)
	_ policy.NeverRetried = (*rejection)(nil)
)
