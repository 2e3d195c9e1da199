package retry_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// A context that is nil or already done when the call arrives never runs the function:
// no attempt, no wait, no event, and the context's error (fault: the first attempt ran,
// and a nil context panicked).
func TestDoneContextOnArrivalRunsNoAttempt(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			clk := clock.NewManual()
			ev := &events{}
			r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
			calls := 0
			v, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
				calls++
				return 1, nil
			})(c.Ctx, struct{}{})
			require.ErrorIs(t, err, c.Want)
			assert.Zero(t, v)
			assert.Zero(t, calls, "the function never runs")
			assert.Empty(t, ev.get(), "nothing is published")
			assert.Zero(t, clk.Now(), "no wait")
			assert.Zero(t, clk.PendingTasks())
		})
	}
}

// The asynchronous call with a done or nil context: a failed future, and nothing runs
// (fault: the first attempt ran, and a nil context panicked).
func TestAsyncDoneContextOnArrivalRunsNoAttempt(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			clk := clock.NewManual()
			ev := &events{}
			r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
			fn := &asyncFn{clk: clk}
			fut := retry.DecorateAsyncFunc(r, fn.call)(c.Ctx, struct{}{})
			require.NotNil(t, fut)
			_, err := settled(t, fut)
			require.ErrorIs(t, err, c.Want)
			assert.Zero(t, fn.n(), "the function never runs")
			assert.Empty(t, ev.get(), "nothing is published")
			assert.Zero(t, clk.PendingTasks(), "no wait is scheduled")
		})
	}
}

// A function that returns a nil future: no panic, the attempts are made as for any
// error, and the call's future fails with async.ErrNilFuture (fault: a nil future
// returned by the decorated function).
func TestAsyncNilFuture(t *testing.T) {
	t.Run("every attempt", func(t *testing.T) {
		clk := clock.NewManual()
		ev := &events{}
		r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
		calls := 0
		fut := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			calls++
			return nil
		})(context.Background(), struct{}{})
		require.NotNil(t, fut)
		clk.Advance(time.Second) // both waits
		_, err := settled(t, fut)
		require.ErrorIs(t, err, async.ErrNilFuture)
		assert.Equal(t, 3, calls)
		got := ev.get()
		require.Len(t, got, 3)
		assert.Equal(t, retry.EventExhausted, got[2].Kind)
		assert.ErrorIs(t, got[2].Err, async.ErrNilFuture)
	})
	t.Run("not retried", func(t *testing.T) {
		r := newRetry(t, retry.WithClock(clock.NewManual()), retry.AbortOn(async.ErrNilFuture))
		fut := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			return nil
		})(context.Background(), struct{}{})
		require.NotNil(t, fut, "a future failed with ErrNilFuture, not a nil one")
		_, err := settled(t, fut)
		require.ErrorIs(t, err, async.ErrNilFuture)
	})
	t.Run("a later attempt", func(t *testing.T) {
		clk := clock.NewManual()
		r := newRetry(t, retry.WithClock(clk), retry.MaxAttempts(2))
		fn := &asyncFn{clk: clk}
		calls := 0
		fut := retry.DecorateAsyncFunc(r, func(ctx context.Context, a struct{}) *async.Future[int] {
			calls++
			if calls == 1 {
				return fn.call(ctx, a)
			}
			return nil
		})(context.Background(), struct{}{})
		fn.last().complete(0, errBoom)
		clk.Advance(500 * time.Millisecond)
		_, err := settled(t, fut)
		require.ErrorIs(t, err, async.ErrNilFuture)
		assert.Equal(t, 2, calls)
		assert.False(t, fut.Cancel(), "complete: nothing left to cancel")
	})
	t.Run("canceled during the wait", func(t *testing.T) {
		clk := clock.NewManual()
		r := newRetry(t, retry.WithClock(clk))
		fut := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			return nil
		})(context.Background(), struct{}{})
		assert.False(t, fut.Cancel())
		assert.Zero(t, clk.PendingTasks())
		_, err := settled(t, fut)
		require.ErrorIs(t, err, async.ErrCanceled)
	})
}

// Calls whose function returns nil futures, on a long-lived context, leave nothing
// registered on it (fault: a nil future returned by the decorated function).
func TestAsyncNilFutureLeavesNoContextHook(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk))
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return nil })
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	exhausted := call(shared, struct{}{})
	canceled := call(shared, struct{}{})
	canceled.Cancel()
	clk.Advance(time.Second)
	_, err := settled(t, exhausted)
	require.ErrorIs(t, err, async.ErrNilFuture)
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
	assert.Zero(t, clk.PendingTasks())
}
