// Package adaptivelimit is resilience4go's adaptive concurrency limit (layer
// adaptivelimit.Layer, the innermost of the built-in layers in the default order,
// inside the bulkhead): like a bulkhead it limits the calls in flight at once, but its
// limit moves with the latency it measures, between MinLimit and MaxLimit, starting at
// InitialLimit. A dependency that slows down as more calls reach it gets fewer; one that
// keeps up gets more. The algorithms follow those of Netflix's concurrency-limits
// library: AIMD, Gradient2 and Vegas.
//
// Use it in front of a dependency whose capacity is unknown or changes (a shared
// database, a service that scales), where no fixed bulkhead size would be right for
// long: calls over the limit are rejected at once with a rejection matching
// ErrLimitExceeded, or wait up to MaxWait for room. Build a limiter with New and guard a
// function with NewPolicy, or let a registry build it, composed with other policies,
// with resilience.Wrap:
//
//	l, err := adaptivelimit.New(adaptivelimit.MaxWait(50 * time.Millisecond))
//	get := adaptivelimit.NewPolicy[Stock](l).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.AdaptiveLimit())
//
// Work that is not a single function call can take room by hand: Limiter.Acquire, then
// Permit.Record with the outcome (or Permit.Release).
//
// Where the detail is:
//   - Limiter: how calls are let in, queue and are rejected;
//   - NewPolicy: the samples a call's outcome gives, and what a recorder is told;
//   - AIMD, Gradient2 and Vegas: how each algorithm moves the limit, once per round,
//     and how they compare;
//   - New (the defaults), Config and the options;
//   - ErrLimitExceeded, the rejections; OnEvent, EventChanged, EventRejected and
//     EventWaited, the events.
package adaptivelimit
