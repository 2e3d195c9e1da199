package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

// countingFallback returns a fallback that counts the calls of its function.
func countingFallback(t *testing.T, ev *events) (*fallback.Fallback[string], *int) {
	t.Helper()
	calls := new(int)
	f, err := fallback.New(func(_ context.Context, err error) (string, error) {
		*calls++
		return "cached", nil
	}, fallback.OnEvent(ev.listen))
	require.NoError(t, err)
	return f, calls
}

// A context that is nil or already done when the call arrives runs neither the function
// nor the fallback function and publishes nothing: the call returns the context's error
// (fault: the function ran, its context error then replaced by the fallback's result,
// and a nil context reached the function).
func TestDoneContextOnArrivalRunsNothing(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			ev := &events{}
			f, fallbacks := countingFallback(t, ev)
			calls := 0
			v, err := fallback.DecorateFunc(f, func(ctx context.Context, _ string) (string, error) {
				calls++
				return "", ctx.Err()
			})(c.Ctx, "q")
			require.ErrorIs(t, err, c.Want)
			assert.Empty(t, v)
			assert.Zero(t, calls, "the function never runs")
			assert.Zero(t, *fallbacks, "nor the fallback function")
			assert.Empty(t, ev.get())
		})
	}
}

// The asynchronous call with a done or nil context: a failed future, and nothing runs
// (fault: the function ran, its context error then replaced by the fallback's result).
func TestAsyncDoneContextOnArrivalRunsNothing(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			ev := &events{}
			f, fallbacks := countingFallback(t, ev)
			calls := 0
			fut := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] {
				calls++
				return async.Completed("ok")
			})(c.Ctx, "q")
			require.NotNil(t, fut)
			v, done, err := fut.Result()
			require.True(t, done)
			require.ErrorIs(t, err, c.Want)
			assert.Empty(t, v)
			assert.Zero(t, calls, "the function never runs")
			assert.Zero(t, *fallbacks, "nor the fallback function")
			assert.Empty(t, ev.get())
		})
	}
}

// A function that returns a nil future: no panic; async.ErrNilFuture is an error like
// any other, handled by the fallback or, ignored, returned in a failed future, never a
// nil one (fault: a nil future returned by the decorated function).
func TestAsyncNilFuture(t *testing.T) {
	nilFuture := func(context.Context, string) *async.Future[string] { return nil }

	ev := &events{}
	f, fallbacks := countingFallback(t, ev)
	fut := fallback.DecorateAsyncFunc(f, nilFuture)(context.Background(), "q")
	v, done, err := fut.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
	assert.Equal(t, 1, *fallbacks)
	require.Len(t, ev.get(), 1)
	assert.ErrorIs(t, ev.get()[0].Err, async.ErrNilFuture)

	ignoring, err := fallback.New(cached, fallback.IgnoreOn(async.ErrNilFuture))
	require.NoError(t, err)
	fut = fallback.DecorateAsyncFunc(ignoring, nilFuture)(context.Background(), "q")
	require.NotNil(t, fut, "a failed future, not a nil one")
	_, done, err = fut.Result()
	require.True(t, done)
	require.ErrorIs(t, err, async.ErrNilFuture)
	assert.False(t, fut.Cancel())
}
