package resilience

import (
	"context"
	"reflect"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/permitgate"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/chaos"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
	"github.com/resilience4go/resilience4go/policy/throttle"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// RateLimiter is the rate limiter spec (layer "rateLimiter"): permits per period,
// rejecting or waiting up to maxWait. Its configuration segment is "rateLimiter".
func RateLimiter(opts ...ratelimit.Option) Spec { return policyOf(opts) }

// Retry is the retry spec (layer "retry"). Its configuration segment is "retry".
func Retry(opts ...retry.Option) Spec { return policyOf(opts) }

// RetryBudget is the retry budget spec (layer "retryBudget", outside the retry and the
// hedge in the default order): the composition's retry or hedge asks it before each extra
// attempt, and a refused retry ends the call with its last result and error, a refused
// hedge is skipped. A budget shared by name counts the calls and extra attempts of every
// composition that names it. Its configuration segment is "retryBudget".
func RetryBudget(opts ...retrybudget.Option) Spec { return policyOf(opts) }

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

// Throttle is the client-side adaptive throttle spec (layer "throttle", inside the retry
// or hedge and outside the circuit breaker in the default order): calls are rejected
// locally with a probability that grows as the backend refuses more than it accepts over
// a sliding window. Its configuration segment is "throttle".
func Throttle(opts ...throttle.Option) Spec { return policyOf(opts) }

// AdaptiveLimit is the adaptive concurrency limit spec (layer "adaptiveLimit", innermost
// in the default order): at most a limit of calls in flight, a limit that moves with the
// latency it measures. Calls over it are rejected, or wait up to maxWait in arrival
// order. Its configuration segment is "adaptiveLimit".
func AdaptiveLimit(opts ...adaptivelimit.Option) Spec { return policyOf(opts) }

// Chaos is the chaos spec (layer "chaos", innermost in the default order, where it
// stands for the dependency: every other layer sees what it injects): at a rate, it
// injects an error, a result, a latency or a behaviour into calls. It is disabled unless
// chaos.Enabled or the key chaos.enabled turns it on, and a reload switches it on and
// off. A chaos.Result of another type than the function's result fails the wrap with
// R4C-REG-010. Its configuration segment is "chaos".
func Chaos(opts ...chaos.Option) Spec { return policyOf(opts) }

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

// fallbackSpec is the fallback's spec: typed by the wrapped function's result, and built
// for each composition. O is fallback.Option and S the fallback's settings type.
type fallbackSpec[T any, O ~func(*S), S any] struct {
	policySpec[O, S]
	fn func(ctx context.Context, err error) (T, error)
}

func (sp fallbackSpec[T, O, S]) lock() Spec {
	sp.locked = true
	return sp
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

// layerTable is the table of built-in layers, with the decorators of each for calls of
// argument A and result T, in no particular order: the default order is the layers'
// ranks (defaultOrder). A new policy adds its row here, beside its spec function above:
// those are the lines it needs outside its own package. Everything else about it (its
// place in the order, the calls it guards, configuration keys, instances, handles,
// snapshots, events, live changes) goes through the descriptor its package registers. A
// layer that guards only calls returning a future has no sync decorator;
// its descriptor gives the code of the error that refuses it in a synchronous
// composition.
func layerTable[A, T any]() []layerRow[A, T] {
	return []layerRow[A, T]{
		row(fallback.Layer, fallback.Decorate[decorate.Func[A, T], A, T], fallback.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(retrybudget.Layer, retrybudget.Decorate[decorate.Func[A, T], A, T], retrybudget.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(retry.Layer, retry.Decorate[decorate.Func[A, T], A, T], retry.Decorate[decorate.AsyncFunc[A, T], A, T]),
		asyncRow(hedge.Layer, hedge.DecorateAsyncFunc[A, T]),
		row(throttle.Layer, throttle.Decorate[decorate.Func[A, T], A, T], throttle.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(circuitbreaker.Layer, circuitbreaker.Decorate[decorate.Func[A, T], A, T], circuitbreaker.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(ratelimit.Layer, permitgate.DecorateFunc[A, T], permitgate.DecorateAsyncFunc[A, T]),
		row(timeout.Layer, timeout.Decorate[decorate.Func[A, T], A, T], timeout.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(bulkhead.Layer, bulkhead.Decorate[decorate.Func[A, T], A, T], bulkhead.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(adaptivelimit.Layer, adaptivelimit.Decorate[decorate.Func[A, T], A, T], adaptivelimit.Decorate[decorate.AsyncFunc[A, T], A, T]),
		row(chaos.Layer, chaos.Decorate[decorate.Func[A, T], A, T], chaos.Decorate[decorate.AsyncFunc[A, T], A, T]),
	}
}
