package resilience

import (
	"context"

	"github.com/resilience4go/resilience4go/async"
)

// Pipeline applies one composition of policies to calls given one at a time: the Go
// counterpart of the seed's Pipeline.builder(registry, "search", …). Its id is the
// instance id of its policies (SPEC RG-1), so registry.RateLimiter(id) returns its
// limiter. A Pipeline is safe for concurrent use.
type Pipeline[T any] struct {
	id    string
	sync  func(context.Context, func(context.Context) (T, error)) (T, error)
	async func(context.Context, func(context.Context) *async.Future[T]) *async.Future[T]
}

// NewPipeline builds the composition of specs once, in the fixed order of SPEC CO-1. Its
// errors are Wrap's.
func NewPipeline[T any](r *Registry, id string, specs ...Spec) (*Pipeline[T], error) {
	s, err := compose(r, id, func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) { return fn(ctx) }, specs)
	if err != nil {
		return nil, err
	}
	// The second composition finds the instances that the first registered.
	a, err := composeAsync(r, id, func(ctx context.Context, fn func(context.Context) *async.Future[T]) *async.Future[T] { return fn(ctx) }, specs)
	if err != nil {
		return nil, err
	}
	return &Pipeline[T]{id: id, sync: s, async: a}, nil
}

// ID returns the pipeline's id.
func (p *Pipeline[T]) ID() string { return p.id }

// Execute calls fn through the pipeline's policies and returns its result, or the error
// of the policy that stopped it (e.g. ratelimit.ErrExceeded).
func (p *Pipeline[T]) Execute(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	return p.sync(ctx, fn)
}

// ExecuteAsync calls fn through the pipeline's policies and returns its future; a
// rejection is a failed future (SPEC AS-1).
func (p *Pipeline[T]) ExecuteAsync(ctx context.Context, fn func(context.Context) *async.Future[T]) *async.Future[T] {
	return p.async(ctx, fn)
}
