package adaptivelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

func pending[T any](f *async.Future[T]) bool {
	_, ok, _ := f.Result()
	return !ok
}

func result[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, ok, err := f.Result()
	require.True(t, ok, "the future is still pending")
	return v, err
}

// SPEC AL-1: an asynchronous call counts as in flight from its call until its future
// completes; one that does not fit is a failed future (made once) and never starts.
func TestAsyncHoldsUntilComplete(t *testing.T) {
	l, clk, rec := newManual(t, fixed(1)...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)

	first := call(context.Background(), 1)
	assert.Equal(t, []int{1}, c.Started(), "a call that fits starts at once")
	assert.Equal(t, 1, l.InFlight())

	second, third := call(context.Background(), 2), call(context.Background(), 3)
	_, err := result(t, second)
	requireExceeded(t, err)
	assert.Same(t, second, third, "the rejection's failed future is made once")
	assert.Equal(t, []int{1}, c.Started(), "a rejected call never starts")

	c.Finish(1)
	got, err := result(t, first)
	require.NoError(t, err)
	assert.Equal(t, "done", got)
	assert.Zero(t, l.InFlight())
	assert.Zero(t, clk.PendingTasks())
	assert.Len(t, rec.Of(adaptivelimit.EventRejected), 2)
}

// SPEC AL-5: queued async calls start in FIFO order as room comes back, each a callback:
// no goroutine waits.
func TestAsyncQueueFIFO(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(2), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Second)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)

	futs := map[int]*async.Future[string]{}
	for i := 1; i <= 5; i++ {
		futs[i] = call(context.Background(), i)
	}
	assert.Equal(t, []int{1, 2}, c.Started())
	assert.Equal(t, 3, l.Queued())
	assert.Equal(t, 3, clk.PendingTasks(), "one MaxWait timer per waiter")

	clk.Advance(300 * time.Millisecond)
	c.Finish(2)
	assert.Equal(t, []int{1, 2, 3}, c.Started())
	assert.Equal(t, 2, l.Queued())
	assert.Equal(t, 2, clk.PendingTasks(), "the started call's timer is stopped")
	assert.True(t, pending(futs[3]))

	c.Finish(1)
	c.Finish(3)
	assert.Equal(t, []int{1, 2, 3, 4, 5}, c.Started())
	c.Finish(4)
	c.Finish(5)
	for i := 1; i <= 5; i++ {
		got, err := result(t, futs[i])
		require.NoError(t, err)
		assert.Equal(t, "done", got)
	}
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())

	events := rec.Events()
	require.Len(t, events, 3)
	for _, e := range events {
		assert.Equal(t, adaptivelimit.EventWaited, e.Kind)
		assert.Equal(t, 300*time.Millisecond, e.Wait)
	}
}

// SPEC AL-6: after MaxWait (a clock timer) a queued call fails and leaves the queue; it
// never starts.
func TestAsyncMaxWait(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(100 * time.Millisecond)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	holder := call(context.Background(), 1)
	waiter := call(context.Background(), 2)
	clk.Advance(50 * time.Millisecond)
	late := call(context.Background(), 3)
	assert.Equal(t, 2, l.Queued())

	clk.Advance(50 * time.Millisecond)
	_, err := result(t, waiter)
	requireExceeded(t, err)
	assert.Same(t, l.Rejection(), err)
	assert.Equal(t, 1, l.Queued())
	assert.True(t, pending(late))

	clk.Advance(50 * time.Millisecond)
	_, err = result(t, late)
	requireExceeded(t, err)
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, c.Started(), "timed-out calls never start")
	assert.Zero(t, l.InFlight())

	events := rec.Events()
	require.Len(t, events, 2)
	for _, e := range events {
		assert.Equal(t, adaptivelimit.EventRejected, e.Kind)
		assert.Equal(t, 100*time.Millisecond, e.Wait)
	}
}

// SPEC AL-7: cancelling a queued call's future removes it from the queue at once: Cancel
// returns true and the function never runs.
func TestAsyncCancelWhileQueued(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Second)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	holder := call(context.Background(), 1)
	a := call(context.Background(), 2)
	z := call(context.Background(), 3)
	require.Equal(t, 2, l.Queued())

	assert.True(t, a.Cancel())
	_, err := result(t, a)
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, 1, l.Queued(), "the canceled call left the queue at once")
	assert.Equal(t, 1, clk.PendingTasks(), "its timer is stopped")
	assert.False(t, a.Cancel())

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3}, c.Started(), "the room went to the next waiter; the canceled call never ran")
	c.Finish(3)
	_, err = result(t, z)
	require.NoError(t, err)
	assert.Zero(t, l.InFlight())
	assert.Zero(t, clk.PendingTasks())
	require.Len(t, rec.Events(), 1, "only the waited event")
}

// SPEC AL-7: a queued call whose context ends leaves the queue at once, its future failed
// with a rejection matching the context's error.
func TestAsyncContextEndsWhileQueued(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	holder := call(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := call(ctx, 2)
	require.Equal(t, 1, l.Queued())
	clk.Advance(time.Minute)
	cancel()
	contracttest.Eventually(t, func() bool { return !pending(waiting) }, "the context hook ran")
	_, err := result(t, waiting)
	requireExceeded(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())
	events := rec.Of(adaptivelimit.EventRejected)
	require.Len(t, events, 1)
	assert.Equal(t, time.Minute, events[0].Wait)

	c.Finish(1)
	_, err = result(t, holder)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, c.Started())
	assert.Zero(t, l.InFlight())
}

// SPEC AL-11: cancelling a started call's future counts it out at once, without a sample:
// work that goes on after its future was canceled no longer counts under the limit.
func TestAsyncCancelStartedCountsOut(t *testing.T) {
	l, _, _ := newManual(t, aimd(1)...)
	c := contracttest.NewCalls()
	f := adaptivelimit.DecorateAsyncFunc(l, c.Next)(context.Background(), 1)
	assert.Equal(t, 1, l.InFlight())
	assert.True(t, f.Cancel(), "a plain promise counts as not started")
	assert.Zero(t, l.InFlight())
	assert.Equal(t, 1, l.Limit(), "no sample")
	c.Finish(1) // too late: ignored
	assert.Zero(t, l.InFlight())
}

// A next that returns a nil future, or panics, counts out at once without a sample; the
// caller gets a future failed with async.ErrNilFuture, or the panic.
func TestAsyncNilFutureAndPanic(t *testing.T) {
	l, clk, _ := newManual(t, opts(aimd(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Second)})...)
	c := contracttest.NewCalls()
	holder := adaptivelimit.DecorateAsyncFunc(l, c.Next)(context.Background(), 1)
	nilNext := adaptivelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return nil })

	queued := nilNext(context.Background(), 2)
	require.NotNil(t, queued)
	assert.Equal(t, 1, l.Queued())
	c.FinishWith(1, context.Canceled) // no sample: the limit stays 1
	_, err := result(t, holder)
	require.ErrorIs(t, err, context.Canceled)
	_, err = result(t, queued)
	require.ErrorIs(t, err, async.ErrNilFuture, "started from the queue")
	assert.Zero(t, l.InFlight())

	now := nilNext(context.Background(), 3)
	_, err = result(t, now)
	require.ErrorIs(t, err, async.ErrNilFuture, "started at once")
	assert.Zero(t, l.InFlight())

	panicking := adaptivelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() { panicking(context.Background(), 4) })
	assert.Zero(t, l.InFlight())
	assert.Equal(t, 1, l.Limit(), "none of them was a sample")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC AL-11: an outer timeout that cancels the call's future as its deadline passes makes
// the call a drop (the future fails with async.ErrCanceled, but the context reports
// context.DeadlineExceeded).
func TestAsyncOuterTimeoutIsDrop(t *testing.T) {
	l, _, _ := newManual(t, aimd(2)...)
	c := contracttest.NewCalls()
	ctx, cancel := context.WithCancel(context.Background())
	f := adaptivelimit.DecorateAsyncFunc(l, c.Next)(expiringCtx{ctx}, 1)
	cancel()
	f.Cancel()
	assert.Equal(t, 1, l.Limit(), "a drop: AIMD halves the limit")
	assert.Zero(t, l.InFlight())
}

// SPEC AL-5, AL-18: a queued async call whose function panics when it is let in: its
// future fails with async.ErrPanicked (its awaiters are not left waiting), the panic goes
// on up the goroutine that made room, and nothing stays in flight or queued.
func TestAsyncPanicWhenLetInFromTheQueue(t *testing.T) {
	clk := clock.NewManual()
	l, err := adaptivelimit.New(adaptivelimit.WithClock(clk), adaptivelimit.InitialLimit(1),
		adaptivelimit.MaxWait(time.Second))
	require.NoError(t, err)
	call := adaptivelimit.DecorateAsyncFunc(l, func(_ context.Context, k int) *async.Future[int] {
		if k == 0 {
			panic("boom")
		}
		f, _ := async.NewPromise[int]()
		return f
	})
	hold := call(context.Background(), 1)
	queued := call(context.Background(), 0)
	assert.Equal(t, 1, l.Queued())
	assert.PanicsWithValue(t, "boom", func() { hold.Cancel() })
	_, done, err := queued.Result()
	require.True(t, done, "the queued call's future completed")
	require.ErrorIs(t, err, async.ErrPanicked)
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks(), "its MaxWait timer is stopped")
}

// SPEC AL-1, AL-18: a queued call whose function panics when it is let in gives its room
// to the next waiter, which is let in without waiting for its MaxWait, as the panic
// unwinds the goroutine that made room; a second one that panics too has its panic go on
// in place of the first, on that goroutine (fault: the room came back while the dispatch
// that let the panicking call in was still running, and the next waiter stayed queued
// with nothing in flight until its MaxWait rejected it).
func TestAsyncPanicWhenLetInFromTheQueueServesTheNext(t *testing.T) {
	clk := clock.NewManual()
	l, err := adaptivelimit.New(adaptivelimit.WithClock(clk), adaptivelimit.MinLimit(1),
		adaptivelimit.InitialLimit(1), adaptivelimit.MaxLimit(1), adaptivelimit.MaxWait(time.Second))
	require.NoError(t, err)
	call := adaptivelimit.DecorateAsyncFunc(l, func(_ context.Context, k int) *async.Future[int] {
		switch k {
		case 0:
			panic("boom")
		case 1:
			f, _ := async.NewPromise[int]()
			return f
		}
		return async.Completed(k)
	})
	hold := call(context.Background(), 1)
	panicking := call(context.Background(), 0)
	again := call(context.Background(), 0) // panics too, as the first unwinds
	next := call(context.Background(), 2)
	assert.Equal(t, 3, l.Queued())
	assert.PanicsWithValue(t, "boom", func() { hold.Cancel() }, "on the caller's goroutine, where it can be recovered")
	for _, f := range []*async.Future[int]{panicking, again} {
		_, _, err = f.Result()
		require.ErrorIs(t, err, async.ErrPanicked)
	}
	// 10s bounds a failure only: the manual clock does not move, so no MaxWait passes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := next.Await(ctx)
	require.NoError(t, err, "the next waiter was let in")
	assert.Equal(t, 2, v)
	assert.Zero(t, l.InFlight())
	assert.Zero(t, l.Queued())
}

// SPEC AL-18: a call whose future is complete when its function returns counts out at
// once, on the caller's goroutine, letting the oldest waiter in there: when that waiter's
// function panics, the first call counts out once, and the limit still lets one call in.
func TestAsyncPanicOfAWaiterLetInByACompletedCall(t *testing.T) {
	l, err := adaptivelimit.New(adaptivelimit.WithClock(clock.NewManual()), adaptivelimit.MinLimit(1),
		adaptivelimit.InitialLimit(1), adaptivelimit.MaxLimit(1), adaptivelimit.MaxWait(time.Second))
	require.NoError(t, err)
	var call func(context.Context, int) *async.Future[int]
	call = adaptivelimit.DecorateAsyncFunc(l, func(ctx context.Context, k int) *async.Future[int] {
		if k == 0 {
			panic("boom")
		}
		call(ctx, 0) // queued behind this call, the only one the limit lets in
		return async.Completed(k)
	})
	assert.PanicsWithValue(t, "boom", func() { call(context.Background(), 1) })
	assert.Zero(t, l.InFlight())
	p, ok := l.TryAcquire()
	require.True(t, ok)
	_, ok = l.TryAcquire()
	assert.False(t, ok, "a limit of 1 lets one call in")
	p.Release()
}
