package bulkhead

import (
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy/internal/slots"
)

// ErrFull is the errors.Is target of every rejection by a bulkhead: no slot was free at
// once (MaxWait 0) or within MaxWait, or the caller's context ended while it waited, or
// was nil or already done when the call arrived (the rejection then matches the
// context's error too, policy.ErrNilContext for a nil context). Like every rejection,
// it is a policy.Rejection: RejectedBy Layer, Refusal policy.RefusalOverloaded, RetryIn
// unknown: it cannot tell when a slot comes free. The message of a bulkhead's rejection
// names the bulkhead's id. Each bulkhead makes its rejections once, when it is built:
// rejecting allocates nothing.
var ErrFull = slots.NewSentinel(Layer, "bulkhead: bulkhead full")

// fullMessage returns the message of the rejections of the bulkhead whose id is id:
// `bulkhead: bulkhead "<id>" is full` (no quoted id for a bulkhead without one), followed
// by ": " and the context error when one ended the call.
func fullMessage(id string) string {
	return "bulkhead: bulkhead" + contract.IDPhrase(" ", id) + " is full"
}
