// Package circuitbreaker is resilience4go's circuit breaker: it stops calling a function
// that keeps failing (or keeps being slow), gives it time to recover, and then tries it
// again with a few trial calls. Its semantics are those of Resilience4j's CircuitBreaker.
// Its states print the way Go names things ("closed", "half-open"), while its
// configuration keys keep Resilience4j's names and values (circuitBreaker.slidingWindowType
// is COUNT_BASED or TIME_BASED).
//
// Use it in front of a dependency that can be down for a while (a remote service, a
// database): while it is, callers fail at once with a rejection matching ErrOpen instead
// of waiting on it, and it gets no load until a few trial calls show it has recovered.
// Build a breaker with New and guard a function with NewPolicy, or let a registry build
// it, composed with other policies, with resilience.Wrap:
//
//	b, err := circuitbreaker.New(circuitbreaker.WaitInOpen(30 * time.Second))
//	get := circuitbreaker.NewPolicy[Stock](b).Decorate(fetchStock)
//
//	get, err := resilience.Wrap(reg, "Inventory.Get", fetchStock, resilience.CircuitBreaker())
//
// A registry shares one breaker among the functions that give it the same Name, applies
// its configuration keys and reloads them, and hands the breaker out (resilience.Lookup
// with Layer).
//
// Where the detail is:
//   - Breaker: the states, what moves the breaker between them, its sliding windows;
//   - NewPolicy: how a call's outcome counts, the calls that do not count, what a
//     recorder is told, and what a call costs;
//   - New (the defaults), Config (every setting, and what a reload changes on a running
//     breaker) and the options;
//   - ErrOpen, the rejections; OnEvent, the events; TransitionTo and Reset, moving the
//     breaker by hand; Layer, its place among the other layers;
//   - WithFleet: one breaker's state shared by the processes of a service (through Redis,
//     package policy/circuitbreaker/redis), and what two of them may disagree on (that
//     package's documentation).
package circuitbreaker
