package bulkhead

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// The kinds of event a bulkhead publishes: EventRejected for every rejection of a call
// that came with a live context (Wait = how long the call waited before it), EventWaited
// for a call that got its slot after waiting (Wait = how long). A call that found a free
// slot at once publishes nothing. Waits are measured on the bulkhead's clock and
// saturate: never negative, however large MaxWait is. Each event reaches the recorder (a
// registry's observer) with the context of the call it concerns; context.Background()
// for ConfigChanged.
var (
	// EventRejected ("BulkheadRejected"): no slot was free within the bulkhead's maxWait,
	// or the caller's context ended while the call waited (Err is the rejection, Wait how
	// long it waited). Its attribute "priority" is the call's priority
	// (policy.Priority.String), left out for PriorityCritical (the priority of a call that
	// carries none); its attribute "shed" (a bool, true) is there when the call was shed
	// for its priority: refused for want of a slot
	// while slots remained free for higher priorities (see Config.PriorityReserve); its
	// attribute "shadow" (a bool, true) is there when the bulkhead is in shadow mode (see
	// Shadow): the call was let through, holding no slot. Logged as a warning; span event
	// "resilience.bulkhead.rejected".
	EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "BulkheadRejected",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "BulkheadRejected"),
		Attrs: []policy.EventAttr{{Key: waitq.AttrPriority}, {Key: waitq.AttrShed}, {Key: contract.AttrShadow}}})
	// EventWaited ("BulkheadWaited"): a call waited Wait for a slot, and has it. Logged at
	// debug level; span event "resilience.bulkhead.waited".
	EventWaited = contract.RegisterEvent(Layer, "BulkheadWaited", slog.LevelDebug)
)
