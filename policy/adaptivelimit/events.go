package adaptivelimit

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// The kinds of event an adaptive limit publishes, with EventWaited. A call admitted at
// once publishes nothing.
var (
	// EventChanged ("AdaptiveLimitChanged"): the limit on calls in flight moved from the
	// attribute "previous_limit" to the attribute "limit" (ints). Logged at debug level;
	// no span event. It is published when the whole limit changes (the algorithms keep a
	// fraction), after the new limit is in force, under the algorithm's lock: events
	// reach the listener in the order of the changes.
	EventChanged = policy.RegisterEventKind(policy.EventKindInfo{Name: "AdaptiveLimitChanged",
		Layer: Layer, Level: slog.LevelDebug, Attrs: []policy.EventAttr{{Key: attrLimit}, {Key: attrPreviousLimit}}})
	// EventRejected ("AdaptiveLimitRejected"): a call found no room under the limit
	// within its maxWait, or its context ended while it waited (Err is the rejection,
	// Wait how long it waited). Its attribute "priority" is the call's priority
	// (policy.Priority.String), left out for PriorityCritical (the priority of a call that
	// carries none); its attribute "shed" (a bool, true) is there when the call was shed
	// for its priority: refused for want of room
	// while room remained under the limit for higher priorities (see
	// Config.PriorityReserve); its attribute "shadow" (a bool, true) is there when the
	// limiter is in shadow mode (see Shadow): the call was let through, holding no room.
	// Logged as a warning; span event "resilience.adaptive_limit.rejected".
	EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "AdaptiveLimitRejected",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "AdaptiveLimitRejected"),
		Attrs: []policy.EventAttr{{Key: waitq.AttrPriority}, {Key: waitq.AttrShed}, {Key: contract.AttrShadow}}})
)

// EventWaited ("AdaptiveLimitWaited") is the kind of event an adaptive limit publishes
// for a call let in after waiting for room under the limit: Wait is how long it waited.
// A call let in at once publishes none. Logged at debug level; span event
// "resilience.adaptive_limit.waited".
var EventWaited = contract.RegisterEvent(Layer, "AdaptiveLimitWaited", slog.LevelDebug)

// The keys of the attributes of EventChanged: the new limit and the one it replaces.
const (
	attrLimit         = "limit"
	attrPreviousLimit = "previous_limit"
)
