package retry_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// Delay 0 and Multiplier 2 over 1,100 attempts: Multiplier^(n-1) is +Inf from attempt
// 1,025 on, and every wait is still 0 (fault: -2562047h47m16s, 0·Inf turned into an
// integer).
func TestBackoffOfNoDelayStaysZero(t *testing.T) {
	c := retry.Config{MaxAttempts: 1100, Multiplier: 2}
	for n := 1; n <= 1100; n++ {
		require.Zero(t, c.Backoff(n), "attempt %d", n)
	}
	c.MaxDelay = time.Second
	assert.Zero(t, c.Backoff(1100), "a cap does not change it")
}

// The backoff grows to the largest Duration and stays there; a cap holds it below.
func TestBackoffSaturates(t *testing.T) {
	c := retry.Config{MaxAttempts: 1100, Delay: 1, Multiplier: 2}
	prev := time.Duration(0)
	for n := 1; n <= 1100; n++ {
		b := c.Backoff(n)
		require.GreaterOrEqual(t, b, prev, "attempt %d", n)
		prev = b
	}
	assert.Equal(t, time.Duration(1<<62), c.Backoff(63))
	assert.Equal(t, time.Duration(math.MaxInt64), c.Backoff(64))
	assert.Equal(t, time.Duration(math.MaxInt64), c.Backoff(1100), "+Inf saturates")
	c.MaxDelay = time.Hour
	assert.Equal(t, time.Hour, c.Backoff(1100))
}

// waitsOf runs a call that always fails through r, sync or async, on clk, and returns
// the Wait of each RetryAttempt and the kind of the last event.
func waitsOf(t *testing.T, isAsync bool, opts ...retry.Option) ([]time.Duration, policy.EventKind) {
	t.Helper()
	clk := clock.NewManual()
	ev := &events{}
	r := newRetry(t, append([]retry.Option{retry.WithClock(clk), retry.OnEvent(ev.listen)}, opts...)...)
	if isAsync {
		fut := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
			return async.Failed[int](errBoom)
		})(context.Background(), struct{}{})
		for i := 0; i < 10; i++ {
			if _, done, _ := fut.Result(); done {
				break
			}
			clk.Advance(math.MaxInt64) // saturates at the end of the clock's time
		}
		_, err := settled(t, fut)
		require.ErrorIs(t, err, errBoom)
	} else {
		_, err := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
			return 0, errBoom
		})(context.Background(), struct{}{})
		require.ErrorIs(t, err, errBoom)
	}
	got := ev.get()
	require.NotEmpty(t, got)
	var waits []time.Duration
	for _, e := range got[:len(got)-1] {
		require.Equal(t, retry.EventAttempt, e.Kind)
		waits = append(waits, e.Wait)
	}
	return waits, got[len(got)-1].Kind
}

// The reproducer through the events, sync and async: no RetryAttempt ever reports a
// negative Wait (fault: -2562047h47m16s from attempt 1,025 on).
func TestRetryAttemptWaitNeverNegative(t *testing.T) {
	for _, isAsync := range []bool{false, true} {
		name := "sync"
		if isAsync {
			name = "async"
		}
		t.Run(name, func(t *testing.T) {
			waits, last := waitsOf(t, isAsync, retry.MaxAttempts(1100), retry.Delay(0), retry.Multiplier(2))
			require.Len(t, waits, 1099)
			for n, w := range waits {
				require.Zero(t, w, "the wait after attempt %d", n+1)
			}
			assert.Equal(t, retry.EventExhausted, last)

			waits, _ = waitsOf(t, isAsync, retry.MaxAttempts(1100), retry.Delay(1), retry.Multiplier(2))
			require.Len(t, waits, 1099)
			assert.Equal(t, time.Duration(math.MaxInt64), waits[1098], "saturated")

			waits, _ = waitsOf(t, isAsync, retry.MaxAttempts(1100), retry.Delay(1), retry.Multiplier(2),
				retry.Jitter(1), retry.RandSource(rand.NewPCG(5, 6)))
			require.Len(t, waits, 1099)
			for n, w := range waits {
				require.GreaterOrEqual(t, w, time.Duration(0), "the wait after attempt %d", n+1)
			}

			waits, _ = waitsOf(t, isAsync, retry.MaxAttempts(1100), retry.Delay(time.Millisecond), retry.Multiplier(2),
				retry.MaxDelay(time.Hour), retry.Jitter(0.5))
			for n, w := range waits {
				require.GreaterOrEqual(t, w, time.Duration(0), "the wait after attempt %d", n+1)
				require.LessOrEqual(t, w, 90*time.Minute, "the wait after attempt %d", n+1)
			}
		})
	}
}
