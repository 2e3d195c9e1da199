package bulkhead_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// AS-7: a queued call whose MaxWait runs out while Cancel is under way (Cancel has
// completed its future, its hook has not run yet) is not rejected as expired: no
// rejection event for a caller who gets async.ErrCanceled, and it leaves the queue.
func TestAS7_AsyncExpiryRacingCancelIsNotReported(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	call(context.Background(), 1)
	queued := call(context.Background(), 2)
	require.Equal(t, 1, b.Snapshot().Waiting)
	queued.OnComplete(func(string, error) { clk.Advance(time.Second) }) // inside Cancel
	assert.True(t, queued.Cancel(), "the queued call never started")

	_, err := result(t, queued)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Empty(t, rec.Events(), "no rejection for a canceled call")
	assert.Zero(t, b.Snapshot().Waiting)
	assert.Equal(t, []int{1}, c.Started())
	assert.Zero(t, clk.PendingTasks())
}

// AS-7: a slot handed to a queued call while Cancel is under way does not start it: the
// slot goes to the next waiter, and Cancel reports true.
func TestAS7_AsyncSlotRacingCancelStartsNothing(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	call(context.Background(), 1)
	queued := call(context.Background(), 2)
	third := call(context.Background(), 3)
	queued.OnComplete(func(string, error) { c.Finish(1) }) // the slot comes back inside Cancel
	assert.True(t, queued.Cancel(), "the canceled call never starts")

	_, err := result(t, queued)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, []int{1, 3}, c.Started(), "the slot goes to the next waiter")
	assert.True(t, pending(third))
	assert.Zero(t, b.Snapshot().Waiting)
	assert.Equal(t, 0, b.Snapshot().AvailableSlots)
	c.Finish(3)
	assert.Equal(t, 1, b.Snapshot().AvailableSlots)
	assert.Zero(t, clk.PendingTasks())
	require.Len(t, rec.Events(), 1, "only the third call's admission")
	assert.Equal(t, bulkhead.EventWaited, rec.Events()[0].Kind)
}
