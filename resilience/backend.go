package resilience

import (
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// WithRateLimiterBackend keeps the state of every rate limiter the registry builds in b,
// e.g. Redis (package ratelimit/redis), so that the registries of every instance of a
// service share one quota per limiter name, where limits are otherwise per registry. The
// limiter's id (its Name, or the wrapped function's id) names its state in the backend.
// A spec's own ratelimit.WithBackend wins over it. Default nil: limiters keep their state
// in-process.
//
// Functions that share a limiter name share one limiter, built by the first of them with
// its backend; the backend is not part of the configuration compared when they share it.
func WithRateLimiterBackend(b backend.Backend) RegistryOption {
	return func(o *registryOptions) {
		if o.presets == nil {
			o.presets = map[policy.Layer]any{}
		}
		if b == nil {
			delete(o.presets, ratelimit.Layer)
			return
		}
		o.presets[ratelimit.Layer] = []ratelimit.Option{ratelimit.WithBackend(b)}
	}
}
