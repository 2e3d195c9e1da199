package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

// pendingCall returns an async function whose one future the test completes, and
// reports whether that future's work was canceled.
func pendingCall() (decorate.AsyncFunc[string, string], func(string, error), *bool) {
	canceled := new(bool)
	fut, complete := async.NewCancelablePromise[string](func() bool { *canceled = true; return true })
	return func(context.Context, string) *async.Future[string] { return fut }, complete, canceled
}

func TestAsyncHandledFailure(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.OnEvent(ev.listen))
	next, complete, _ := pendingCall()
	fut := fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")
	_, done, _ := fut.Result()
	require.False(t, done)
	assert.Empty(t, ev.get())

	complete("", errBoom)
	v, err := fut.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "cached (boom)", v)
	require.Len(t, ev.get(), 1)
	assert.Equal(t, fallback.EventApplied, ev.get()[0].Kind)
	assert.Same(t, errBoom, ev.get()[0].Err)
}

func TestAsyncSuccessAndIgnored(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.IgnoreOn(errOther), fallback.OnEvent(ev.listen))

	next, complete, _ := pendingCall()
	fut := fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")
	complete("fresh", nil)
	v, err := fut.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "fresh", v)

	next, complete, _ = pendingCall()
	fut = fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")
	complete("partial", errOther)
	v, err = fut.Await(context.Background())
	require.Same(t, errOther, err)
	assert.Equal(t, "partial", v)
	assert.Empty(t, ev.get())
}

func TestAsyncAlreadyComplete(t *testing.T) {
	f := newFallback(t, fallback.HandleOn(errBoom))
	ok := async.Completed("fresh")
	assert.Same(t, ok, fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return ok })(context.Background(), ""))
	other := async.Failed[string](errOther)
	assert.Same(t, other, fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] { return other })(context.Background(), ""))

	fut := fallback.DecorateAsyncFunc(f, func(context.Context, string) *async.Future[string] {
		return async.Failed[string](errBoom)
	})(context.Background(), "")
	v, done, err := fut.Result()
	require.True(t, done, "a failure already known is replaced at once")
	require.NoError(t, err)
	assert.Equal(t, "cached (boom)", v)
}

// SPEC AS-4: cancelling the returned future cancels the inner one, and the cancellation
// does not reach the fallback.
func TestAsyncCancelPropagates(t *testing.T) {
	ev := &events{}
	f := newFallback(t, fallback.OnEvent(ev.listen))
	next, complete, canceled := pendingCall()
	fut := fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")
	assert.True(t, fut.Cancel(), "the inner call reports it had not started")
	assert.True(t, *canceled)
	_, err := fut.Await(context.Background())
	require.ErrorIs(t, err, async.ErrCanceled)
	complete("late", nil)
	assert.Empty(t, ev.get(), "the fallback is not applied to the cancellation")
}
