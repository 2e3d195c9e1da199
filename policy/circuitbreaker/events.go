package circuitbreaker

import (
	"log/slog"
	"strings"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/policy"
)

// The kinds of event a circuit breaker publishes. A call the breaker lets through
// publishes nothing.
var (
	// EventTransition ("CircuitBreakerTransition"): the breaker moved from the state named
	// by the attribute "from" to the one named by "to" (the values of the state
	// constants: "closed", "open", "half-open", "disabled" or "forced-open"). Its attribute
	// "fleet" (a bool, true) is there when the transition came from the breaker's fleet
	// (see WithFleet), not from its own calls. Logged as a warning when it enters Open or ForcedOpen, at
	// info level otherwise; span event "resilience.circuit_breaker.transition", whose
	// from and to name the states in snake_case (e.g. "half_open"), as the metrics do.
	EventTransition = policy.RegisterEventKind(policy.EventKindInfo{Name: "CircuitBreakerTransition",
		Layer: Layer, LevelOf: transitionLevel, SpanEvent: "resilience.circuit_breaker.transition",
		Attrs: []policy.EventAttr{{Key: attrFrom, SpanValue: snakeState}, {Key: attrTo, SpanValue: snakeState}, {Key: attrFleet}}})
	// EventRejected ("CircuitBreakerRejected"): the breaker refused a call (open, forced
	// open, or half-open with every trial taken). Err is the rejection; RetryAfter is the
	// time until the breaker lets a trial call through, when it is known (open); 0
	// otherwise. Its attribute "shadow" (a bool, true) is there when the breaker is in
	// shadow mode (see Shadow): the call was let through. Logged as a warning; span event
	// "resilience.circuit_breaker.rejected".
	EventRejected = policy.RegisterEventKind(policy.EventKindInfo{Name: "CircuitBreakerRejected",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: contract.SpanEvent(Layer, "CircuitBreakerRejected"),
		Attrs: []policy.EventAttr{{Key: contract.AttrShadow}}})
)

// The keys of the attributes of EventTransition: the state left and the state entered.
const (
	attrFrom = "from"
	attrTo   = "to"
)

// transitionAttrs returns the attributes of the transition from one state to another.
func transitionAttrs(from, to state) policy.EventAttrs {
	return policy.EventAttrs{slog.String(attrFrom, from.String()), slog.String(attrTo, to.String())}
}

// transitionLevel returns the level of a transition: a warning when it enters a state
// that refuses calls.
func transitionLevel(e policy.Event) slog.Level {
	switch e.Attr(attrTo).String() {
	case Open, ForcedOpen:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// snakeStateNames are the states' names in snake_case, by state.
var snakeStateNames = func() (out [len(stateNames)]string) {
	for s, name := range stateNames {
		out[s] = strings.ReplaceAll(name, "-", "_")
	}
	return out
}()

// snakeState returns the value of a state's name in snake_case (half_open for
// half-open); an unknown name as it is.
func snakeState(v slog.Value) slog.Value {
	for s, name := range stateNames {
		if name == v.String() {
			return slog.StringValue(snakeStateNames[s])
		}
	}
	return v
}
