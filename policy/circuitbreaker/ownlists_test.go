package circuitbreaker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

// The breaker's error lists are its own: changing the slices given to IgnoreOn and
// RecordOn after New, or the ones Config returned, changes neither its classification nor its Config
// (fault: both were the breaker's own backing arrays, and an ignored error opened it).
func TestErrorListsAreTheBreakersOwn(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	ignore, record := []error{errA}, []error{errB}
	b, err := cb.New(cb.WithClock(clock.NewManual()), cb.SlidingWindowSize(1), cb.MinimumCalls(1),
		cb.IgnoreOn(ignore...), cb.RecordOn(record...))
	require.NoError(t, err)
	ignore[0], record[0] = errB, errA // the caller reuses its slices
	c := b.Config()
	c.IgnoreOn[0], c.RecordOn[0] = errB, errA
	assert.Equal(t, []error{errA}, b.Config().IgnoreOn)
	assert.Equal(t, []error{errB}, b.Config().RecordOn)
	_, _ = cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 0, errA })(context.Background(), 0)
	assert.Equal(t, cb.Closed, b.State(), "errA is still ignored")
	_, _ = cb.DecorateFunc(b, func(context.Context, int) (int, error) { return 0, errB })(context.Background(), 0)
	assert.Equal(t, cb.Open, b.State(), "errB is still recorded")
}
