package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
)

// SPEC AS-7, AS-3: a scheduled call whose permit time comes while Cancel is under way
// (Cancel has completed its future, its hook has not run yet) does not start: Cancel
// reports true, and the permit is given back.
func TestAS7_AsyncPermitRacingCancelStartsNothing(t *testing.T) {
	clk, l, call, calls := asyncSetup(t)
	ctx := context.Background()
	_, err := call(ctx).Await(ctx)
	require.NoError(t, err)

	f := call(ctx)                                                 // its permit is 1s away
	f.OnComplete(func(string, error) { clk.Advance(time.Second) }) // inside Cancel
	assert.True(t, f.Cancel(), "the call never starts")
	_, err = f.Await(ctx)
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Equal(t, int64(1), calls.Load(), "the canceled call did not run")
	assert.Zero(t, l.Snapshot().Waiting)
	assert.Zero(t, clk.PendingTasks())
	assert.True(t, l.TryAcquire(), "its permit was given back")
}
