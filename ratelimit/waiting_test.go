package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
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
	contracttest.Eventually(t, func() bool { return l.Snapshot().Waiting == 1 }, "the call whose context ended leaves")
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

// OB-2: with a backend, Snapshot.Waiting counts the calls of this process that wait for a
// permit their store reserved, sync (blocked) and async (scheduled) alike, as an
// in-process limiter does. (Fault: the async calls were counted and the sync ones not,
// while the docs said a limiter with a backend reports 0.)
func TestOB2_SnapshotCountsWaitingCallsWithABackend(t *testing.T) {
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Admitted, Wait: time.Second,
		Prev: 0, Next: int64(time.Second), At: int64(time.Second)}}
	clk := clock.NewManual()
	l, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(10*time.Second),
		ratelimit.WithClock(clk), ratelimit.WithBackend(st))
	require.NoError(t, err)
	ctx := t.Context()

	async1 := ratelimit.DecorateAsyncFunc(l, func(context.Context, int) *async.Future[int] { return async.Completed(1) })
	first := async1(ctx, 0)
	second := async1(ctx, 0)
	assert.Equal(t, 2, l.Snapshot().Waiting, "two scheduled")
	assert.True(t, second.Cancel())
	assert.Equal(t, 1, l.Snapshot().Waiting, "a canceled call waits no more")
	clk.Advance(time.Second)
	_, err = first.Await(ctx)
	require.NoError(t, err)
	assert.Zero(t, l.Snapshot().Waiting)

	sync := ratelimit.DecorateFunc(l, func(context.Context, int) (int, error) { return 1, nil })
	seen := -1
	clk.AfterFunc(500*time.Millisecond, func() { seen = l.Snapshot().Waiting })
	_, err = sync(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, seen, "the blocked call is counted while it sleeps, as the scheduled ones are")
	assert.Zero(t, l.Snapshot().Waiting)

	// A store that answers Local: the in-process fallback's waits are counted the same.
	st.grant = backend.Grant{Verdict: backend.Local}
	require.NoError(t, l.Acquire(ctx), "the local burst's permit")
	seen = -1
	clk.AfterFunc(500*time.Millisecond, func() { seen = l.Snapshot().Waiting })
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, 1, seen, "a call waiting for a local permit is counted")
	assert.Zero(t, l.Snapshot().Waiting)
}
