package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-9: Cancel on the call's future cancels every attempt through the inner layers
// and the timer; nothing more is published.
func TestHG9_CancelCancelsEveryAttempt(t *testing.T) {
	s := newStack(t, []step{never()}, hedge.MaxAttempts(3))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := s.call(ctx, "q")
	s.clk.Advance(time.Second)
	require.Equal(t, 2, s.d.attempts())
	assert.Equal(t, 0, s.bh.Snapshot().AvailableSlots)
	assert.Equal(t, 1, s.clk.PendingTasks(), "the timer of attempt 3")

	assert.False(t, f.Cancel(), "the attempts had started")
	_, err := result(t, f)
	assert.ErrorIs(t, err, async.ErrCanceled)
	for i := 1; i <= 2; i++ {
		assert.ErrorIs(t, s.d.ctx(i).Err(), context.Canceled)
		_, err := result(t, s.d.fut(i))
		assert.ErrorIs(t, err, async.ErrCanceled)
	}
	assert.NoError(t, ctx.Err(), "the caller's context is untouched")
	assert.Equal(t, 2, s.bh.Snapshot().AvailableSlots)
	assert.Zero(t, s.cb.Snapshot().BufferedCalls, "the breaker records nothing for canceled attempts")
	assert.Zero(t, s.clk.PendingTasks())
	s.clk.Advance(time.Hour)
	assert.Equal(t, 2, s.d.attempts(), "no attempt after Cancel")
	assert.Equal(t, []policy.EventKind{hedge.EventHedged}, s.rec.Kinds())
	assert.False(t, f.Cancel(), "a second Cancel does nothing")
}

// SPEC HG-9: the caller's context ending cancels every attempt and the timer, and fails
// the call with the context's error.
func TestHG9_ContextEndCancelsEveryAttempt(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
		want error
	}{
		{"canceled", func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, func()) { return deadlineLater(context.Background()) },
			context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, []step{never()}, hedge.MaxAttempts(3))
			ctx, end := tc.ctx()
			f := s.call(ctx, "q")
			s.clk.Advance(time.Second)
			require.Equal(t, 2, s.d.attempts())
			end()
			contracttest.Eventually(t, func() bool { return !pending(f) }, "the call ends with its context")
			_, err := result(t, f)
			assert.ErrorIs(t, err, tc.want)
			for i := 1; i <= 2; i++ {
				assert.Error(t, s.d.ctx(i).Err(), "attempt %d's context ended", i)
			}
			contracttest.Eventually(t, func() bool { return s.bh.Snapshot().AvailableSlots == 2 }, "the attempts give their slots back")
			contracttest.Eventually(t, func() bool { return s.clk.PendingTasks() == 0 }, "the timer is stopped")
			s.clk.Advance(time.Hour)
			assert.Equal(t, 2, s.d.attempts(), "no attempt after the context ended")
			assert.Equal(t, []policy.EventKind{hedge.EventHedged}, s.rec.Kinds())
		})
	}
}

// deadlineLater returns a child of parent that ends with context.DeadlineExceeded when
// end is called, as a deadline would, without waiting for real time.
func deadlineLater(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	return deadlineCtx{ctx}, func() { cancel(context.DeadlineExceeded) }
}

// deadlineCtx reports its cause as its error, so that it ends with DeadlineExceeded.
type deadlineCtx struct{ context.Context }

func (c deadlineCtx) Err() error {
	if c.Context.Err() == nil {
		return nil
	}
	return context.Cause(c.Context)
}

// SPEC HG-9: an attempt that fails once the caller's context has ended fails the call
// with the context's error, and starts no hedge.
func TestHG9_FailureAfterContextEnded(t *testing.T) {
	h, clk, rec := newManual(t)
	ctx, cancel := context.WithCancel(context.Background())
	var complete func(string, error)
	call := hedge.DecorateAsyncFunc(h, func(context.Context, string) *async.Future[string] {
		f, c := async.NewPromise[string]()
		complete = c
		return f
	})
	f := call(ctx, "q")
	cancel()
	complete("", errHedge) // may come before the hook on ctx runs
	contracttest.Eventually(t, func() bool { return !pending(f) }, "the call ends")
	_, err := result(t, f)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.Events())
	assert.Zero(t, clk.PendingTasks())
}

// SPEC HG-9: Cancel reports true when every attempt was still queued in an inner layer,
// which then never starts it.
func TestHG9_CancelBeforeAnyAttemptStarted(t *testing.T) {
	h, clk, _ := newManual(t)
	bh, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour), bulkhead.WithClock(clk))
	require.NoError(t, err)
	d := newDep(clk, never())
	inner := bulkhead.Decorate[decorate.AsyncFunc[string, string], string, string](bh, d.call)
	holder := inner(context.Background(), "holder")
	f := hedge.DecorateAsyncFunc(h, inner)(context.Background(), "q")
	clk.Advance(time.Second)
	assert.Equal(t, 2, bh.Snapshot().Waiting, "both attempts queue for the slot")
	assert.True(t, f.Cancel(), "no attempt had started")
	assert.Zero(t, bh.Snapshot().Waiting)
	assert.Equal(t, 1, d.attempts(), "only the holder ran")
	assert.False(t, holder.Cancel(), "the holder had started")
	assert.Equal(t, 1, bh.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
}

// SPEC HG-10: a nil future from next counts as a future failed with async.ErrNilFuture.
func TestHG10_NilFuture(t *testing.T) {
	h, clk, rec := newManual(t)
	calls := 0
	f := hedge.DecorateAsyncFunc(h, func(context.Context, string) *async.Future[string] {
		calls++
		return nil
	})(context.Background(), "q")
	require.NotNil(t, f)
	_, err := result(t, f)
	assert.ErrorIs(t, err, async.ErrNilFuture)
	assert.Equal(t, 2, calls, "the error hedged at once, and the hedge failed the same way")
	assert.Equal(t, []policy.EventKind{hedge.EventHedged, hedge.EventFailed}, rec.Kinds())
	assert.Zero(t, clk.PendingTasks())

	h, _, rec = newManual(t, hedge.AbortOn(async.ErrNilFuture))
	calls = 0
	f = hedge.DecorateAsyncFunc(h, func(context.Context, string) *async.Future[string] {
		calls++
		return nil
	})(context.Background(), "q")
	_, err = result(t, f)
	assert.ErrorIs(t, err, async.ErrNilFuture)
	assert.Equal(t, 1, calls)
	assert.Empty(t, rec.Events())
}

// SPEC HG-10: a panic in attempt 1's next reaches the caller; its context is canceled and
// nothing is scheduled.
func TestHG10_PanicInFirstAttempt(t *testing.T) {
	h, clk, rec := newManual(t)
	var seen context.Context
	call := hedge.DecorateAsyncFunc(h, func(ctx context.Context, _ string) *async.Future[string] {
		seen = ctx
		panic("boom")
	})
	assert.PanicsWithValue(t, "boom", func() { call(context.Background(), "q") })
	assert.ErrorIs(t, seen.Err(), context.Canceled)
	assert.Zero(t, clk.PendingTasks())
	assert.Empty(t, rec.Events())
	assert.Equal(t, 1, h.Snapshot().Calls, "the call arrived")
}

// SPEC HG-10: a panic in a later attempt's next goes on up the goroutine that started it
// (here the clock's timer, run by Advance), and first ends the call: its future fails
// with ErrPanicked, the other attempts are canceled, no timer stays.
func TestHG10_PanicInLaterAttempt(t *testing.T) {
	h, clk, _ := newManual(t, hedge.MaxAttempts(3))
	d := newDep(clk, never())
	n := 0
	var seen context.Context
	call := hedge.DecorateAsyncFunc(h, func(ctx context.Context, q string) *async.Future[string] {
		if n++; n == 2 {
			seen = ctx
			panic("boom")
		}
		return d.call(ctx, q)
	})
	f := call(context.Background(), "q")
	assert.PanicsWithValue(t, "boom", func() { clk.Advance(time.Second) })
	_, err := result(t, f)
	assert.ErrorIs(t, err, async.ErrPanicked)
	assert.ErrorIs(t, seen.Err(), context.Canceled)
	assert.ErrorIs(t, d.ctx(1).Err(), context.Canceled)
	_, err = result(t, d.fut(1))
	assert.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks(), "no timer of attempt 3")
	clk.Advance(time.Hour)
	assert.Equal(t, 2, n)
}

// SPEC HG-10: a panic in an attempt started at once by another's failure, in the call,
// reaches the caller, and leaves nothing behind.
func TestHG10_PanicInHedgeStartedInTheCall(t *testing.T) {
	h, clk, _ := newManual(t)
	n := 0
	var ctxs []context.Context
	call := hedge.DecorateAsyncFunc(h, func(ctx context.Context, _ string) *async.Future[string] {
		ctxs = append(ctxs, ctx)
		if n++; n == 2 {
			panic("boom")
		}
		return async.Failed[string](errHedge)
	})
	assert.PanicsWithValue(t, "boom", func() { call(context.Background(), "q") })
	require.Len(t, ctxs, 2)
	for _, c := range ctxs {
		assert.ErrorIs(t, c.Err(), context.Canceled)
	}
	assert.Zero(t, clk.PendingTasks())
}

var _ clock.Clock = (*clock.Manual)(nil)

// SPEC HG-7: an attempt whose next is still running when another wins is canceled once
// next returns, its future first, then its context: an inner circuit breaker records
// nothing for it (fault: its context was canceled at once, while next ran, and a
// dependency that answered with its context's error had the breaker record a failure).
func TestHG7_LoserStillStartingIsCanceledFutureFirst(t *testing.T) {
	clk := clock.NewManual()
	h, err := hedge.New(hedge.WithClock(clk), hedge.Delay(10*time.Millisecond), hedge.Budget(false))
	require.NoError(t, err)
	b, err := circuitbreaker.New(circuitbreaker.WithClock(clk), circuitbreaker.MinimumCalls(100), circuitbreaker.SlidingWindowSize(100))
	require.NoError(t, err)
	var complete1 func(string, error)
	var ctxErrInNext error
	n := 0
	dep := func(ctx context.Context, _ struct{}) *async.Future[string] {
		n++
		if n == 1 {
			f, complete := async.NewPromise[string]()
			complete1 = complete
			return f
		}
		complete1("one", nil) // attempt 1 wins while attempt 2's next runs
		if ctxErrInNext = ctx.Err(); ctxErrInNext != nil {
			return async.Failed[string](ctxErrInNext) // a dependency that checks its context
		}
		f, _ := async.NewPromise[string]()
		return f
	}
	call := hedge.DecorateAsyncFunc(h, circuitbreaker.Decorate[decorate.AsyncFunc[struct{}, string], struct{}, string](b, dep))
	fut := call(context.Background(), struct{}{})
	clk.Advance(10 * time.Millisecond)
	v, done, err := fut.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "one", v)
	assert.NoError(t, ctxErrInNext, "the loser's context is live while its next runs")
	s := b.Snapshot()
	assert.Equal(t, 1, s.BufferedCalls, "only the winner is recorded")
	assert.Zero(t, s.FailedCalls)
}

// SPEC HG-7, HG-10: an attempt whose next panics after another attempt won has its
// context canceled all the same; the panic goes on, and the call keeps the winner's result.
func TestHG7_LoserThatPanicsAfterTheWinIsCanceled(t *testing.T) {
	clk := clock.NewManual()
	h, err := hedge.New(hedge.WithClock(clk), hedge.Delay(10*time.Millisecond), hedge.Budget(false))
	require.NoError(t, err)
	var complete1 func(string, error)
	var loser context.Context
	n := 0
	call := hedge.DecorateAsyncFunc(h, func(ctx context.Context, _ struct{}) *async.Future[string] {
		n++
		if n == 1 {
			f, complete := async.NewPromise[string]()
			complete1 = complete
			return f
		}
		loser = ctx
		complete1("one", nil)
		panic("boom")
	})
	fut := call(context.Background(), struct{}{})
	assert.PanicsWithValue(t, "boom", func() { clk.Advance(10 * time.Millisecond) }, "the panic goes on up the timer's goroutine")
	v, done, err := fut.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "one", v)
	require.NotNil(t, loser)
	assert.ErrorIs(t, loser.Err(), context.Canceled)
}

// SPEC HG-9: when ctx ends while next is running a later attempt, that attempt's context
// ends at once, as a context derived from ctx must; it does not wait for next to return.
func TestHG9_ContextEndReachesAnAttemptWhoseNextRuns(t *testing.T) {
	clk := clock.NewManual()
	h, err := hedge.New(hedge.WithClock(clk), hedge.Delay(10*time.Millisecond), hedge.Budget(false))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var doneWhileRunning bool
	n := 0
	call := hedge.DecorateAsyncFunc(h, func(actx context.Context, _ struct{}) *async.Future[string] {
		n++
		if n == 2 {
			cancel() // the caller's context ends while attempt 2's next runs
			select {
			case <-actx.Done():
				doneWhileRunning = true
			case <-time.After(10 * time.Second): // bounds a failure only
			}
		}
		f, _ := async.NewPromise[string]()
		return f
	})
	fut := call(ctx, struct{}{})
	clk.Advance(10 * time.Millisecond)
	assert.True(t, doneWhileRunning)
	// The call ends on the goroutine of ctx's hook, which cancels the attempts before it
	// completes the future: wait for it (10s bounds a failure only).
	wait, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_, err = fut.Await(wait)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoError(t, wait.Err(), "the future completed")
}
