package ratelimit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// A Limiter not built with New has no configuration: it refuses every call instead of
// letting them all through.
func TestZeroLimiterRefusesEveryCall(t *testing.T) {
	var l ratelimit.Limiter
	for range 3 {
		assert.False(t, l.TryAcquire())
		assert.ErrorIs(t, l.Acquire(context.Background()), ratelimit.ErrExceeded)
		_, err := l.Reserve()
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	}
	rej := l.Rejection()
	require.Error(t, rej)
	assert.ErrorIs(t, rej, ratelimit.ErrExceeded)
	var ee *ratelimit.ExceededError
	assert.True(t, errors.As(rej, &ee))
	assert.Zero(t, l.Snapshot().AvailablePermits)

	calls := 0
	_, err := ratelimit.DecorateFunc(&l, func(context.Context, struct{}) (int, error) {
		calls++
		return 1, nil
	})(context.Background(), struct{}{})
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	f := ratelimit.DecorateAsyncFunc(&l, func(context.Context, struct{}) *async.Future[int] {
		calls++
		return async.Completed(1)
	})(context.Background(), struct{}{})
	_, done, err := f.Result()
	require.True(t, done, "refused at once")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Zero(t, calls, "the function is never called")
}
