package resilience

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

// Wrap returns fn guarded by the policies of specs, composed once, in the default order of
// the layers (see the package documentation) or the one named by Order or the configuration key
// instances.<id>.composition.order. id is the instance id of every policy that has no
// Name; by convention Type.Method, e.g. "SearchAPI.Search". Two functions wrapped with
// one id share those instances, as functions that share a Name do: one limiter's permits,
// one breaker's window. A shared instance is built once, by the first spec: a later
// spec's OnEvent listener (or a limiter's backend), which is not configuration, is not
// used; WithEventListener hears every instance.
//
// Errors (*policy.ConfigError): a policy's invalid configuration (its R4C-ATR or
// R4C-REG-001 code); R4C-REG-004 for an unknown configs.<name>; R4C-REG-008 when a shared
// name resolves a configuration other than its existing instance's; R4C-REG-010 for a nil
// registry or function, an empty id, a layer given twice, or a Fallback, a Use or a
// result predicate whose result type is not T; R4C-REG-011 for a bad order. A failed wrap
// registers nothing.
//
// A wrap costs the same however many came before it. The registry keeps what each wrap
// resolved for as long as it lives, so that Reload can resolve it again: a few hundred
// bytes per spec, also when the id is one used before. Wrap a function once, when the
// service starts, not once per request.
//
// The wrapped function is safe for concurrent use. An admitted or rejected call through a
// rate limiter, a circuit breaker, a bulkhead and a retry allocates nothing.
func Wrap[T any](r *Registry, id string, fn func(context.Context) (T, error), specs ...Spec) (func(context.Context) (T, error), error) {
	if fn == nil {
		return nil, nilFunc(id)
	}
	h, err := wrapSync(r, id, func(ctx context.Context, _ struct{}) (T, error) { return fn(ctx) }, specs, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (T, error) { return h(ctx, struct{}{}) }, nil
}

// Wrap1 is Wrap for a function of one argument, e.g. Search(ctx, query). The argument is
// passed through the policies as is: no closure per call.
func Wrap1[A, T any](r *Registry, id string, fn func(context.Context, A) (T, error), specs ...Spec) (func(context.Context, A) (T, error), error) {
	if fn == nil {
		return nil, nilFunc(id)
	}
	return wrapSync(r, id, decorate.Func[A, T](fn), specs, nil)
}

// args2 carries the two arguments of a Wrap2 function through the policies by value.
type args2[A, B any] struct {
	a A
	b B
}

// Wrap2 is Wrap for a function of two arguments, e.g. Reverse(ctx, lat, lon).
func Wrap2[A, B, T any](r *Registry, id string, fn func(context.Context, A, B) (T, error), specs ...Spec) (func(context.Context, A, B) (T, error), error) {
	if fn == nil {
		return nil, nilFunc(id)
	}
	h, err := wrapSync(r, id, func(ctx context.Context, p args2[A, B]) (T, error) { return fn(ctx, p.a, p.b) }, specs, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, a A, b B) (T, error) { return h(ctx, args2[A, B]{a, b}) }, nil
}

// WrapAsync is Wrap for a function that returns a future: a rejection is a failed future;
// a call that must wait for a permit, a slot or a retry delay is scheduled on the
// registry's clock, with no goroutine parked per call; cancelling the returned future
// before the call starts means it never starts, and gives its permit back (a later call
// can take its turn; the calls behind it keep theirs).
//
// A call that a rate limiter admits at once allocates nothing besides what fn allocates,
// with an observer (WithObserver) or without; with an observer, a future still pending
// when the composition returns it costs one allocation, the callback that records its
// outcome when it completes.
func WrapAsync[T any](r *Registry, id string, fn func(context.Context) *async.Future[T], specs ...Spec) (func(context.Context) *async.Future[T], error) {
	if fn == nil {
		return nil, nilFunc(id)
	}
	h, err := wrapAsync(r, id, func(ctx context.Context, _ struct{}) *async.Future[T] { return fn(ctx) }, specs, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) *async.Future[T] { return h(ctx, struct{}{}) }, nil
}

// WrapAsync1 is WrapAsync for a function of one argument.
func WrapAsync1[A, T any](r *Registry, id string, fn func(context.Context, A) *async.Future[T], specs ...Spec) (func(context.Context, A) *async.Future[T], error) {
	if fn == nil {
		return nil, nilFunc(id)
	}
	return wrapAsync(r, id, decorate.AsyncFunc[A, T](fn), specs, nil)
}

func nilFunc(id string) error {
	return r4c.Errorf(r4c.BadSpec, "", id, "the function to wrap is nil")
}

// wrapSync builds the composition of specs around fn; nil with an error. extra rows of
// the layer table follow the built-in ones.
func wrapSync[A, T any](r *Registry, id string, fn decorate.Func[A, T], specs []Spec, extra []layerRow[A, T]) (decorate.Func[A, T], error) {
	return assemble(r, id, specs, extra, true, fn, decSync[A, T], userSync[A, T], decorate.Guard[A, T], observeSync[A, T])
}

// wrapAsync is wrapSync for calls that return futures.
func wrapAsync[A, T any](r *Registry, id string, fn decorate.AsyncFunc[A, T], specs []Spec, extra []layerRow[A, T]) (decorate.AsyncFunc[A, T], error) {
	return assemble(r, id, specs, extra, false, fn, decAsync[A, T], userAsync[A, T], decorate.GuardAsync[A, T], observeAsync[A, T])
}
