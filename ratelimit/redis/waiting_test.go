package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC OB-2: a limiter on Redis counts in Snapshot.Waiting the calls of this process that
// wait for a permit Redis reserved, sync and async alike. (Fault: a call scheduled by the
// async decorator was counted, one blocked in the sync one was not, and the docs said
// a limiter with a backend reports 0.)
func TestOB2_WaitingCallsOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		clk := clock.NewManual() // the limiter's waits; Redis decides on its own clock
		l := limiter(t, b, "waiting", ratelimit.Permits(1), ratelimit.Period(time.Hour),
			ratelimit.MaxWait(3*time.Hour), ratelimit.WithClock(clk))
		ctx := t.Context()
		require.True(t, l.TryAcquire(), "the burst's permit")

		p := ratelimit.NewPolicy[int](l)
		call := p.DecorateAsync(func(context.Context) *async.Future[int] { return async.Completed(1) })
		scheduled := call(ctx)
		assert.Equal(t, 1, l.Snapshot().Waiting, "a call scheduled for its permit")
		assert.True(t, scheduled.Cancel())
		assert.Zero(t, l.Snapshot().Waiting, "a canceled call waits no more")

		sync := p.Decorate(func(context.Context) (int, error) { return 1, nil })
		seen := -1
		clk.AfterFunc(30*time.Minute, func() { seen = l.Snapshot().Waiting })
		_, err := sync(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, seen, "a call blocked for its permit is counted as a scheduled one is")
		assert.Zero(t, l.Snapshot().Waiting)
	})
}
