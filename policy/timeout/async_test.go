package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

type asyncFuture = async.Future[string]

func completedString(s string) *asyncFuture { return async.Completed(s) }

// A pending inner call: the test completes it, and sees whether it was canceled.
type innerCall struct {
	ctx      context.Context
	fut      *asyncFuture
	complete func(string, error)
	started  bool
}

func (c *innerCall) next(notStarted bool) decorate.AsyncFunc[string, string] {
	return func(ctx context.Context, _ string) *asyncFuture {
		c.ctx = ctx
		c.started = true
		c.fut, c.complete = async.NewCancelablePromise[string](func() bool { return notStarted })
		return c.fut
	}
}

func requireDone[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, ok, err := f.Result()
	require.True(t, ok, "the future is still pending")
	return v, err
}

func requirePending[T any](t *testing.T, f *async.Future[T]) {
	t.Helper()
	_, ok, _ := f.Result()
	require.False(t, ok, "the future is already complete")
}

// The future fails with ErrTimeout at the deadline, fired by the clock's timer (SPEC AS-2),
// and the inner future is canceled.
func TestAsyncTimesOut(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	var in innerCall
	call := timeout.DecorateAsyncFunc(to, in.next(false))

	fut := call(context.Background(), "q")
	require.True(t, in.started, "next is called at once")
	requirePending(t, fut)
	assert.Equal(t, 1, clk.PendingTasks())
	dl, ok := in.ctx.Deadline()
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(500*time.Millisecond), dl, 250*time.Millisecond)

	clk.Advance(499 * time.Millisecond)
	requirePending(t, fut)
	require.NoError(t, in.ctx.Err())

	clk.Advance(time.Millisecond)
	_, err := requireDone(t, fut)
	requireTimeoutError(t, err)
	_, innerErr := requireDone(t, in.fut)
	assert.ErrorIs(t, innerErr, async.ErrCanceled, "the inner future is canceled at the deadline")
	assert.Equal(t, context.DeadlineExceeded, in.ctx.Err())
	assert.Equal(t, to.Err(), context.Cause(in.ctx))
	assert.Zero(t, clk.PendingTasks())

	in.complete("late", nil) // ignored
	_, err = requireDone(t, fut)
	requireTimeoutError(t, err)

	require.Len(t, rec.events, 1)
	assert.Equal(t, timeout.EventExceeded, rec.events[0].Kind)
	assert.Equal(t, 500*time.Millisecond, rec.events[0].At, "published at the deadline")
	assert.Equal(t, 500*time.Millisecond, rec.events[0].Attr("timeout").Duration(), "Timeout is the time given")
	assert.Zero(t, rec.events[0].Wait, "the call was not held before it ran")
}

// A call completing in time removes its timer at once (SPEC CL-3).
func TestAsyncInTime(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	var in innerCall
	call := timeout.DecorateAsyncFunc(to, in.next(false))

	fut := call(context.Background(), "q")
	clk.Advance(100 * time.Millisecond)
	requirePending(t, fut)
	assert.Equal(t, 1, clk.PendingTasks())

	in.complete("ok", nil)
	got, err := requireDone(t, fut)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped as soon as the call completes")
	assert.Equal(t, context.Canceled, in.ctx.Err(), "the call's context ends with the call")

	clk.Advance(time.Hour)
	got, err = requireDone(t, fut)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	assert.Empty(t, rec.events)
}

// An inner future that is already complete: no timer survives.
func TestAsyncAlreadyComplete(t *testing.T) {
	to, clk, _ := newManual(t, 500*time.Millisecond)
	call := timeout.DecorateAsyncFunc(to, func(ctx context.Context, s string) *asyncFuture {
		return async.Completed(s)
	})
	got, err := requireDone(t, call(context.Background(), "x"))
	require.NoError(t, err)
	assert.Equal(t, "x", got)
	assert.Zero(t, clk.PendingTasks())
}

// The deadline passes while next itself is still running (it advances the clock before
// returning its future): the future it returns is canceled.
func TestAsyncDeadlineDuringNext(t *testing.T) {
	to, clk, rec := newManual(t, 500*time.Millisecond)
	var inner *asyncFuture
	call := timeout.DecorateAsyncFunc(to, func(ctx context.Context, s string) *asyncFuture {
		clk.Advance(time.Second)
		require.Error(t, ctx.Err())
		inner, _ = async.NewPromise[string]()
		return inner
	})
	fut := call(context.Background(), "x")
	_, err := requireDone(t, fut)
	requireTimeoutError(t, err)
	_, innerErr := requireDone(t, inner)
	assert.ErrorIs(t, innerErr, async.ErrCanceled)
	assert.Len(t, rec.events, 1)
	assert.Zero(t, clk.PendingTasks())
}

// Cancelling the outer future cancels the inner one and stops the timer; Cancel reports
// what the inner Cancel reports (SPEC AS-3, AS-4).
func TestAsyncCancel(t *testing.T) {
	for _, notStarted := range []bool{false, true} {
		to, clk, rec := newManual(t, 500*time.Millisecond)
		var in innerCall
		call := timeout.DecorateAsyncFunc(to, in.next(notStarted))
		fut := call(context.Background(), "q")
		assert.Equal(t, 1, clk.PendingTasks())

		assert.Equal(t, notStarted, fut.Cancel())
		_, err := requireDone(t, fut)
		assert.ErrorIs(t, err, async.ErrCanceled)
		_, innerErr := requireDone(t, in.fut)
		assert.ErrorIs(t, innerErr, async.ErrCanceled)
		assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
		assert.Equal(t, context.Canceled, in.ctx.Err())
		assert.False(t, fut.Cancel(), "a second Cancel does nothing")

		clk.Advance(time.Hour)
		assert.Empty(t, rec.events)
	}
}

func TestAsyncDisabled(t *testing.T) {
	to, clk, _ := newManual(t, 500*time.Millisecond, timeout.Enabled(false))
	var in innerCall
	call := timeout.DecorateAsyncFunc(to, in.next(false))
	fut := call(context.Background(), "q")
	assert.Same(t, in.fut, fut, "a disabled timeout returns next itself")
	assert.Zero(t, clk.PendingTasks())
}

// The real deadline path on the System clock, for an inner call that ignores its context.
func TestAsyncSystemClock(t *testing.T) {
	to, err := timeout.New(20*time.Millisecond, timeout.Name("Svc.Call"))
	require.NoError(t, err)
	release := make(chan struct{})
	call := timeout.DecorateAsyncFunc(to, func(ctx context.Context, _ string) *asyncFuture {
		return async.Go(ctx, func(context.Context) (string, error) {
			<-release // ignores its context
			return "late", nil
		})
	})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = call(context.Background(), "q").Await(ctx)
	elapsed := time.Since(start)
	requireTimeoutError(t, err)
	assert.GreaterOrEqual(t, elapsed, 20*time.Millisecond)
	assert.Less(t, elapsed, 5*time.Second)
	close(release) // lets the abandoned goroutine of async.Go end (goleak)

	fast := timeout.DecorateAsyncFunc(to, func(ctx context.Context, s string) *asyncFuture {
		return async.Go(ctx, func(context.Context) (string, error) { return s, nil })
	})
	got, err := fast(context.Background(), "fast").Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "fast", got)
}
