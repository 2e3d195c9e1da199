package retry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// attempt is one call of an asynchronous function whose futures the test completes.
type attempt struct {
	at       time.Duration
	fut      *async.Future[int]
	complete func(int, error)
	canceled bool
}

type asyncFn struct {
	clk      clock.Clock
	mu       sync.Mutex
	attempts []*attempt
}

func (f *asyncFn) call(ctx context.Context, _ struct{}) *async.Future[int] {
	a := &attempt{at: f.clk.Now()}
	a.fut, a.complete = async.NewCancelablePromise[int](func() bool {
		f.mu.Lock()
		a.canceled = true
		f.mu.Unlock()
		return false
	})
	f.mu.Lock()
	f.attempts = append(f.attempts, a)
	f.mu.Unlock()
	return a.fut
}

func (f *asyncFn) n() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.attempts)
}

func (f *asyncFn) last() *attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[len(f.attempts)-1]
}

// settled returns the outcome of a future that must already be complete: with a manual
// clock, everything happens on the test's goroutine.
func settled[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	v, done, err := f.Result()
	require.True(t, done, "the future is complete")
	return v, err
}

// await waits for a future completed on another goroutine (a context's AfterFunc).
func await[T any](t *testing.T, f *async.Future[T]) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := f.Await(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "the future completes")
	return v, err
}

func pending[T any](t *testing.T, f *async.Future[T]) {
	t.Helper()
	_, done, _ := f.Result()
	require.False(t, done, "the future is still pending")
}

// SPEC AS-2: the next attempt is scheduled on the clock; no goroutine waits.
func TestAsyncRetriesOnTheClock(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk), retry.Delay(time.Second), retry.Multiplier(2), retry.OnEvent(ev.listen))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})

	require.Equal(t, 1, fn.n())
	assert.Equal(t, 0, clk.PendingTasks())
	fn.last().complete(0, errBoom)
	pending(t, fut)
	assert.Equal(t, 1, clk.PendingTasks(), "the second attempt waits on a timer")

	clk.Advance(999 * time.Millisecond)
	assert.Equal(t, 1, fn.n())
	clk.Advance(time.Millisecond)
	require.Equal(t, 2, fn.n())
	assert.Equal(t, time.Second, fn.last().at)
	assert.Equal(t, 0, clk.PendingTasks())

	fn.last().complete(0, errBoom)
	clk.Advance(2 * time.Second)
	require.Equal(t, 3, fn.n())
	assert.Equal(t, 3*time.Second, fn.last().at)

	fn.last().complete(42, nil)
	v, err := settled(t, fut)
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	got := ev.get()
	require.Len(t, got, 2)
	assert.Equal(t, policy.Event{Kind: retry.EventAttempt, At: 0, Wait: time.Second, Err: errBoom, Attempt: 1}, got[0])
	assert.Equal(t, policy.Event{Kind: retry.EventAttempt, At: time.Second, Wait: 2 * time.Second, Err: errBoom, Attempt: 2}, got[1])
}

func TestAsyncExhausted(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	for i := range 3 {
		require.Equal(t, i+1, fn.n())
		fn.last().complete(-1, errBoom)
		clk.Advance(500 * time.Millisecond)
	}
	assert.Equal(t, 3, fn.n())
	v, err := settled(t, fut)
	require.Same(t, errBoom, err)
	assert.Equal(t, -1, v)
	got := ev.get()
	require.Len(t, got, 3)
	assert.Equal(t, retry.EventExhausted, got[2].Kind)
	assert.Equal(t, 3, got[2].Attempt)
}

func TestAsyncAlreadyFailedFutures(t *testing.T) {
	clk := clock.NewManual()
	r := newRetry(t, retry.WithClock(clk), retry.AbortOn(errOther))
	calls := 0
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		calls++
		if calls == 3 {
			return async.Completed(3)
		}
		return async.Failed[int](errBoom)
	})
	fut := call(context.Background(), struct{}{})
	assert.Equal(t, 1, clk.PendingTasks())
	clk.Advance(time.Second) // both waits
	v, err := settled(t, fut)
	require.NoError(t, err)
	assert.Equal(t, 3, v)

	failed := async.Failed[int](errOther)
	assert.Same(t, failed, retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		return failed
	})(context.Background(), struct{}{}), "an error not retried is returned as it is")
	assert.Equal(t, 0, clk.PendingTasks())

	open := openError{never: true}
	calls = 0
	fut = retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		calls++
		f, complete := async.NewPromise[int]()
		complete(0, open)
		return f
	})(context.Background(), struct{}{})
	_, err = settled(t, fut)
	require.ErrorIs(t, err, open, "SPEC CO-4")
	assert.Equal(t, 1, calls)
	assert.Equal(t, 0, clk.PendingTasks())
}

// SPEC AS-3: cancelling during a wait stops the timer; the function is never called again.
func TestAsyncCancelDuringTheDelay(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	fn.last().complete(0, errBoom)
	require.Equal(t, 1, clk.PendingTasks())

	assert.False(t, fut.Cancel(), "the call had started")
	assert.Equal(t, 0, clk.PendingTasks(), "the wait's timer is stopped")
	clk.Advance(time.Hour)
	assert.Equal(t, 1, fn.n(), "no further attempt")
	_, err := settled(t, fut)
	require.ErrorIs(t, err, async.ErrCanceled)
	require.Len(t, ev.get(), 1, "only the first RetryAttempt")
}

func TestAsyncCancelInFlight(t *testing.T) {
	clk := clock.NewManual()
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	fn.last().complete(0, errBoom)
	clk.Advance(500 * time.Millisecond)
	require.Equal(t, 2, fn.n())

	fut.Cancel()
	assert.True(t, fn.last().canceled, "the attempt in flight is canceled")
	assert.False(t, fn.attempts[0].canceled)
	clk.Advance(time.Hour)
	assert.Equal(t, 2, fn.n())
	assert.Equal(t, 0, clk.PendingTasks())
	_, err := settled(t, fut)
	require.ErrorIs(t, err, async.ErrCanceled)
}

func TestAsyncCancelWhileTheFirstAttemptRuns(t *testing.T) {
	clk := clock.NewManual()
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	fut.Cancel()
	assert.True(t, fn.last().canceled)
	assert.Equal(t, 0, clk.PendingTasks())
	assert.Equal(t, 1, fn.n())
}

func TestAsyncContextEndsDuringTheDelay(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk), retry.OnEvent(ev.listen))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fut := retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
	fn.last().complete(0, errBoom)
	require.Equal(t, 1, clk.PendingTasks())

	cancel()
	// The future fails as the context ends, without the clock moving.
	_, err := await(t, fut)
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, clk.PendingTasks(), "the wait's timer is stopped")
	clk.Advance(time.Hour)
	assert.Equal(t, 1, fn.n())
	got := ev.get()
	require.Len(t, got, 2)
	assert.Equal(t, retry.EventAborted, got[1].Kind, "the context ended before the attempts were spent")
	assert.Equal(t, 1, got[1].Attempt)
	assert.ErrorIs(t, got[1].Err, context.Canceled)
}

func TestAsyncContextEndsDuringAnAttempt(t *testing.T) {
	clk := clock.NewManual()
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fut := retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
	cancel()
	pending(t, fut) // the attempt in flight has the context and decides for itself
	fn.last().complete(0, errBoom)
	_, err := settled(t, fut)
	require.ErrorIs(t, err, errBoom)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, clk.PendingTasks())
	assert.Equal(t, 1, fn.n())
}

func TestAsyncErrorNotRetriedLater(t *testing.T) {
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, retry.WithClock(clk), retry.AbortOn(errOther), retry.OnEvent(ev.listen))
	for _, err := range []error{errOther, openError{never: true}} {
		fn := &asyncFn{clk: clk}
		fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
		fn.last().complete(0, err)
		_, got := settled(t, fut)
		require.ErrorIs(t, got, err)
		assert.Equal(t, 0, clk.PendingTasks(), "no wait is scheduled")
		clk.Advance(time.Hour)
		assert.Equal(t, 1, fn.n())
	}
	got := ev.get()
	require.Len(t, got, 2)
	for _, e := range got {
		assert.Equal(t, retry.EventAborted, e.Kind, "an error not retried aborts")
		assert.Equal(t, 1, e.Attempt)
	}
}

// stubbornClock's timers cannot be stopped: they stand for a timer that fires while
// Stop is called, on a real clock.
type stubbornClock struct{ *clock.Manual }

type stubbornTimer struct{}

func (stubbornTimer) Stop() bool { return false }

func (c stubbornClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.Manual.AfterFunc(d, f)
	return stubbornTimer{}
}

func TestAsyncTimerFiringAfterCancelStartsNothing(t *testing.T) {
	clk := stubbornClock{clock.NewManual()}
	fn := &asyncFn{clk: clk}
	r := newRetry(t, retry.WithClock(clk))
	fut := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	fn.last().complete(0, errBoom)
	fut.Cancel()
	clk.Advance(time.Hour) // the timer fires anyway
	assert.Equal(t, 1, fn.n())

	ctx, cancel := context.WithCancel(context.Background())
	fn = &asyncFn{clk: clk}
	fut = retry.DecorateAsyncFunc(r, fn.call)(ctx, struct{}{})
	fn.last().complete(0, errBoom)
	cancel()
	_, err := await(t, fut)
	require.ErrorIs(t, err, context.Canceled)
	clk.Advance(time.Hour)
	assert.Equal(t, 1, fn.n())
}
