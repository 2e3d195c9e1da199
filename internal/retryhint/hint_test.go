package retryhint_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/retryhint"
	"github.com/resilience4go/resilience4go/policy"
)

// A hint answers RetryAfter and NeverRetried from its fields; a nil one asks for no delay
// and is never retried.
func TestHint_Answers(t *testing.T) {
	var none *retryhint.Hint
	d, ok := none.RetryAfter()
	assert.False(t, ok)
	assert.Zero(t, d)
	assert.True(t, none.NeverRetried())

	h := &retryhint.Hint{Delay: 3 * time.Second, HasDelay: true, Retry: true}
	d, ok = h.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	assert.False(t, h.NeverRetried())
	assert.True(t, (&retryhint.Hint{}).NeverRetried())
}

// A delay fits when it is at most the most a client waits and ends before the deadline;
// no delay always fits.
func TestHint_Fits(t *testing.T) {
	far := time.Now().Add(time.Hour)
	near := time.Now().Add(time.Second)
	assert.True(t, (&retryhint.Hint{}).Fits(0, near), "no delay")
	h := &retryhint.Hint{Delay: 10 * time.Second, HasDelay: true}
	assert.True(t, h.Fits(time.Minute, time.Time{}), "no deadline")
	assert.True(t, h.Fits(10*time.Second, far), "the delay is the most the client waits")
	assert.False(t, h.Fits(9*time.Second, far), "beyond the most the client waits")
	assert.False(t, h.Fits(time.Minute, near), "ends after the deadline")
}

// MaxDelay is the configured delay, one minute for 0, and R4C-ATR-004 for a negative one.
func TestMaxDelay(t *testing.T) {
	d, err := retryhint.MaxDelay("resiliencehttp.maxRetryAfter", 0)
	require.NoError(t, err)
	assert.Equal(t, retryhint.DefaultMaxDelay, d)
	d, err = retryhint.MaxDelay("resiliencehttp.maxRetryAfter", 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, d)
	_, err = retryhint.MaxDelay("resiliencegrpc.maxRetryDelay", -time.Second)
	var ce *policy.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, r4c.NegativeDuration, ce.Code)
	assert.Equal(t, "resiliencegrpc.maxRetryDelay", ce.Key)
	assert.Equal(t, "-1s", ce.Value)
	assert.Equal(t, "maxRetryDelay must not be negative (0 means one minute)", ce.Reason)
}

// Ceil rounds a delay up to whole units, so that a client waiting them is never early;
// no delay, or a negative one, is 0.
func TestCeil(t *testing.T) {
	assert.Zero(t, retryhint.Ceil(0, time.Second))
	assert.Zero(t, retryhint.Ceil(-time.Second, time.Second))
	assert.Equal(t, int64(1), retryhint.Ceil(time.Nanosecond, time.Second))
	assert.Equal(t, int64(1), retryhint.Ceil(time.Second, time.Second))
	assert.Equal(t, int64(2), retryhint.Ceil(time.Second+1, time.Second))
	assert.Equal(t, int64(1500), retryhint.Ceil(1500*time.Millisecond, time.Millisecond))
	assert.Equal(t, int64(1501), retryhint.Ceil(1500*time.Millisecond+1, time.Millisecond))
	assert.Equal(t, int64(1<<63-1)/int64(time.Millisecond)+1, retryhint.Ceil(1<<63-1, time.Millisecond))
}
