package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// The retry's error lists are its own: changing the slice given to WithConfig after New,
// or the one Config returned, changes neither what it retries nor its Config, and the
// Config it returns can still be given to Reconfigure.
func TestErrorListsAreTheRetrysOwn(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	base := retry.DefaultConfig()
	base.MaxAttempts, base.Delay = 3, 0
	base.AbortOn = []error{errA}
	r, err := retry.New(retry.WithClock(clock.NewManual()), retry.WithConfig(base))
	require.NoError(t, err)
	base.AbortOn[0] = errB
	c := r.Config()
	c.AbortOn[0] = errB
	assert.Equal(t, []error{errA}, r.Config().AbortOn)
	calls := 0
	_, err = retry.DecorateFunc(r, func(context.Context, int) (int, error) { calls++; return 0, errA })(context.Background(), 0)
	assert.ErrorIs(t, err, errA)
	assert.Equal(t, 1, calls, "errA still aborts")

	c = r.Config()
	c.Delay = time.Millisecond
	require.NoError(t, r.Reconfigure(c), "a copy of the lists is still the retry's lists")
	assert.Equal(t, time.Millisecond, r.Config().Delay)
}
