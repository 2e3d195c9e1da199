package ratelimit_test

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
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC AS-2, AS-3: a waiting call's hook on its context is removed whichever way the wait
// ends, also when the permit's timer fires before the hook is registered. Permits 10µs
// apart on the system clock make that race frequent (a call under -race on a busy machine
// can take several µs: with 2µs apart none waited); nothing may remain registered on the
// long-lived context once every future is complete.
func TestAS2_ContextHookRemovedWhenTimerFiresFirst(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(10*time.Microsecond), ratelimit.MaxWait(time.Second))
	require.NoError(t, err)
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	const calls = 50_000
	futures := make([]*async.Future[int], 0, 1000)
	waited := 0
	for i := range calls {
		f := call(ctx, i)
		if _, done, _ := f.Result(); !done {
			waited++
		}
		futures = append(futures, f)
		if len(futures) == cap(futures) {
			awaitAll(t, futures)
			futures = futures[:0]
		}
	}
	awaitAll(t, futures)
	require.Positive(t, waited, "some calls waited for their permit")
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

func awaitAll(t *testing.T, fs []*async.Future[int]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, f := range fs {
		_, err := f.Await(ctx)
		require.NoError(t, err)
	}
}

// SPEC AS-2: a permit's timer that fires before the call has registered its hook on the
// context does not leave the hook registered (deterministic: the timer fires inside
// AfterFunc).
func TestAS2_ContextHookRemovedWhenTimerFiresAtOnce(t *testing.T) {
	l := newLimiter(t, ctxtest.EagerClock{Manual: clock.NewManual()}, ratelimit.Permits(1), ratelimit.Period(time.Second),
		ratelimit.MaxWait(time.Hour))
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	require.True(t, l.TryAcquire())
	ctx := ctxtest.NewOwnDone()
	defer ctx.Cancel()
	before := runtime.NumGoroutine()

	v, err := call(ctx, 0).Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
}

// SPEC AS-2, AS-3: on a manual clock, every way a wait ends (its permit, Cancel, its
// context ending) leaves nothing registered on the context.
func TestAS3_ContextHookRemovedOnEveryOutcome(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Millisecond), ratelimit.MaxWait(time.Hour))
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	require.True(t, l.TryAcquire())
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	started := call(shared, 1) // started by its timer
	canceled := call(shared, 2)
	assert.True(t, canceled.Cancel())
	ended := ctxtest.NewOwnDone()
	endedCall := call(ended, 3)
	ended.Cancel()
	_, err := endedCall.Await(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)
	clk.Advance(time.Hour)
	v, err := started.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "no hook left on the context")
	assert.Zero(t, clk.PendingTasks())
}

// A call that waits 1ms for its permit on a manual clock, then starts.
func BenchmarkAsyncWaiting(b *testing.B) { benchAsyncWaiting(b, context.Background(), false) }

// The same with a context that can end: each wait registers a hook on it.
func BenchmarkAsyncWaitingCancelableContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncWaiting(b, ctx, false)
}

// A waiting call canceled before its permit (which comes back, so every call waits).
func BenchmarkAsyncWaitingCanceled(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchAsyncWaiting(b, ctx, true)
}

func benchAsyncWaiting(b *testing.B, ctx context.Context, cancel bool) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Millisecond),
		ratelimit.MaxWait(time.Hour), ratelimit.WithClock(clk))
	require.NoError(b, err)
	done := async.Completed(1)
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return done })
	require.True(b, l.TryAcquire())
	b.ReportAllocs()
	for b.Loop() {
		f := call(ctx, 0)
		if cancel {
			if !f.Cancel() {
				b.Fatal("the call did not wait")
			}
			continue
		}
		clk.Advance(time.Millisecond)
		if _, ok, _ := f.Result(); !ok {
			b.Fatal("the call did not start")
		}
	}
}
