package timeout_test

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// A context that is nil or already done when the call arrives never runs the function,
// arms no timer and publishes nothing; the call returns the context's error, on the
// manual clock and on the system clock (fault: the function ran under the timeout, and a
// nil context panicked).
func TestDoneContextOnArrivalRunsNothing(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			to, clk, rec := newManual(t, time.Second)
			var events []policy.Event
			sys, err := timeout.New(time.Second, timeout.OnEvent(func(e policy.Event) { events = append(events, e) }))
			require.NoError(t, err)
			for _, tt := range []*timeout.Timeout{to, sys} {
				calls := 0
				v, err := timeout.DecorateFunc(tt, func(context.Context, string) (string, error) {
					calls++
					return "ok", nil
				})(c.Ctx, "q")
				require.ErrorIs(t, err, c.Want)
				require.NotErrorIs(t, err, timeout.ErrTimeout)
				assert.Empty(t, v)
				assert.Zero(t, calls, "the function never runs")
			}
			assert.Zero(t, clk.PendingTasks(), "no timer")
			assert.Empty(t, rec.events)
			assert.Empty(t, events)
		})
	}
}

// The asynchronous call with a done or nil context: a failed future, nothing run, no
// timer, no event (fault: the function ran under the timeout, and a nil context
// panicked).
func TestAsyncDoneContextOnArrivalRunsNothing(t *testing.T) {
	for _, c := range ctxtest.OverContexts() {
		t.Run(c.Name, func(t *testing.T) {
			to, clk, rec := newManual(t, time.Second)
			var in innerCall
			fut := timeout.DecorateAsyncFunc(to, in.next(false))(c.Ctx, "q")
			require.NotNil(t, fut)
			_, err := requireDone(t, fut)
			require.ErrorIs(t, err, c.Want)
			require.NotErrorIs(t, err, timeout.ErrTimeout)
			assert.False(t, in.started, "the function never runs")
			assert.Zero(t, clk.PendingTasks(), "no timer")
			assert.Empty(t, rec.events)
		})
	}
}

// A function that returns a nil future: the call's future fails with async.ErrNilFuture
// at once, its timer is stopped, nothing is published and nothing stays registered on
// the caller's context (fault: a nil future returned by the decorated function).
func TestAsyncNilFuture(t *testing.T) {
	to, clk, rec := newManual(t, time.Second)
	shared := ctxtest.NewOwnDone()
	defer shared.Cancel()
	before := runtime.NumGoroutine()

	fut := timeout.DecorateAsyncFunc(to, func(context.Context, string) *async.Future[string] {
		return nil
	})(shared, "q")
	require.NotNil(t, fut)
	_, err := requireDone(t, fut)
	require.ErrorIs(t, err, async.ErrNilFuture)
	assert.Zero(t, clk.PendingTasks(), "the timer is stopped")
	assert.False(t, fut.Cancel())
	clk.Advance(time.Hour)
	assert.Empty(t, rec.events, "no timeout")
	assert.LessOrEqual(t, ctxtest.SettleGoroutines(before), before, "nothing left registered on the context")
}

// A timeout of the largest Duration, on a clock near the end of its time: the deadline
// saturates instead of wrapping into the past, so the call runs with a live context
// and ends in time, sync and async, on the manual and the system clock (fault: durations
// computed past the largest Duration).
func TestLargestTimeoutDoesNotWrap(t *testing.T) {
	to, clk, rec := newManual(t, math.MaxInt64)
	clk.Advance(math.MaxInt64 - time.Hour)
	sys, err := timeout.New(math.MaxInt64)
	require.NoError(t, err)
	for _, tt := range []*timeout.Timeout{to, sys} {
		v, err := timeout.DecorateFunc(tt, func(ctx context.Context, _ string) (string, error) {
			require.NoError(t, ctx.Err())
			dl, ok := ctx.Deadline()
			require.True(t, ok)
			assert.True(t, dl.After(time.Now().Add(100*365*24*time.Hour)), "the deadline is centuries away: %v", dl)
			if tt == to {
				clk.Advance(time.Minute)
			}
			return "ok", ctx.Err()
		})(context.Background(), "q")
		require.NoError(t, err)
		assert.Equal(t, "ok", v)

		var in innerCall
		fut := timeout.DecorateAsyncFunc(tt, in.next(false))(context.Background(), "q")
		if tt == to {
			clk.Advance(time.Minute)
		}
		requirePending(t, fut)
		require.NoError(t, in.ctx.Err())
		in.complete("ok", nil)
		v, err = requireDone(t, fut)
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
	}
	assert.Empty(t, rec.events)
	assert.Zero(t, clk.PendingTasks())
}
