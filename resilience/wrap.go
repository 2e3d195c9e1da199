package resilience

import (
	"context"
	"reflect"
	"slices"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/fallback"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// Wrap returns fn guarded by the policies of specs, composed once, in the fixed order of
// SPEC CO-1. id is the instance id of every policy that has no Name (SPEC RG-1); by
// convention Type.Method, e.g. "SearchAPI.Search".
//
// Errors (*policy.ConfigError): a policy's invalid configuration (its R4C-ATR or
// R4C-REG-001 code); R4C-REG-004 for an unknown configs.<name>; R4C-REG-008 when a shared
// name resolves a configuration other than its existing instance's (SPEC RG-2);
// R4C-REG-010 for a layer given twice, or a Fallback whose result type is not T. A failed
// wrap registers nothing.
//
// The wrapped function is safe for concurrent use. An admitted or rejected call through a
// rate limiter, a circuit breaker, a bulkhead and a retry allocates nothing.
func Wrap[T any](r *Registry, id string, fn func(context.Context) (T, error), specs ...Spec) (func(context.Context) (T, error), error) {
	h, err := compose(r, id, func(ctx context.Context, _ struct{}) (T, error) { return fn(ctx) }, specs)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (T, error) { return h(ctx, struct{}{}) }, nil
}

// Wrap1 is Wrap for a function of one argument, e.g. Search(ctx, query). The argument is
// passed through the policies as is: no closure per call.
func Wrap1[A, T any](r *Registry, id string, fn func(context.Context, A) (T, error), specs ...Spec) (func(context.Context, A) (T, error), error) {
	h, err := compose(r, id, policy.Func[A, T](fn), specs)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// args2 carries the two arguments of a Wrap2 function through the policies by value.
type args2[A, B any] struct {
	a A
	b B
}

// Wrap2 is Wrap for a function of two arguments, e.g. Reverse(ctx, lat, lon).
func Wrap2[A, B, T any](r *Registry, id string, fn func(context.Context, A, B) (T, error), specs ...Spec) (func(context.Context, A, B) (T, error), error) {
	h, err := compose(r, id, func(ctx context.Context, p args2[A, B]) (T, error) { return fn(ctx, p.a, p.b) }, specs)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, a A, b B) (T, error) { return h(ctx, args2[A, B]{a, b}) }, nil
}

// WrapAsync is Wrap for a function that returns a future (SPEC AS-1…AS-4): a rejection is
// a failed future; a call that must wait for a permit, a slot or a retry delay is
// scheduled on the registry's clock, with no goroutine parked per call (AS-2); cancelling
// the returned future before the call starts means it never starts, and gives its permit
// back when no later reservation stands behind it (AS-3, RL-9).
func WrapAsync[T any](r *Registry, id string, fn func(context.Context) *async.Future[T], specs ...Spec) (func(context.Context) *async.Future[T], error) {
	h, err := composeAsync(r, id, func(ctx context.Context, _ struct{}) *async.Future[T] { return fn(ctx) }, specs)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) *async.Future[T] { return h(ctx, struct{}{}) }, nil
}

// WrapAsync1 is WrapAsync for a function of one argument.
func WrapAsync1[A, T any](r *Registry, id string, fn func(context.Context, A) *async.Future[T], specs ...Spec) (func(context.Context, A) *async.Future[T], error) {
	h, err := composeAsync(r, id, policy.AsyncFunc[A, T](fn), specs)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// compose builds the sync composition of specs around fn, innermost layer first.
func compose[A, T any](r *Registry, id string, fn policy.Func[A, T], specs []Spec) (policy.Func[A, T], error) {
	c, err := r.build(id, reflect.TypeFor[T](), specs)
	if err != nil {
		return nil, err
	}
	h := fn
	if c.bulkhead != nil {
		h = bulkhead.DecorateFunc(c.bulkhead, h)
	}
	if c.timeout != nil {
		h = timeout.DecorateFunc(c.timeout, h)
	}
	if c.limiter != nil {
		h = ratelimit.DecorateFunc(c.limiter, h)
	}
	if c.breaker != nil {
		h = circuitbreaker.DecorateFunc(c.breaker, h)
	}
	if c.retry != nil {
		h = retry.DecorateFunc(c.retry, h)
	}
	if c.fallback != nil {
		h = fallback.DecorateFunc(c.fallback.(*fallback.Fallback[T]), h)
	}
	return h, nil
}

// composeAsync is compose for calls that return futures.
func composeAsync[A, T any](r *Registry, id string, fn policy.AsyncFunc[A, T], specs []Spec) (policy.AsyncFunc[A, T], error) {
	c, err := r.build(id, reflect.TypeFor[T](), specs)
	if err != nil {
		return nil, err
	}
	h := fn
	if c.bulkhead != nil {
		h = bulkhead.DecorateAsyncFunc(c.bulkhead, h)
	}
	if c.timeout != nil {
		h = timeout.DecorateAsyncFunc(c.timeout, h)
	}
	if c.limiter != nil {
		h = ratelimit.DecorateAsyncFunc(c.limiter, h)
	}
	if c.breaker != nil {
		h = circuitbreaker.DecorateAsyncFunc(c.breaker, h)
	}
	if c.retry != nil {
		h = retry.DecorateAsyncFunc(c.retry, h)
	}
	if c.fallback != nil {
		h = fallback.DecorateAsyncFunc(c.fallback.(*fallback.Fallback[T]), h)
	}
	return h, nil
}

// build resolves every spec of a composition and registers the new instances, all or
// nothing. result is the wrapped function's result type, which a Fallback must match.
func (r *Registry) build(id string, result reflect.Type, specs []Spec) (*chain, error) {
	specs = slices.DeleteFunc(slices.Clone(specs), func(s Spec) bool { return s == nil })
	slices.SortStableFunc(specs, func(a, b Spec) int { return int(a.layer()) - int(b.layer()) })
	for i := 1; i < len(specs); i++ {
		if specs[i].layer() == specs[i-1].layer() {
			return nil, policy.Errorf(policy.CodeBadSpec, specs[i].layer().String(), id,
				"the %s layer is given twice: each layer may appear once per composition", specs[i].layer())
		}
	}
	for _, s := range specs {
		if fs, ok := s.(interface{ resultType() reflect.Type }); ok && fs.resultType() != result {
			return nil, policy.Errorf(policy.CodeBadSpec, fallback.Segment, id,
				"the fallback returns %v but the function returns %v", fs.resultType(), result)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &chain{}
	registers := make([]func(), 0, len(specs))
	for _, s := range specs {
		register, err := s.build(r, id, c)
		if err != nil {
			return nil, err
		}
		registers = append(registers, register)
	}
	for _, register := range registers {
		register()
	}
	return c, nil
}
