package throttle

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// EventRejected ("ThrottleRejected") is the kind of event a throttle publishes for each
// call it rejects: Err is the rejection (matching ErrThrottled), RetryAfter its
// retry-after when the call was rejected, and the attribute "probability" (a float64,
// e.Attr("probability")) the rejection probability the call was given. A call whose
// context was nil or done when it arrived publishes nothing. Logged as a warning; span
// event "resilience.throttle.rejected". A recorder (a registry's observer) gets it with
// the call's context; a ConfigChanged with context.Background().
var EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "ThrottleRejected",
	Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "ThrottleRejected"),
	Attrs: []policy.EventAttr{{Key: attrProbability}}})

// attrProbability is the key of the attribute of EventRejected that holds the rejection
// probability.
const attrProbability = "probability"
