package policy

import (
	"fmt"
	"time"
)

// EventKind says what happened. Its zero value is no kind.
type EventKind int

// The kinds of event. Admitted calls publish nothing: events are for waits, rejections,
// retries, breaker transitions, timeouts, fallbacks and the state of a shared backend.
const (
	// RateLimiterRejected: a call found no permit within maxWait (Err is the rejection,
	// Wait the retry-after).
	RateLimiterRejected EventKind = iota + 1
	// RateLimiterWaited: a call reserved a permit and waits Wait for it.
	RateLimiterWaited
	// RetryAttempt: attempt Attempt failed with Err and the next starts after Wait.
	RetryAttempt
	// RetryExhausted: the retry gave up after attempt Attempt, which failed with Err: the
	// attempts are spent, Err may not be retried, or the caller's context ended (Err then
	// matches the context's error too).
	RetryExhausted
	// CircuitBreakerTransition: the breaker moved From one state To another.
	CircuitBreakerTransition
	// CircuitBreakerRejected: the breaker refused a call (open, forced open, or half-open
	// with every trial taken).
	CircuitBreakerRejected
	// TimeoutExceeded: a call ran past its deadline (Wait is the timeout).
	TimeoutExceeded
	// BulkheadRejected: no slot was free within the bulkhead's maxWait, or the caller's
	// context ended while the call waited (Err is the rejection, Wait how long it waited).
	BulkheadRejected
	// BulkheadWaited: a call waited Wait for a slot.
	BulkheadWaited
	// FallbackApplied: the fallback replaced the error Err.
	FallbackApplied
	// RateLimiterBackendFailed: a rate limiter's shared backend (e.g. Redis) failed or
	// answered too late (Err says how); the limiter applies its failure policy until the
	// backend answers again.
	RateLimiterBackendFailed
	// RateLimiterBackendRecovered: a rate limiter's shared backend answers again after
	// RateLimiterBackendFailed; the limiter uses it from this call on.
	RateLimiterBackendRecovered
)

var kindNames = map[EventKind]string{
	RateLimiterRejected:      "RateLimiterRejected",
	RateLimiterWaited:        "RateLimiterWaited",
	RetryAttempt:             "RetryAttempt",
	RetryExhausted:           "RetryExhausted",
	CircuitBreakerTransition: "CircuitBreakerTransition",
	CircuitBreakerRejected:   "CircuitBreakerRejected",
	TimeoutExceeded:          "TimeoutExceeded",
	BulkheadRejected:         "BulkheadRejected",
	BulkheadWaited:           "BulkheadWaited",
	FallbackApplied:          "FallbackApplied",

	RateLimiterBackendFailed:    "RateLimiterBackendFailed",
	RateLimiterBackendRecovered: "RateLimiterBackendRecovered",
}

// String returns the kind's name, e.g. "RateLimiterRejected".
func (k EventKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is what a policy publishes to its listener (the registry's listeners, when it is
// built through one). It is passed by value. Listeners run synchronously, on the
// goroutine where the policy decides: the caller's for a synchronous call and, for an
// asynchronous one, possibly a clock timer's or the one that completes a future. So they
// must be quick and must not call back into the policy that published it.
type Event struct {
	Kind     EventKind
	Instance string        // the policy instance id: its Name, or the wrapped function's id
	At       time.Duration // clock time of the event, since the policy clock's origin
	Wait     time.Duration // for waits, retry delays and rejections with a retry-after
	Err      error         // the error involved, if any
	Attempt  int           // for retry events: the attempt that failed, from 1
	From, To string        // for breaker transitions: the states' names, e.g. "half-open"
}

// String formats the event on one line, for logs.
func (e Event) String() string {
	var s string
	switch e.Kind {
	case CircuitBreakerTransition:
		s = fmt.Sprintf("%v %s %s→%s at=%v", e.Kind, e.Instance, e.From, e.To, e.At)
	default:
		s = fmt.Sprintf("%v %s at=%v", e.Kind, e.Instance, e.At)
		if e.Attempt > 0 {
			s += fmt.Sprintf(" attempt=%d", e.Attempt)
		}
		if e.Wait > 0 {
			s += fmt.Sprintf(" wait=%v", e.Wait)
		}
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	return s
}

// Listener receives events. A nil Listener receives nothing and costs nothing.
type Listener func(Event)

// Publish sends e to l if l is not nil.
func (l Listener) Publish(e Event) {
	if l != nil {
		l(e)
	}
}
