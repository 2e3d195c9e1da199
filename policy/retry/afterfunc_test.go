package retry_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// SPEC AS-2, AS-3: however an asynchronous call and its waits end (a success after a
// wait, attempts exhausted, Cancel during a wait or an attempt, the context ending during
// a wait or an attempt), nothing stays registered on its context.
func TestAS3_AsyncContextHookRemovedOnEveryOutcome(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.Delay(time.Second))
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	start := func(ctx context.Context) (*asyncFn, *async.Future[int]) {
		fn := &asyncFn{clk: clk}
		return fn, retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
	}
	succeeded, okFut := start(shared)
	exhausted, exhaustedFut := start(shared)
	canceledInWait, canceledInWaitFut := start(shared)
	_, canceledInFlightFut := start(shared)
	endedCtx := ctxtest.NewOwnDone()
	endedInWait, endedInWaitFut := start(endedCtx)
	attemptCtx := ctxtest.NewOwnDone()
	endedInAttempt, endedInAttemptFut := start(attemptCtx)

	for _, fn := range []*asyncFn{succeeded, exhausted, canceledInWait, endedInWait} {
		fn.last().complete(0, errBoom)
	}
	assert.False(t, canceledInWaitFut.Cancel())
	assert.False(t, canceledInFlightFut.Cancel())
	endedCtx.Cancel()
	_, err := await(t, endedInWaitFut)
	require.ErrorIs(t, err, context.Canceled)
	attemptCtx.Cancel()
	endedInAttempt.last().complete(0, errBoom)
	_, err = settled(t, endedInAttemptFut)
	require.ErrorIs(t, err, context.Canceled)

	clk.Advance(time.Second)
	succeeded.last().complete(7, nil)
	v, err := settled(t, okFut)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	exhausted.last().complete(0, errBoom)
	clk.Advance(time.Second)
	exhausted.last().complete(0, errBoom)
	_, err = settled(t, exhaustedFut)
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, 3, exhausted.n())

	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-2: waits whose timers fire as they are armed leave no hook on the context.
func TestAS2_AsyncContextHookRemovedWhenTimerFiresAtOnce(t *testing.T) {
	r := newRetry(t, retry.WithClock(ctxtest.EagerClock{Manual: clock.NewManual()}))
	attempts := 0
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		attempts++
		if attempts == 3 {
			return async.Completed(attempts)
		}
		return async.Failed[int](errBoom)
	})
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	v, err := await(t, call(ctx, struct{}{}))
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// SPEC AS-2: on the system clock, with waits of 1µs that often end as they are armed,
// calls sharing a long-lived context leave nothing registered on it.
func TestAS2_AsyncContextHookRemovedSystemClock(t *testing.T) {
	r := newRetry(t, retry.Delay(time.Microsecond))
	const calls = 20_000
	attempts := make([]atomic.Int32, calls)
	call := retry.DecorateAsyncFunc(r, func(_ context.Context, i int) *async.Future[int] {
		if attempts[i].Add(1) == 3 {
			return async.Completed(i)
		}
		return async.Failed[int](errBoom)
	})
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	futures := make([]*async.Future[int], 0, 1000)
	for i := range calls {
		futures = append(futures, call(ctx, i))
		if len(futures) == cap(futures) {
			for _, f := range futures {
				_, err := await(t, f)
				require.NoError(t, err)
			}
			futures = futures[:0]
		}
	}
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// BenchmarkAsyncRetried with a context that can end: a hook is registered on it.
func BenchmarkAsyncRetriedCancelableContext(b *testing.B) {
	clk := clock.NewManual()
	r := benchRetry(b, retry.WithClock(clk))
	failed, ok := async.Failed[int](errBoom), async.Completed(1)
	n := 0
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		n++
		if n%3 == 0 {
			return ok
		}
		return failed
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, struct{}{})
		clk.Advance(r.Config().Delay)
		clk.Advance(r.Config().Delay)
		if _, done, _ := f.Result(); !done {
			b.Fatal("not done")
		}
	}
}

// A call canceled during its first wait.
func BenchmarkAsyncCanceledDuringTheDelay(b *testing.B) {
	clk := clock.NewManual()
	r := benchRetry(b, retry.WithClock(clk))
	failed := async.Failed[int](errBoom)
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] { return failed })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, struct{}{})
		f.Cancel()
		if clk.PendingTasks() != 0 {
			b.Fatal("the wait goes on")
		}
	}
}
