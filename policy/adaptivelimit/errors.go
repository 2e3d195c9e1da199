package adaptivelimit

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
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
var ErrLimitExceeded = slots.NewSentinel(Layer, "adaptivelimit: concurrency limit exceeded")

// exceededMessage returns the message of the rejections of the limiter whose id is id:
// `adaptivelimit: concurrency limit of "<id>" exceeded` (no quoted id for a limiter
// without one), followed by ": " and the context error when one ended the call.
func exceededMessage(id string) string {
	return "adaptivelimit: concurrency limit" + contract.IDPhrase(" of ", id) + " exceeded"
}
