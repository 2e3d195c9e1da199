package ratelimit_test

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
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

func asyncSetup(t *testing.T) (*clock.Manual, *ratelimit.Limiter, policy.AsyncCall[string], *atomic.Int64) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(5*time.Second))
	var calls atomic.Int64
	call := ratelimit.NewPolicy[string](l).DecorateAsync(func(ctx context.Context) *async.Future[string] {
		calls.Add(1)
		return async.Completed("done")
	})
	return clk, l, call, &calls
}

// SPEC AS-2, CL-2: a call that must wait is scheduled on a clock timer and starts when
// the clock reaches its turn.
func TestAS2_WaitingCallIsScheduled(t *testing.T) {
	clk, _, call, calls := asyncSetup(t)
	ctx := context.Background()
	v, err := call(ctx).Await(ctx)
	require.NoError(t, err)
	require.Equal(t, "done", v)

	f := call(ctx)
	_, done, _ := f.Result()
	assert.False(t, done, "pending until its permit")
	assert.Equal(t, 1, clk.PendingTasks())
	assert.Equal(t, int64(1), calls.Load())

	clk.Advance(999 * time.Millisecond)
	_, done, _ = f.Result()
	assert.False(t, done)
	clk.Advance(time.Millisecond)
	v, ok, err := f.Result()
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, "done", v)
	assert.Equal(t, int64(2), calls.Load())
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-2: 1,000 waiting async calls hold no goroutine.
func TestAS2_WaitingCallsHoldNoGoroutines(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Millisecond), ratelimit.MaxWait(time.Hour))
	call := ratelimit.NewPolicy[int](l).DecorateAsync(func(ctx context.Context) *async.Future[int] { return async.Completed(1) })
	before := runtime.NumGoroutine()
	futures := make([]*async.Future[int], 1000)
	for i := range futures {
		futures[i] = call(context.Background())
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
	assert.Equal(t, 999, clk.PendingTasks())
	clk.Advance(time.Second)
	for _, f := range futures {
		_, ok, err := f.Result()
		require.True(t, ok)
		require.NoError(t, err)
	}
}

// SPEC AS-3, RL-9: cancelling a waiting call returns true, the function never runs, and
// the permit comes back: the next call gets the canceled slot.
func TestAS3_CancelBeforeStartGivesPermitBack(t *testing.T) {
	clk, l, call, calls := asyncSetup(t)
	ctx := context.Background()
	_, err := call(ctx).Await(ctx)
	require.NoError(t, err)

	f := call(ctx)
	require.Equal(t, 1, clk.PendingTasks())
	assert.True(t, f.Cancel())
	_, err = f.Await(ctx)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")

	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay(), "the canceled slot is the next one")
	r.Cancel()

	clk.Advance(10 * time.Second)
	assert.Equal(t, int64(1), calls.Load(), "the canceled call never ran")
	assert.False(t, f.Cancel(), "a second cancel does nothing")
}

// SPEC AS-3: a call that has started keeps its permit; cancelling then returns false.
func TestAS3_CancelAfterStart(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second))
	var innerCanceled atomic.Bool
	call := ratelimit.NewPolicy[int](l).DecorateAsync(func(ctx context.Context) *async.Future[int] {
		f, _ := async.NewCancelablePromise[int](func() bool { innerCanceled.Store(true); return false })
		return f
	})
	f := call(context.Background())
	assert.False(t, f.Cancel(), "started at once")
	assert.True(t, innerCanceled.Load(), "cancel reaches the running call")
	assert.Equal(t, 0, l.Snapshot().AvailablePermits, "a started call keeps its permit")
}

// SPEC AS-1: a rejection is a failed future.
func TestAS1_RejectionIsAFailedFuture(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	var calls int
	call := ratelimit.NewPolicy[int](l).DecorateAsync(func(ctx context.Context) *async.Future[int] { calls++; return async.Completed(1) })
	_, err := call(context.Background()).Await(context.Background())
	require.NoError(t, err)
	f := call(context.Background())
	_, ok, err := f.Result()
	require.True(t, ok)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, 1, calls)
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AS-4, RL-8: a context that ends while the call waits fails its future with an
// error matching ErrExceeded and the context's error, and gives the permit back.
func TestAS4_ContextEndingWhileWaiting(t *testing.T) {
	clk, l, call, calls := asyncSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := call(ctx).Await(ctx)
	require.NoError(t, err)
	f := call(ctx)
	cancel()
	_, err = f.Await(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, clk.PendingTasks())
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay())
	assert.Equal(t, int64(1), calls.Load())

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	_, err = call(done).Await(context.Background())
	assert.ErrorIs(t, err, context.Canceled, "an already done context is rejected")
}

// SPEC RL-6, RL-8: the sync decoration takes its permit with Acquire; a rejected call
// does not run the function.
func TestRL6_SyncDecoration(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(500*time.Millisecond))
	var calls int
	call := ratelimit.NewPolicy[int](l).Decorate(func(ctx context.Context) (int, error) { calls++; return calls, nil })
	assert.Equal(t, ratelimit.Layer, ratelimit.NewPolicy[int](l).Layer())
	for range 2 {
		_, err := call(context.Background())
		require.NoError(t, err)
	}
	_, err := call(context.Background()) // next permit in 500ms: waits
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, clk.Now())
	v, err := call(context.Background()) // next in 500ms from now... within maxWait: waits
	require.NoError(t, err)
	assert.Equal(t, 4, v)
	l2 := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second))
	call2 := ratelimit.NewPolicy[int](l2).Decorate(func(ctx context.Context) (int, error) { calls++; return 0, nil })
	_, _ = call2(context.Background())
	before := calls
	_, err = call2(context.Background())
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Equal(t, before, calls, "the function was not called")
}

// The decorated hot path allocates nothing, admitted or rejected (SPEC RL-6).
func TestRL6_DecoratedZeroAllocations(t *testing.T) {
	ok, err := ratelimit.New(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second))
	require.NoError(t, err)
	no, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Hour))
	require.NoError(t, err)
	no.TryAcquire()
	fn := func(ctx context.Context, a int) (int, error) { return a, nil }
	okCall := ratelimit.DecorateFunc(ok, fn)
	noCall := ratelimit.DecorateFunc(no, fn)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = okCall(ctx, 1) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = noCall(ctx, 1) }))
}

// SPEC RL-8, AS-1: an async call whose context's deadline comes before its permit is a
// failed future at once, reserves nothing and arms no timer.
func TestRL8_AsyncDeadlineBeforePermit(t *testing.T) {
	clk, l, call, calls := asyncSetup(t)
	ctx := context.Background()
	_, err := call(ctx).Await(ctx)
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	f := call(short) // its permit is 1s away
	_, ok, err := f.Result()
	require.True(t, ok, "failed at once")
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, clk.PendingTasks(), "no timer")
	r, err := l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, time.Second, r.Delay(), "nothing was reserved")
	assert.Equal(t, int64(1), calls.Load())
}

// A nil context never panics: Acquire and both decorations refuse the call with the
// limiter's rejection, which matches ErrExceeded and policy.ErrNilContext, take no
// permit, run nothing and publish nothing (fault: ctx.Err() on a nil ctx panicked).
func TestNilContextIsRefusedWithoutPanic(t *testing.T) {
	clk := clock.NewManual()
	var events []policy.Event
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Minute),
		ratelimit.OnEvent(func(e policy.Event) { events = append(events, e) }))
	calls := 0
	sync := ratelimit.DecorateFunc(l, func(context.Context, int) (int, error) { calls++; return 1, nil })
	async1 := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { calls++; return async.Completed(1) })
	var nilCtx context.Context
	for range 2 {
		var err error
		require.NotPanics(t, func() { err = l.Acquire(nilCtx) })
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.ErrorIs(t, err, policy.ErrNilContext)

		require.NotPanics(t, func() { _, err = sync(nilCtx, 1) })
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.ErrorIs(t, err, policy.ErrNilContext)

		var f *async.Future[int]
		require.NotPanics(t, func() { f = async1(nilCtx, 1) })
		require.NotNil(t, f)
		_, done, err := f.Result()
		require.True(t, done, "failed at once")
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		assert.ErrorIs(t, err, policy.ErrNilContext)
	}
	assert.Zero(t, calls, "the function never ran")
	assert.Equal(t, 1, l.Snapshot().AvailablePermits, "no permit was taken")
	assert.Empty(t, events, "a call refused on arrival publishes nothing")
	assert.Zero(t, clk.PendingTasks())
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = l.Acquire(nilCtx) }), "the rejection is made once")
}

// A nil future from the decorated function never panics: whether the call starts at
// once, after its wait on the clock, or through a disabled limiter, the caller gets a
// future failed with async.ErrNilFuture (fault: a nil future reached the caller as is).
func TestNilFutureFailsWithErrNilFuture(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Minute))
	off := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Enabled(false))
	next := func(context.Context, int) *async.Future[int] { return nil }
	call := ratelimit.DecorateAsyncFunc(l, next)
	ctx := context.Background()

	now := call(ctx, 1)
	require.NotNil(t, now)
	_, err := now.Await(ctx)
	assert.ErrorIs(t, err, async.ErrNilFuture, "started at once")

	later := call(ctx, 1)
	require.NotNil(t, later)
	_, done, _ := later.Result()
	require.False(t, done, "waits for its permit")
	require.NotPanics(t, func() { clk.Advance(time.Second) })
	_, done, err = later.Result()
	require.True(t, done)
	assert.ErrorIs(t, err, async.ErrNilFuture, "started after its wait")

	f := ratelimit.DecorateAsyncFunc(off, next)(ctx, 1)
	require.NotNil(t, f)
	_, err = f.Await(ctx)
	assert.ErrorIs(t, err, async.ErrNilFuture, "through a disabled limiter")
}
