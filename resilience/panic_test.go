package resilience_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// SPEC AS-2: work that a clock timer starts later (a retry's next attempt, a call that
// waited for its permit) and that panics fails its future with async.ErrPanicked instead
// of leaving it pending for ever; the panic goes on up the timer's goroutine (here the
// test's, in Advance).
func TestAS2_LaterStartThatPanicsFailsTheFuture(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		reg, clk := newRegistry(t)
		attempts := 0
		call, err := resilience.WrapAsync(reg, "Svc.Retry", func(context.Context) *async.Future[int] {
			if attempts++; attempts == 2 {
				panic("boom")
			}
			return async.Failed[int](errBoom)
		}, resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)))
		require.NoError(t, err)
		f := call(context.Background())
		assert.PanicsWithValue(t, "boom", func() { clk.Advance(100 * time.Millisecond) })
		_, done, err := f.Result()
		require.True(t, done)
		require.ErrorIs(t, err, async.ErrPanicked)
		assert.Zero(t, clk.PendingTasks())
	})
	t.Run("rate limiter", func(t *testing.T) {
		reg, clk := newRegistry(t)
		calls := 0
		call, err := resilience.WrapAsync(reg, "Svc.Limited", func(context.Context) *async.Future[int] {
			if calls++; calls == 2 {
				panic("boom")
			}
			return async.Completed(1)
		}, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second)))
		require.NoError(t, err)
		_, err = call(context.Background()).Await(context.Background())
		require.NoError(t, err)
		f := call(context.Background())
		assert.PanicsWithValue(t, "boom", func() { clk.Advance(time.Second) })
		_, done, err := f.Result()
		require.True(t, done)
		require.ErrorIs(t, err, async.ErrPanicked)
		assert.Zero(t, clk.PendingTasks())
	})
}
