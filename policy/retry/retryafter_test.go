package retry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// afterError asks for a retry after d (policy.RetryAfter); has = false leaves the backoff.
type afterError struct {
	d   time.Duration
	has bool
}

func (e afterError) Error() string                     { return fmt.Sprintf("retry after %v", e.d) }
func (e afterError) RetryAfter() (time.Duration, bool) { return e.d, e.has }

var _ policy.RetryAfter = afterError{}

// An error that says when to retry sets the wait, in place of the backoff and its jitter,
// even wrapped; one that does not leaves the backoff.
func TestRetryAfterErrorSetsTheWait(t *testing.T) {
	clk := clock.NewManual()
	var waits []time.Duration
	r, err := retry.New(retry.MaxAttempts(4), retry.Delay(500*time.Millisecond), retry.Jitter(0.5),
		retry.WithClock(clk), retry.OnEvent(func(e policy.Event) {
			if e.Kind == retry.EventAttempt {
				waits = append(waits, e.Wait)
			}
		}))
	require.NoError(t, err)
	errs := []error{afterError{d: 2 * time.Second, has: true}, fmt.Errorf("wrapped: %w", afterError{d: 3 * time.Second, has: true}),
		afterError{d: time.Hour}}
	attempt := 0
	call := retry.DecorateFunc(r, func(context.Context, struct{}) (int, error) {
		if attempt < len(errs) {
			attempt++
			return 0, errs[attempt-1]
		}
		return 7, nil
	})
	start := clk.Now()
	v, err := call(context.Background(), struct{}{})
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	require.Len(t, waits, 3)
	assert.Equal(t, 2*time.Second, waits[0])
	assert.Equal(t, 3*time.Second, waits[1])
	assert.InDelta(t, float64(500*time.Millisecond), float64(waits[2]), float64(250*time.Millisecond), "no delay given: the jittered backoff")
	assert.Equal(t, 5*time.Second+waits[2], clk.Now()-start)
}

// The asynchronous retry honours the same delay, on a clock timer.
func TestRetryAfterErrorSetsTheAsyncWait(t *testing.T) {
	clk := clock.NewManual()
	r, err := retry.New(retry.MaxAttempts(2), retry.Delay(time.Millisecond), retry.WithClock(clk))
	require.NoError(t, err)
	attempt := 0
	call := retry.DecorateAsyncFunc(r, func(context.Context, struct{}) *async.Future[int] {
		attempt++
		if attempt == 1 {
			return async.Failed[int](afterError{d: 2 * time.Second, has: true})
		}
		return async.Completed(7)
	})
	f := call(context.Background(), struct{}{})
	clk.Advance(2*time.Second - time.Nanosecond)
	_, done, _ := f.Result()
	assert.False(t, done, "still waiting 1ns before the server's delay")
	clk.Advance(time.Nanosecond)
	v, done, err := f.Result()
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
}
