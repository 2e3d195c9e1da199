package decorate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// addPrefix is a trivial generic decorator of the shape every policy writes once, for
// any argument type A.
func addPrefix[A any](prefix string) func(decorate.Func[A, string]) decorate.Func[A, string] {
	return func(next decorate.Func[A, string]) decorate.Func[A, string] {
		return func(ctx context.Context, a A) (string, error) {
			v, err := next(ctx, a)
			if err != nil {
				return "", fmt.Errorf("%s: %w", prefix, err)
			}
			return prefix + v, nil
		}
	}
}

func addPrefixAsync[A any](prefix string) func(decorate.AsyncFunc[A, string]) decorate.AsyncFunc[A, string] {
	return func(next decorate.AsyncFunc[A, string]) decorate.AsyncFunc[A, string] {
		return func(ctx context.Context, a A) *async.Future[string] {
			return async.Map(next(ctx, a), func(v string) (string, error) { return prefix + v, nil })
		}
	}
}

type ctxKey struct{}

func TestDecorators_AdaptGenericDecorators(t *testing.T) {
	var p policy.Policy[string] = decorate.Decorators[string]{
		L:     retry.Layer,
		Sync:  addPrefix[struct{}]("retried:"),
		Async: addPrefixAsync[struct{}]("async:"),
	}
	assert.Equal(t, retry.Layer, p.Layer())

	ctx := context.WithValue(context.Background(), ctxKey{}, "v")

	call := p.Decorate(func(ctx context.Context) (string, error) {
		return ctx.Value(ctxKey{}).(string), nil // the caller's ctx reaches the function
	})
	got, err := call(ctx)
	require.NoError(t, err)
	assert.Equal(t, "retried:v", got)

	errBoom := errors.New("boom")
	failing := p.Decorate(func(context.Context) (string, error) { return "", errBoom })
	_, err = failing(ctx)
	assert.ErrorIs(t, err, errBoom)
	assert.EqualError(t, err, "retried:: boom")

	var calls int
	acall := p.DecorateAsync(func(ctx context.Context) *async.Future[string] {
		calls++
		return async.Completed(ctx.Value(ctxKey{}).(string))
	})
	assert.Equal(t, 0, calls, "decorating calls nothing")
	f := acall(ctx)
	got, err = f.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "async:v", got)
	assert.Equal(t, 1, calls)
}

// prefixer is a policy instance whose decorators Dispatch chooses between.
type prefixer struct{ sync, async string }

func prefixSync[A any](p *prefixer, next decorate.Func[A, string]) decorate.Func[A, string] {
	return addPrefix[A](p.sync)(next)
}

func prefixAsync[A any](p *prefixer, next decorate.AsyncFunc[A, string]) decorate.AsyncFunc[A, string] {
	return addPrefixAsync[A](p.async)(next)
}

func TestDispatch_DecoratesEachShapeWithItsDecorator(t *testing.T) {
	p := &prefixer{sync: "s:", async: "a:"}
	ctx := context.Background()

	syncCall := decorate.Dispatch(p, decorate.Func[int, string](func(_ context.Context, a int) (string, error) {
		return fmt.Sprint(a), nil
	}), prefixSync[int], prefixAsync[int])
	got, err := syncCall(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, "s:7", got)

	asyncCall := decorate.Dispatch(p, decorate.AsyncFunc[int, string](func(_ context.Context, a int) *async.Future[string] {
		return async.Completed(fmt.Sprint(a))
	}), prefixSync[int], prefixAsync[int])
	got, err = asyncCall(ctx, 8).Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a:8", got)
}

func TestStart_NilFutureFailsAndAPanicUndoes(t *testing.T) {
	ctx := context.Background()
	undone := 0
	undo := func() { undone++ }

	f := decorate.Start(func(context.Context, int) *async.Future[string] { return async.Completed("v") }, ctx, 1, undo)
	got, err := f.Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "v", got)

	_, err = decorate.Start(func(context.Context, int) *async.Future[string] { return nil }, ctx, 1, undo).Await(ctx)
	assert.ErrorIs(t, err, async.ErrNilFuture)
	assert.Zero(t, undone, "no panic, nothing undone")

	assert.PanicsWithValue(t, "boom", func() {
		decorate.Start(func(context.Context, int) *async.Future[string] { panic("boom") }, ctx, 1, undo)
	})
	assert.Equal(t, 1, undone)
}
