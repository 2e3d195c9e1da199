package resilience

import (
	"context"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// Spec is one element of a composition, as given to Wrap or NewPipeline: a policy
// (RateLimiter, Retry, …, or a user's policy through Use), or the order of the layers
// (Order). Specs may be given in any order; each layer may appear once.
type Spec interface {
	// layer is the spec's layer; "" for Order.
	layer() policy.Layer
	// build resolves the spec's configuration and finds or builds its instance. It returns
	// the instance and, for an instance that is new, the function that registers it; the
	// caller runs those only once every spec of the composition has been built, so a
	// failed wrap leaves nothing behind. Called with r.mu held. result is the wrapped
	// function's result type.
	build(r *Registry, wrapID string, result reflect.Type) (inst any, register func(), err error)
}

// RateLimiter is the rate limiter spec (layer "rateLimiter"): permits per period,
// rejecting or waiting up to maxWait. Its configuration segment is "rateLimiter".
func RateLimiter(opts ...ratelimit.Option) Spec { return policyOf(opts) }

// Retry is the retry spec (layer "retry"). Its configuration segment is "retry".
func Retry(opts ...retry.Option) Spec { return policyOf(opts) }

// CircuitBreaker is the circuit breaker spec (layer "circuitBreaker"). Its configuration
// segment is "circuitBreaker".
func CircuitBreaker(opts ...circuitbreaker.Option) Spec { return policyOf(opts) }

// Timeout is the timeout spec (layer "timeout"): each call gets d. In the default order
// the wait for a permit is outside it. Its configuration segment is "timeout": the keys
// configs.<name>.timeout.duration and instances.<id>.timeout.duration override d, which
// overrides defaults.timeout.duration, as options in code override the defaults scope. A
// d of 0 sets no duration in code: the configuration's (of any scope) applies, and
// without one the wrap fails with R4C-ATR-007.
func Timeout(d time.Duration, opts ...timeout.Option) Spec {
	if d == 0 {
		return policyOf(opts)
	}
	return policyOf(append([]timeout.Option{timeout.Duration(d)}, opts...))
}

// Bulkhead is the bulkhead spec (layer "bulkhead"): at most maxConcurrent calls in flight.
// Its configuration segment is "bulkhead".
func Bulkhead(opts ...bulkhead.Option) Spec { return policyOf(opts) }

// Hedge is the hedge spec (layer "hedge"): when an attempt has no result after its delay,
// or fails with an error that hedges at once, another attempt starts beside it, within the
// hedge budget; the first success wins and the other attempts are canceled through every
// inner layer. It takes the retry's place in the order. A hedge guards calls that return
// a future only (WrapAsync, WrapAsync1, Pipeline.ExecuteAsync): wrapping a synchronous
// function with it fails with R4C-HDG-001, and a composition with a hedge and a retry
// fails with R4C-HDG-002 (also when either is disabled: a disabled policy still holds its
// layer). To hedge a synchronous fn, wrap
// func(ctx context.Context) *async.Future[T] { return async.Go(ctx, fn) } and Await the
// future. Its configuration segment is "hedge".
func Hedge(opts ...hedge.Option) Spec { return policyOf(opts) }

// AdaptiveLimit is the adaptive concurrency limit spec (layer "adaptiveLimit", innermost
// in the default order): at most a limit of calls in flight, a limit that moves with the
// latency it measures. Calls over it are rejected, or wait up to maxWait in arrival
// order. Its configuration segment is "adaptiveLimit".
func AdaptiveLimit(opts ...adaptivelimit.Option) Spec { return policyOf(opts) }

// Fallback is the fallback spec (layer "fallback"): fn replaces the error of a call that
// the other layers could not save. It is always the outermost layer. T must be the
// wrapped function's result type; otherwise wrapping fails with R4C-REG-010. Its
// configuration segment is "fallback".
func Fallback[T any](fn func(ctx context.Context, err error) (T, error), opts ...fallback.Option) Spec {
	return newFallbackSpec(fn, policyOf(opts))
}

func newFallbackSpec[T any, O ~func(*S), S any](fn func(ctx context.Context, err error) (T, error), sp policySpec[O, S]) Spec {
	return fallbackSpec[T, O, S]{policySpec: sp, fn: fn}
}

// policyOf is the spec of the registered policy kind whose options are O, functions of
// its settings S. An unregistered kind has no layer, and fails the wrap.
func policyOf[O ~func(*S), S any](opts []O) policySpec[O, S] {
	sp := policySpec[O, S]{opts: opts}
	if d, ok := contract.DescriptorOf[S](); ok {
		sp.l = d.L
	}
	return sp
}

// policySpec is the spec of every registered policy kind.
type policySpec[O ~func(*S), S any] struct {
	l    policy.Layer
	opts []O
}

func (sp policySpec[O, S]) layer() policy.Layer { return sp.l }

// descriptor returns the spec's descriptor.
func (sp policySpec[O, S]) descriptor() (*contract.Descriptor[S], error) {
	d, ok := contract.DescriptorOf[S]()
	if !ok {
		return nil, r4c.Errorf(r4c.BadSpec, "", "", "no policy is registered for options of type %v", reflect.TypeFor[O]())
	}
	return d, nil
}

// settings resolves the spec's settings for a composition of wrapID whose result type is
// result, with the precedence of configuration keys: the built-in defaults, the
// registry's presets, defaults.<segment>.*, the options in code, configs.<name>.*, then
// instances.<id>.*. It returns the descriptor, the settings and where they came from,
// with the instance id.
func (sp policySpec[O, S]) settings(r *Registry, wrapID string, result reflect.Type) (*contract.Descriptor[S], S, origin, error) {
	var s S
	d, err := sp.descriptor()
	if err != nil {
		return nil, s, origin{}, err
	}
	s = d.Defaults()
	if pre, ok := r.presets[sp.l].([]O); ok {
		contract.Apply(&s, pre)
	}
	src, err := resolve(r, d, &s, sp.opts, wrapID)
	if err != nil {
		return nil, s, src, err
	}
	if d.Result != nil {
		if t := d.Result(&s); t != nil && t != result {
			return nil, s, src, r4c.Errorf(r4c.BadSpec, string(sp.l), wrapID,
				"the %s's result predicate takes %v but the function returns %v", sp.l, t, result)
		}
	}
	return d, s, src, nil
}

func (sp policySpec[O, S]) build(r *Registry, wrapID string, result reflect.Type) (any, func(), error) {
	d, s, src, err := sp.settings(r, wrapID, result)
	if err != nil {
		return nil, nil, err
	}
	id := src.id
	key := instanceKey{sp.l, id}
	if p, ok := r.instances[key]; ok {
		if have, want := d.Of(p), d.Config(&s); !contract.Same(have, want) {
			if !src.named && !r.named[key] { // no Name: the same id, wrapped twice
				return nil, nil, r4c.Errorf(r4c.Conflict, string(sp.l), id,
					"the id %s is wrapped twice with different settings (the first wrap's vs this one's): %s; "+
						"the wraps of one id share its instances: give them the same settings, or each its own id",
					shownID(id), contract.Difference(have, want))
			}
			return nil, nil, r4c.Errorf(r4c.Conflict, string(sp.l), id,
				"functions that share this name resolve different configurations (the instance's vs %s's): %s",
				shownID(wrapID), contract.Difference(have, want))
		}
		return p, nil, nil
	}
	p, err := d.Build(s)
	if err != nil {
		return nil, nil, src.keyed(err) // the whole key of the value, e.g. instances.<id>.rateLimiter.period
	}
	return p, func() {
		r.instances[key] = p
		if src.named {
			r.named[key] = true
		}
	}, nil
}

// fallbackSpec is the fallback's spec: typed by the wrapped function's result, and built
// for each composition. O is fallback.Option and S the fallback's settings type.
type fallbackSpec[T any, O ~func(*S), S any] struct {
	policySpec[O, S]
	fn func(ctx context.Context, err error) (T, error)
}

func (sp fallbackSpec[T, O, S]) build(r *Registry, wrapID string, result reflect.Type) (any, func(), error) {
	if result != reflect.TypeFor[T]() {
		return nil, nil, r4c.Errorf(r4c.BadSpec, string(fallback.Layer), wrapID,
			"the fallback returns %v but the function returns %v", reflect.TypeFor[T](), result)
	}
	_, s, _, err := sp.settings(r, wrapID, result)
	if err != nil {
		return nil, nil, err
	}
	// The resolved settings replace the defaults of New whole.
	f, err := fallback.New(sp.fn, any(O(func(t *S) { *t = s })).(fallback.Option))
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}
