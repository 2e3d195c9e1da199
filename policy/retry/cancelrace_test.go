package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
)

// AS-7: an attempt that succeeds while Cancel is under way (Cancel has completed the
// call's future, its hook has not run yet) does not end the call as a success: the call
// is recorded once, as aborted with async.ErrCanceled, for a caller who gets it.
func TestAS7_AsyncResultRacingCancelIsNotRecorded(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk)
	fn := &asyncFn{clk: clk}
	f := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	require.Equal(t, 1, fn.n())
	f.OnComplete(func(int, error) { fn.last().complete(7, nil) }) // inside Cancel
	assert.False(t, f.Cancel(), "the attempt had started")

	_, err := settled(t, f)
	require.ErrorIs(t, err, async.ErrCanceled)
	got := rec.Outcomes()
	require.Len(t, got, 1)
	assert.Equal(t, observe.ResultAborted, got[0].Result)
	assert.ErrorIs(t, got[0].Err, async.ErrCanceled)
	assert.Empty(t, rec.Events())
}

// AS-7: a wait whose delay passes while Cancel is under way starts no further attempt.
func TestAS7_AsyncWaitRacingCancelStartsNothing(t *testing.T) {
	clk := clock.NewManual()
	r, rec := observedRetry(t, clk)
	fn := &asyncFn{clk: clk}
	f := retry.DecorateAsyncFunc(r, fn.call)(context.Background(), struct{}{})
	fn.last().complete(0, errBoom)
	require.Equal(t, 1, clk.PendingTasks(), "waiting for attempt 2")
	f.OnComplete(func(int, error) { clk.Advance(time.Second) })
	f.Cancel()

	assert.Equal(t, 1, fn.n(), "no attempt starts after Cancel began")
	got := rec.Outcomes()
	require.Len(t, got, 1)
	assert.Equal(t, observe.ResultAborted, got[0].Result)
	assert.ErrorIs(t, got[0].Err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks())
}
