// Package policy is the contract every resilience policy meets: the call shapes it
// decorates, its place in the layer order, the events it publishes, the rejections by
// which it refuses calls and the configuration errors it reports (ConfigError, with codes
// R4C-…). A user's own policy implements Policy, registers its event kinds with
// RegisterEventKind and returns Rejections. What an observer implements and reads is in
// package policy/observe.
//
// Policies live in their own packages (ratelimit, policy/retry, policy/circuitbreaker,
// policy/timeout, policy/bulkhead, policy/fallback, policy/hedge, policy/adaptivelimit) and never import each other; what one
// must know of another travels through the small interfaces defined here.
package policy

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// Call is a synchronous call: ctx first, result and error last.
type Call[T any] func(ctx context.Context) (T, error)

// AsyncCall is a call that returns a future at once. A policy that refuses such a call
// returns a failed future: never a panic, never a nil future.
type AsyncCall[T any] func(ctx context.Context) *async.Future[T]

// Layer names a policy's layer in a composition, and is the segment of its configuration
// keys ("rateLimiter" in defaults.rateLimiter.maxWait). Layer names are camelCase. The built-in layers are composed
// in this order by default, outermost first:
//
//	Fallback → RetryBudget → Retry or Hedge → CircuitBreaker → RateLimiter → Timeout →
//	Bulkhead → AdaptiveLimit → the function
//
// A hedge takes the retry's place and cannot be combined with it; it guards calls that
// return a future only. A composition may name another order; the fallback always stays
// outermost. A user's
// policy has a Layer of its own choosing, any name other than the built-in ones.
type Layer string

// Policy decorates calls returning T. Decorate and DecorateAsync are called once, when a
// function is wrapped; the decorated call is then used for every invocation, so a policy
// does its per-call work without composing anything per call.
type Policy[T any] interface {
	// Layer names the policy's place in a composition.
	Layer() Layer
	// Decorate returns next guarded by the policy.
	Decorate(next Call[T]) Call[T]
	// DecorateAsync returns next guarded by the policy; a rejection is a failed future,
	// and waiting is scheduled on the clock, never parked on a goroutine.
	DecorateAsync(next AsyncCall[T]) AsyncCall[T]
}

// NeverRetried is implemented by errors that no retry may retry, whatever its lists say,
// when NeverRetried returns true: circuitbreaker's rejection is one. Retry checks it with
// errors.As, so the retry package does not import the breaker's.
type NeverRetried interface {
	error
	NeverRetried() bool
}
