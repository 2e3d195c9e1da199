package bulkhead_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// A call whose context is nil or already done when it arrives takes no slot, never runs
// the function and publishes nothing, whether a slot is free or not and whatever MaxWait
// is: it is rejected with the bulkhead's rejection wrapping the context's error (fault:
// with a slot free the function ran; with MaxWait 0 the plain rejection hid the context's
// error; a nil context panicked).
func TestDoneContextOnArrivalSync(t *testing.T) {
	contracttest.ArrivalCases(t, func(t *testing.T, dc ctxtest.Over, maxWait time.Duration, full bool) {
		b, clk, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(maxWait))
		if full {
			require.True(t, b.TryAcquire())
			require.True(t, b.TryAcquire())
		}
		slots := b.Snapshot().AvailableSlots
		call := bulkhead.DecorateFunc(b, func(context.Context, struct{}) (int, error) {
			t.Error("the function ran")
			return 1, nil
		})
		v, err := call(dc.Ctx, struct{}{})
		assert.Zero(t, v)
		requireFull(t, err)
		require.ErrorIs(t, err, dc.Want)

		err = b.Acquire(dc.Ctx)
		requireFull(t, err)
		require.ErrorIs(t, err, dc.Want)

		assert.Equal(t, slots, b.Snapshot().AvailableSlots, "no slot taken")
		assert.Zero(t, b.Snapshot().Waiting)
		assert.Zero(t, clk.PendingTasks())
		assert.Empty(t, rec.Events(), "no event")
	})
}

// The same for asynchronous calls: a future failed with that rejection, next never
// runs, no slot, no queue, no timer, no event.
func TestDoneContextOnArrivalAsync(t *testing.T) {
	contracttest.ArrivalCases(t, func(t *testing.T, dc ctxtest.Over, maxWait time.Duration, full bool) {
		b, clk, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(maxWait))
		if full {
			require.True(t, b.TryAcquire())
			require.True(t, b.TryAcquire())
		}
		slots := b.Snapshot().AvailableSlots
		c := contracttest.NewCalls()
		fut := bulkhead.DecorateAsyncFunc(b, c.Next)(dc.Ctx, 1)
		_, err := result(t, fut)
		requireFull(t, err)
		require.ErrorIs(t, err, dc.Want)
		assert.Empty(t, c.Started(), "next never ran")
		assert.Equal(t, slots, b.Snapshot().AvailableSlots, "no slot taken")
		assert.Zero(t, b.Snapshot().Waiting)
		assert.Zero(t, clk.PendingTasks())
		assert.Empty(t, rec.Events(), "no event")
	})
}

// A next that returns a nil future gives its slot back at once and the caller gets a
// future failed with async.ErrNilFuture, whether it started at once or from the queue
// (fault: the nil future went back to the caller).
func TestAsyncNilFuture(t *testing.T) {
	b, clk, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	holder := bulkhead.DecorateAsyncFunc(b, c.Next)(context.Background(), 1)
	nilNext := bulkhead.DecorateAsyncFunc(b, func(context.Context, int) *async.Future[int] { return nil })

	queued := nilNext(context.Background(), 2)
	require.NotNil(t, queued)
	assert.Equal(t, 1, b.Snapshot().Waiting)
	c.Finish(1)
	_, err := result(t, holder)
	require.NoError(t, err)
	_, err = result(t, queued)
	require.ErrorIs(t, err, async.ErrNilFuture, "started from the queue")
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)

	now := nilNext(context.Background(), 3)
	require.NotNil(t, now)
	_, err = result(t, now)
	require.ErrorIs(t, err, async.ErrNilFuture, "started at once")
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
}

// Waits measured near the end of representable time saturate: a MaxWait of 292 years
// and a clock close to its end give a positive time waited, never a negative one, and
// the rejection after MaxWait has no RetryAfter (fault: durations could overflow).
func TestHugeMaxWaitSaturates(t *testing.T) {
	const forever = time.Duration(math.MaxInt64)
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(forever))
	clk.AdvanceTo(forever - time.Hour)
	require.True(t, b.TryAcquire())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, b.Acquire(context.Background())) })
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
	clk.Advance(30 * time.Minute)
	b.Release()
	wg.Wait()
	events := rec.Events()
	require.Len(t, events, 1)
	assert.Equal(t, bulkhead.EventWaited, events[0].Kind)
	assert.Equal(t, 30*time.Minute, events[0].Wait)
	assert.Zero(t, events[0].RetryAfter)

	// The wait's timer saturates at the end of time: the waiter is rejected there.
	wg.Go(func() { requireFull(t, b.Acquire(context.Background())) })
	contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == 1 }, "waiter queued")
	clk.Advance(forever)
	wg.Wait()
	events = rec.Events()
	require.Len(t, events, 2)
	assert.Equal(t, bulkhead.EventRejected, events[1].Kind)
	assert.Equal(t, 30*time.Minute, events[1].Wait, "from 292y-30m to the end of time")
	assert.Zero(t, events[1].RetryAfter)
	b.Release()
}
