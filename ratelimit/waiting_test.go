package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kindtest"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// OB-2: Snapshot.Waiting counts the calls that wait for a reserved permit, async
// (scheduled) and sync (blocked), until they start, are canceled or their context ends.
func TestOB2_SnapshotCountsWaitingCalls(t *testing.T) {
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(10*time.Second),
		ratelimit.WithClock(clk))
	require.NoError(t, err)
	call := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	ctx := t.Context()
	first := call(ctx, 0)
	second := call(ctx, 0)
	third := call(ctx, 0)
	cctx, cancel := context.WithCancel(ctx)
	fourth := call(cctx, 0)
	assert.Equal(t, 3, l.Snapshot().Waiting, "three scheduled")
	_, err = first.Await(ctx)
	require.NoError(t, err)
	assert.True(t, third.Cancel())
	assert.Equal(t, 2, l.Snapshot().Waiting, "a canceled call waits no more")
	cancel()
	kindtest.Eventually(t, func() bool { return l.Snapshot().Waiting == 1 }, "the call whose context ended leaves")
	_, err = fourth.Await(ctx)
	require.ErrorIs(t, err, ratelimit.ErrExceeded)
	clk.Advance(time.Second)
	_, err = second.Await(ctx)
	require.NoError(t, err)
	assert.Zero(t, l.Snapshot().Waiting)

	l, err = ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(10*time.Second),
		ratelimit.WithClock(clk))
	require.NoError(t, err)
	sync := ratelimit.DecorateFunc(l, func(context.Context, int) (int, error) { return 1, nil })
	_, err = sync(ctx, 0)
	require.NoError(t, err, "the burst's permit")
	// The manual clock's Sleep advances the clock and runs the timers that fall due: a
	// timer halfway through the wait sees the blocked call.
	seen := -1
	clk.AfterFunc(500*time.Millisecond, func() { seen = l.Snapshot().Waiting })
	_, err = sync(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, seen, "the blocked call is counted while it sleeps")
	assert.Zero(t, l.Snapshot().Waiting)
}
