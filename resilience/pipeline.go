package resilience

import (
	"context"
	"reflect"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/r4c"
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
// are Wrap's. A pipeline with a layer that guards calls returning a future only (a hedge)
// guards ExecuteAsync only: its Execute returns a *policy.ConfigError (R4C-HDG-001 for a
// hedge) and calls nothing.
func NewPipeline[T any](r *Registry, id string, specs ...Spec) (*Pipeline[T], error) {
	type call = func(context.Context) (T, error)
	type asyncCall = func(context.Context) *async.Future[T]
	rs, _ := rows[call, T](nil, true)
	ars, layers := rows[asyncCall, T](nil, false)
	p := &Pipeline[T]{id: id}
	err := r.assembleWith(id, reflect.TypeFor[T](), specs, layers, func(c *composition) (err error) {
		w := newWhole(r.callRecorder(id), r.clk, c)
		if refused := asyncOnlyPart(id, c.parts); refused != nil {
			p.sync = func(context.Context, call) (T, error) {
				var zero T
				return zero, refused
			}
		} else if p.sync, err = compose(c, rs, decorate.Func[call, T](func(ctx context.Context, fn call) (T, error) { return fn(ctx) }),
			decSync, userSync, decorate.Guard); err != nil {
			return err
		} else {
			p.sync = observeSync(w, p.sync) // a refused Execute is no call, and is not recorded
		}
		if p.async, err = compose(c, ars, decorate.AsyncFunc[asyncCall, T](func(ctx context.Context, fn asyncCall) *async.Future[T] { return fn(ctx) }),
			decAsync, userAsync, decorate.GuardAsync); err != nil {
			return err
		}
		p.async = observeAsync(w, p.async)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// asyncOnlyPart returns the error that refuses the first built-in layer of parts that
// guards only calls returning a future, in a synchronous call; nil when there is none.
func asyncOnlyPart(id string, parts []part) error {
	for _, q := range parts {
		if !q.user {
			if err := asyncOnly(id, q.layer); err != nil {
				return err
			}
		}
	}
	return nil
}

// Execute calls fn through the pipeline's policies and returns its result, or the error
// of the policy that stopped it (e.g. ratelimit.ErrExceeded). A nil fn returns a
// *policy.ConfigError with code R4C-REG-010, and takes nothing from the policies; so does
// a nil pipeline.
func (p *Pipeline[T]) Execute(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	if p == nil || fn == nil {
		var zero T
		return zero, p.nilFunc()
	}
	return p.sync(ctx, fn)
}

// ExecuteAsync calls fn through the pipeline's policies and returns its future; a
// rejection is a failed future. A nil fn gives a future failed with a *policy.ConfigError
// with code R4C-REG-010, and takes nothing from the policies; so does a nil pipeline.
func (p *Pipeline[T]) ExecuteAsync(ctx context.Context, fn func(context.Context) *async.Future[T]) *async.Future[T] {
	if p == nil || fn == nil {
		return async.Failed[T](p.nilFunc())
	}
	return p.async(ctx, fn)
}

func (p *Pipeline[T]) nilFunc() error {
	if p == nil {
		return r4c.Errorf(r4c.BadSpec, "", "", "the pipeline is nil: make one with NewPipeline")
	}
	return r4c.Errorf(r4c.BadSpec, "", p.id, "the function to execute is nil")
}
