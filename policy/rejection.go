package policy

import (
	"time"
)

// Rejection is an error by which a layer refused a call (ratelimit.ErrExceeded,
// circuitbreaker.ErrOpen, bulkhead.ErrFull, adaptivelimit.ErrLimitExceeded): it names
// the layer that refused it, says why and, when it can tell, how long until the layer
// would let a call through. The whole calls' metrics count rejections per layer by it, and
// the protocol adapters (resiliencehttp, resiliencegrpc) answer the call by it (its
// status, a Retry-After header, a RetryInfo detail) without knowing the policy. Every
// built-in policy's rejection is one; a user's policy may return one for its own layer.
// Find it in an error's tree with errors.As, e.g. errors.AsType[policy.Rejection](err).
// Its methods must be safe for concurrent use, as the rejection may be shared by every
// call it refuses.
type Rejection interface {
	error
	// RejectedBy names the layer that refused the call.
	RejectedBy() Layer
	// Refusal says why the layer refused the call; RefusalUnspecified when it does not
	// say.
	Refusal() Refusal
	// RetryIn returns the time from now until the layer would let a call through, ≥ 0,
	// read when it is called; ok is false when the rejection cannot tell. It is a hint for
	// the refused caller, not a RetryAfter: a retry in the same composition does not wait
	// it.
	RetryIn() (wait time.Duration, ok bool)
}

// Refusal is why a layer refused a call, as the protocol adapters (resiliencehttp,
// resiliencegrpc) answer it. Its zero value, RefusalUnspecified, says nothing.
type Refusal uint8

const (
	// RefusalUnspecified: the rejection does not say why; an adapter answers it as any
	// other error (gRPC Unknown).
	RefusalUnspecified Refusal = iota
	// RefusalOverloaded: the layer is at its limit, a rate, a quota or a number of calls
	// in flight, and the call may pass later: HTTP 429 Too Many Requests, gRPC
	// RESOURCE_EXHAUSTED (with a google.rpc.RetryInfo detail when the rejection tells its
	// retry-after). The rejections of the rate limiter, the bulkhead and the adaptive
	// limit are.
	RefusalOverloaded
	// RefusalUnavailable: the layer holds what the call needs unavailable for now, as an
	// open circuit breaker does: HTTP 503 Service Unavailable, gRPC UNAVAILABLE.
	RefusalUnavailable
)
