package resilience

import (
	"context"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// Spec is one policy of a composition, as given to Wrap or NewPipeline. Specs may be given
// in any order: the layer order is fixed (SPEC CO-1). Each layer may appear once.
type Spec interface {
	layer() policy.Layer
	// build resolves the spec's configuration and finds or builds its instance, setting it
	// on c. It returns the function that registers a new instance; the caller runs it only
	// once every spec of the composition has been built, so a failed wrap leaves nothing
	// behind. Called with r.mu held.
	build(r *Registry, wrapID string, c *chain) (register func(), err error)
}

// RateLimiter is the rate limiter spec (LayerRateLimiter): permits per period, rejecting or
// waiting up to maxWait (SPEC RL-*). Its configuration segment is "rateLimiter".
func RateLimiter(opts ...ratelimit.Option) Spec {
	return policySpec[ratelimit.Settings, *ratelimit.Limiter, ratelimit.Config, ratelimit.Option]{&rateLimiterKind, opts}
}

// Retry is the retry spec (LayerRetry). Its configuration segment is "retry".
func Retry(opts ...retry.Option) Spec {
	return policySpec[retry.Settings, *retry.Retry, retry.Config, retry.Option]{&retryKind, opts}
}

// CircuitBreaker is the circuit breaker spec (LayerCircuitBreaker). Its configuration
// segment is "circuitBreaker".
func CircuitBreaker(opts ...circuitbreaker.Option) Spec {
	return policySpec[circuitbreaker.Settings, *circuitbreaker.Breaker, circuitbreaker.Config, circuitbreaker.Option]{&breakerKind, opts}
}

// Timeout is the timeout spec (LayerTimeout): each call gets d, not counting the wait for
// a permit, which is outside (SPEC CO-5). Its configuration segment is "timeout"; the key
// timeout.duration overrides d.
func Timeout(d time.Duration, opts ...timeout.Option) Spec {
	return policySpec[timeout.Settings, *timeout.Timeout, timeout.Config, timeout.Option]{&timeoutKind, append([]timeout.Option{timeout.Duration(d)}, opts...)}
}

// Bulkhead is the bulkhead spec (LayerBulkhead): at most maxConcurrent calls in flight. Its
// configuration segment is "bulkhead".
func Bulkhead(opts ...bulkhead.Option) Spec {
	return policySpec[bulkhead.Settings, *bulkhead.Bulkhead, bulkhead.Config, bulkhead.Option]{&bulkheadKind, opts}
}

// Fallback is the fallback spec (LayerFallback): fn replaces the error of a call that the
// other layers could not save. T must be the wrapped function's result type; otherwise
// wrapping fails with R4C-REG-010. Its configuration segment is "fallback".
func Fallback[T any](fn func(ctx context.Context, err error) (T, error), opts ...fallback.Option) Spec {
	return fallbackSpec[T]{fn: fn, opts: opts}
}

// chain holds the instances of one composition, one per layer; nil where a layer is absent.
type chain struct {
	fallback any // *fallback.Fallback[T] of the wrapped function's T
	retry    *retry.Retry
	breaker  *circuitbreaker.Breaker
	limiter  *ratelimit.Limiter
	timeout  *timeout.Timeout
	bulkhead *bulkhead.Bulkhead
}

// kind describes one policy package to the registry: how its settings, options,
// configuration and instances are reached. S is its Settings, P its instance, C its
// Config, O its Option.
type kind[S, P, C, O any] struct {
	segment   string
	defaults  func() S
	common    func(*S) *policy.Common
	config    func(*S) *C
	set       func(*C, string, string) error
	apply     func(*S, ...O)
	build     func(S) (P, error)
	current   func(P) C
	instances func(*Registry) map[string]P
	slot      func(*chain) *P
	registry  func(*Registry, *S) // the registry's own defaults, before any option; may be nil
}

var rateLimiterKind = kind[ratelimit.Settings, *ratelimit.Limiter, ratelimit.Config, ratelimit.Option]{
	segment:   ratelimit.Segment,
	defaults:  ratelimit.DefaultSettings,
	common:    func(s *ratelimit.Settings) *policy.Common { return &s.Common },
	config:    func(s *ratelimit.Settings) *ratelimit.Config { return &s.Config },
	set:       (*ratelimit.Config).Set,
	apply:     (*ratelimit.Settings).Apply,
	build:     ratelimit.NewFromSettings,
	current:   (*ratelimit.Limiter).Config,
	instances: func(r *Registry) map[string]*ratelimit.Limiter { return r.limiters },
	slot:      func(c *chain) **ratelimit.Limiter { return &c.limiter },
	registry:  (*Registry).rateLimiterDefaults,
}

var retryKind = kind[retry.Settings, *retry.Retry, retry.Config, retry.Option]{
	segment:   retry.Segment,
	defaults:  retry.DefaultSettings,
	common:    func(s *retry.Settings) *policy.Common { return &s.Common },
	config:    func(s *retry.Settings) *retry.Config { return &s.Config },
	set:       (*retry.Config).Set,
	apply:     (*retry.Settings).Apply,
	build:     retry.NewFromSettings,
	current:   (*retry.Retry).Config,
	instances: func(r *Registry) map[string]*retry.Retry { return r.retries },
	slot:      func(c *chain) **retry.Retry { return &c.retry },
}

var breakerKind = kind[circuitbreaker.Settings, *circuitbreaker.Breaker, circuitbreaker.Config, circuitbreaker.Option]{
	segment:   circuitbreaker.Segment,
	defaults:  circuitbreaker.DefaultSettings,
	common:    func(s *circuitbreaker.Settings) *policy.Common { return &s.Common },
	config:    func(s *circuitbreaker.Settings) *circuitbreaker.Config { return &s.Config },
	set:       (*circuitbreaker.Config).Set,
	apply:     (*circuitbreaker.Settings).Apply,
	build:     circuitbreaker.NewFromSettings,
	current:   (*circuitbreaker.Breaker).Config,
	instances: func(r *Registry) map[string]*circuitbreaker.Breaker { return r.breakers },
	slot:      func(c *chain) **circuitbreaker.Breaker { return &c.breaker },
}

var timeoutKind = kind[timeout.Settings, *timeout.Timeout, timeout.Config, timeout.Option]{
	segment:   timeout.Segment,
	defaults:  timeout.DefaultSettings,
	common:    func(s *timeout.Settings) *policy.Common { return &s.Common },
	config:    func(s *timeout.Settings) *timeout.Config { return &s.Config },
	set:       (*timeout.Config).Set,
	apply:     (*timeout.Settings).Apply,
	build:     timeout.NewFromSettings,
	current:   (*timeout.Timeout).Config,
	instances: func(r *Registry) map[string]*timeout.Timeout { return r.timeouts },
	slot:      func(c *chain) **timeout.Timeout { return &c.timeout },
}

var bulkheadKind = kind[bulkhead.Settings, *bulkhead.Bulkhead, bulkhead.Config, bulkhead.Option]{
	segment:   bulkhead.Segment,
	defaults:  bulkhead.DefaultSettings,
	common:    func(s *bulkhead.Settings) *policy.Common { return &s.Common },
	config:    func(s *bulkhead.Settings) *bulkhead.Config { return &s.Config },
	set:       (*bulkhead.Config).Set,
	apply:     (*bulkhead.Settings).Apply,
	build:     bulkhead.NewFromSettings,
	current:   (*bulkhead.Bulkhead).Config,
	instances: func(r *Registry) map[string]*bulkhead.Bulkhead { return r.bulkheads },
	slot:      func(c *chain) **bulkhead.Bulkhead { return &c.bulkhead },
}

// policySpec is the spec of every policy but the fallback.
type policySpec[S, P, C, O any] struct {
	k    *kind[S, P, C, O]
	opts []O
}

var layers = map[string]policy.Layer{
	ratelimit.Segment:      policy.LayerRateLimiter,
	retry.Segment:          policy.LayerRetry,
	circuitbreaker.Segment: policy.LayerCircuitBreaker,
	timeout.Segment:        policy.LayerTimeout,
	bulkhead.Segment:       policy.LayerBulkhead,
	fallback.Segment:       policy.LayerFallback,
}

func (sp policySpec[S, P, C, O]) layer() policy.Layer { return layers[sp.k.segment] }

func (sp policySpec[S, P, C, O]) build(r *Registry, wrapID string, c *chain) (func(), error) {
	k := sp.k
	s := k.defaults()
	if k.registry != nil {
		k.registry(r, &s)
	}
	cfg := k.config(&s)
	id, err := r.resolve(k.segment, wrapID, k.common(&s),
		func(attr, value string) error { return k.set(cfg, attr, value) },
		func() { k.apply(&s, sp.opts...) })
	if err != nil {
		return nil, err
	}
	m := k.instances(r)
	p, fresh, err := instance(m, k.segment, id, *cfg, k.current, func() (P, error) { return k.build(s) })
	if err != nil {
		return nil, err
	}
	*k.slot(c) = p
	if !fresh {
		return func() {}, nil
	}
	return func() { m[id] = p }, nil
}

// fallbackSpec is the fallback's spec: typed by the wrapped function's result.
type fallbackSpec[T any] struct {
	fn   func(ctx context.Context, err error) (T, error)
	opts []fallback.Option
}

func (fallbackSpec[T]) layer() policy.Layer { return policy.LayerFallback }

func (sp fallbackSpec[T]) resultType() reflect.Type { return reflect.TypeFor[T]() }

func (sp fallbackSpec[T]) build(r *Registry, wrapID string, c *chain) (func(), error) {
	s := fallback.DefaultSettings()
	if _, err := r.resolve(fallback.Segment, wrapID, &s.Common, s.Config.Set, func() { s.Apply(sp.opts...) }); err != nil {
		return nil, err
	}
	f, err := fallback.NewFromSettings(sp.fn, s)
	if err != nil {
		return nil, err
	}
	c.fallback = f
	return func() {}, nil
}
