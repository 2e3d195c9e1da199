package policy

import (
	"fmt"
	"strings"
	"time"
)

// EventKind says what happened. Its zero value is no kind.
type EventKind int

// The kinds of event. Admitted calls publish nothing: events are for waits, rejections,
// retries, breaker transitions, timeouts, fallbacks and the state of a shared backend.
const (
	// RateLimiterRejected: a call found no permit within maxWait (Err is the rejection,
	// RetryAfter the time until a permit would be free; Key the key, for a keyed limiter).
	RateLimiterRejected EventKind = iota + 1
	// RateLimiterWaited: a call reserved a permit and waits Wait for it (Key the key, for a
	// keyed limiter).
	RateLimiterWaited
	// RetryAttempt: attempt Attempt failed with Err and the next starts after Wait.
	RetryAttempt
	// RetryExhausted: every attempt was made and the last one, Attempt, failed with Err,
	// an error the retry would have retried.
	RetryExhausted
	// CircuitBreakerTransition: the breaker moved From one state To another.
	CircuitBreakerTransition
	// CircuitBreakerRejected: the breaker refused a call (open, forced open, or half-open
	// with every trial taken). RetryAfter is the time until the breaker lets a trial call
	// through, when it is known (open); 0 otherwise.
	CircuitBreakerRejected
	// TimeoutExceeded: a call ran past its deadline (Timeout is the time it was given).
	TimeoutExceeded
	// BulkheadRejected: no slot was free within the bulkhead's maxWait, or the caller's
	// context ended while the call waited (Err is the rejection, Wait how long it waited).
	BulkheadRejected
	// BulkheadWaited: a call waited Wait for a slot, and has it.
	BulkheadWaited
	// FallbackApplied: the fallback replaced the error Err.
	FallbackApplied
	// RateLimiterBackendFailed: a rate limiter's shared backend (e.g. Redis), or the node
	// of it named by Node, failed or answered too late (Err says how); the limiters whose
	// keys live there apply their failure policy until it answers again.
	RateLimiterBackendFailed
	// RateLimiterBackendRecovered: a rate limiter's shared backend, or the node of it named
	// by Node, answers again after RateLimiterBackendFailed; the limiters whose keys live
	// there use it from this call on.
	RateLimiterBackendRecovered
	// RetryAborted: the retry stopped on an outcome it does not retry, because the
	// caller's context ended, or because the wait before the next attempt would end after
	// the context's deadline. Attempt Attempt failed with Err, which matches AbortOn or
	// not the retry's conditions, or is the last attempt's error as is when the deadline
	// was too near (Err matches the context's error too when the context ended). A call
	// that ends in an error publishes one of RetryExhausted and RetryAborted.
	RetryAborted
	// RateLimiterBackendKeyFailed: the shared backend answered for one key with a data
	// error (e.g. the key holds a value of another type). Key is the backend's key, Err
	// the error.
	// Only that key's calls apply the limiter's failure policy; the backend stays in use
	// for every other key.
	RateLimiterBackendKeyFailed
	// Hedged: the hedge started attempt Attempt (2 or more), Wait after the call began,
	// because no result had arrived within its delay or because attempt Attempt-1 failed
	// with an error that starts a hedge at once (Err is that error; nil after the delay).
	Hedged
	// HedgeWon: attempt Attempt succeeded first; the others were canceled. Published only
	// for a call that started at least one hedge.
	HedgeWon
	// HedgeSkipped: the hedge budget refused attempt Attempt, which was not started.
	HedgeSkipped
	// HedgeFailed: every attempt of a hedged call failed, or one failed with an error that
	// stops the hedge (AbortOn); Err is the error the call fails with, Attempt the attempt
	// that returned it.
	HedgeFailed
	// AdaptiveLimitChanged: an adaptive concurrency limit moved from PreviousLimit to
	// Limit calls in flight.
	AdaptiveLimitChanged
	// AdaptiveLimitRejected: a call found no room under the adaptive limit within its
	// maxWait, or its context ended while it waited (Err is the rejection, Wait how long
	// it waited).
	AdaptiveLimitRejected
	// AdaptiveLimitWaited: a call waited Wait under the adaptive limit, and runs.
	AdaptiveLimitWaited
	// ConfigChanged: a running instance took a new configuration (its Reconfigure, or a
	// registry's Reload); Changed names the settings that changed, by their configuration
	// attribute names (e.g. "permits", "period"), in sorted order.
	ConfigChanged
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
	RetryAborted:                "RetryAborted",
	RateLimiterBackendKeyFailed: "RateLimiterBackendKeyFailed",
	Hedged:                      "Hedged",
	HedgeWon:                    "HedgeWon",
	HedgeSkipped:                "HedgeSkipped",
	HedgeFailed:                 "HedgeFailed",
	AdaptiveLimitChanged:        "AdaptiveLimitChanged",
	AdaptiveLimitRejected:       "AdaptiveLimitRejected",
	AdaptiveLimitWaited:         "AdaptiveLimitWaited",
	ConfigChanged:               "ConfigChanged",
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
//
// Each field has one meaning, whatever the kind; a field that does not apply to a kind is
// its zero value.
type Event struct {
	Kind     EventKind
	Instance string // the policy instance id: its Name, or the wrapped function's id
	// At is when the event happened, on the policy's clock: the time since that clock's
	// origin (clock.Clock.Now), not a wall-clock time. For the system clock the origin is
	// when the process first read it; for a manual clock, its start.
	At time.Duration
	// Wait is how long the call is held before it runs: for RateLimiterWaited the wait
	// for its permit, for RetryAttempt the delay before the next attempt, for
	// BulkheadWaited, BulkheadRejected, AdaptiveLimitWaited and AdaptiveLimitRejected how
	// long it waited for room. For Hedged, the time from the call's start to the hedge's.
	Wait time.Duration
	// RetryAfter is, for a rejection, the time from At until a call could be let through:
	// a limiter's next free permit, an open breaker's remaining open time; 0 when unknown.
	RetryAfter time.Duration
	// Timeout is, for TimeoutExceeded, the time the call was given.
	Timeout time.Duration
	Err     error  // the error involved, if any
	Attempt int    // for retry events the attempt that failed, for hedge events the attempt concerned; from 1
	From    string // for breaker transitions: the state left, e.g. "closed"
	To      string // for breaker transitions: the state entered, e.g. "half-open"
	// Key is the key the event is about: for the events of a keyed limiter (its backend's
	// RateLimiterBackendFailed and RateLimiterBackendRecovered included), the client's
	// key; for RateLimiterBackendKeyFailed, the key as the backend stores it (e.g. the
	// Redis key, which holds the limiter's id, and the client's key for a keyed limiter).
	// Empty otherwise.
	Key string
	// Node is, for RateLimiterBackendFailed and RateLimiterBackendRecovered, the backend
	// node that failed or answers again: for Redis, the address (host:port) of the server,
	// or of the cluster node that owns the key's slot, as the client names it (a Sentinel
	// failover client names itself "FailoverClient"). Empty when the backend cannot name
	// one (e.g. a cluster whose slot map was never loaded), or for another kind of event.
	Node string
	// Limit is, for AdaptiveLimitChanged, the new limit on calls in flight, and
	// PreviousLimit the one it replaces.
	Limit, PreviousLimit int
	// Changed is, for ConfigChanged, the attribute names of the settings that changed,
	// sorted, e.g. ["period", "permits"].
	Changed []string
}

// String formats the event on one line, for logs.
func (e Event) String() string {
	var s string
	switch e.Kind {
	case CircuitBreakerTransition:
		s = fmt.Sprintf("%v %s %s→%s at=%v", e.Kind, e.Instance, e.From, e.To, e.At)
	default:
		s = fmt.Sprintf("%v %s at=%v", e.Kind, e.Instance, e.At)
		if e.Key != "" {
			s += fmt.Sprintf(" key=%q", e.Key)
		}
		if e.Node != "" {
			s += " node=" + e.Node
		}
		if e.Attempt > 0 {
			s += fmt.Sprintf(" attempt=%d", e.Attempt)
		}
		if e.Wait > 0 {
			s += fmt.Sprintf(" wait=%v", e.Wait)
		}
		if e.RetryAfter > 0 {
			s += fmt.Sprintf(" retry-after=%v", e.RetryAfter)
		}
		if e.Timeout > 0 {
			s += fmt.Sprintf(" timeout=%v", e.Timeout)
		}
		if e.Kind == AdaptiveLimitChanged {
			s += fmt.Sprintf(" limit=%d→%d", e.PreviousLimit, e.Limit)
		}
		if len(e.Changed) > 0 {
			s += " changed=" + strings.Join(e.Changed, ",")
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
