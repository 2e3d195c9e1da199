package bulkhead

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
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
	// long it waited). Logged as a warning; span event "resilience.bulkhead.rejected".
	EventRejected = contract.RegisterEvent(Layer, "BulkheadRejected", slog.LevelWarn)
	// EventWaited ("BulkheadWaited"): a call waited Wait for a slot, and has it. Logged at
	// debug level; span event "resilience.bulkhead.waited".
	EventWaited = contract.RegisterEvent(Layer, "BulkheadWaited", slog.LevelDebug)
)
