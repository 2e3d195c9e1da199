package adaptivelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// AS-7: a queued call whose MaxWait runs out while Cancel is under way (Cancel has
// completed its future, its hook has not run yet) is not rejected: no rejection event
// for a caller who gets async.ErrCanceled, and it leaves the queue.
func TestAS7_AsyncExpiryRacingCancelIsNotReported(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Second)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	call(context.Background(), 1)
	queued := call(context.Background(), 2)
	require.Equal(t, 1, l.Queued())
	queued.OnComplete(func(string, error) { clk.Advance(time.Second) }) // inside Cancel
	assert.True(t, queued.Cancel(), "the queued call never started")

	_, err := result(t, queued)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Empty(t, rec.Events(), "no rejection for a canceled call")
	assert.Zero(t, l.Queued())
	assert.Zero(t, clk.PendingTasks())
}

// AS-7: room that comes free for a queued call while Cancel is under way does not start
// it: the room goes to the next waiter, and Cancel reports true.
func TestAS7_AsyncRoomRacingCancelStartsNothing(t *testing.T) {
	l, clk, rec := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Second)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	call(context.Background(), 1)
	queued := call(context.Background(), 2)
	third := call(context.Background(), 3)
	queued.OnComplete(func(string, error) { c.Finish(1) }) // room comes back inside Cancel
	assert.True(t, queued.Cancel(), "the canceled call never starts")

	_, err := result(t, queued)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, []int{1, 3}, c.Started(), "the room goes to the next waiter")
	assert.True(t, pending(third))
	assert.Zero(t, l.Queued())
	assert.Equal(t, 1, l.InFlight())
	assert.Zero(t, clk.PendingTasks())
	for _, e := range rec.Events() {
		assert.NotEqual(t, adaptivelimit.EventRejected, e.Kind)
	}
	assert.Len(t, rec.Of(adaptivelimit.EventWaited), 1, "only the third call's admission")
}
