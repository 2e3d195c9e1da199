package resilience

import "github.com/resilience4go/resilience4go/ratelimit"

// WithRateLimiterBackend keeps the state of every rate limiter the registry builds in b,
// e.g. Redis (package ratelimit/redis), so that the registries of every instance of a
// service share one quota per limiter name: the exception to SPEC RL-15. The limiter's
// id (its Name, or the wrapped function's id, SPEC RG-1) names its state in the backend.
// A spec's own ratelimit.WithBackend wins over it; a nil b keeps limiters in-process
// [the default].
//
// Functions that share a limiter name share one limiter, built by the first of them with
// its backend (SPEC RG-2); the backend is not part of the configuration compared there.
func WithRateLimiterBackend(b ratelimit.Backend) RegistryOption {
	return func(o *registryOptions) { o.backend = b }
}

// RateLimiterBackend returns the registry's default rate limiter backend, or nil.
func (r *Registry) RateLimiterBackend() ratelimit.Backend { return r.backend }

// rateLimiterDefaults sets the registry's backend on a rate limiter's settings, before the
// spec's options, which may replace it.
func (r *Registry) rateLimiterDefaults(s *ratelimit.Settings) {
	s.Backend = r.backend
}
