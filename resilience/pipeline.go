package resilience

import (
	"context"
	"reflect"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
)

// Pipeline applies one composition of policies to calls given one at a time, where Wrap
// fixes the function once. Its id is the instance id of its policies, so
// registry.RateLimiter(id) returns its limiter. A Pipeline is safe for concurrent use.
type Pipeline[T any] struct {
	id    string
	sync  func(context.Context, func(context.Context) (T, error)) (T, error)
	async func(context.Context, func(context.Context) *async.Future[T]) *async.Future[T]
}

// NewPipeline builds the composition of specs once, in the order Wrap uses. Its errors
// are Wrap's.
func NewPipeline[T any](r *Registry, id string, specs ...Spec) (*Pipeline[T], error) {
	type call = func(context.Context) (T, error)
	type asyncCall = func(context.Context) *async.Future[T]
	rs, layers := rows[call, T](nil)
	ars, _ := rows[asyncCall, T](nil)
	p := &Pipeline[T]{id: id}
	err := r.assembleWith(id, reflect.TypeFor[T](), specs, layers, func(c *composition) (err error) {
		if p.sync, err = compose(c, rs, policy.Func[call, T](func(ctx context.Context, fn call) (T, error) { return fn(ctx) }),
			decSync, userSync); err != nil {
			return err
		}
		p.async, err = compose(c, ars, policy.AsyncFunc[asyncCall, T](func(ctx context.Context, fn asyncCall) *async.Future[T] { return fn(ctx) }),
			decAsync, userAsync)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ID returns the pipeline's id.
func (p *Pipeline[T]) ID() string { return p.id }

// Execute calls fn through the pipeline's policies and returns its result, or the error
// of the policy that stopped it (e.g. ratelimit.ErrExceeded).
func (p *Pipeline[T]) Execute(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	return p.sync(ctx, fn)
}

// ExecuteAsync calls fn through the pipeline's policies and returns its future; a
// rejection is a failed future.
func (p *Pipeline[T]) ExecuteAsync(ctx context.Context, fn func(context.Context) *async.Future[T]) *async.Future[T] {
	return p.async(ctx, fn)
}
