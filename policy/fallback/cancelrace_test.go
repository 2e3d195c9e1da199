package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy/fallback"
)

// AS-7: a Cancel that comes while the fallback is being applied (its event published, its
// function running) does not cancel a call whose fallback has begun: Cancel returns false
// and the caller gets the fallback's result, the one its EventApplied announced.
func TestAS7_AsyncCancelDuringTheFallbackLoses(t *testing.T) {
	var out *async.Future[string]
	var canceled bool
	runs := 0
	ev := &events{}
	f, err := fallback.New(func(_ context.Context, err error) (string, error) {
		runs++
		canceled = out.Cancel() // the caller cancels as the inner future fails
		return "cached (" + err.Error() + ")", nil
	}, fallback.OnEvent(ev.listen))
	require.NoError(t, err)
	next, complete, _ := pendingCall()
	out = fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")

	complete("", errBoom)
	assert.Equal(t, 1, runs)
	assert.False(t, canceled, "the fallback had begun: Cancel changes nothing")
	v, err := out.Await(context.Background())
	require.NoError(t, err, "the caller gets the fallback's result, not async.ErrCanceled")
	assert.Equal(t, "cached (boom)", v)
	require.Len(t, ev.get(), 1)
	assert.Equal(t, fallback.EventApplied, ev.get()[0].Kind)
}

// AS-7: a Cancel that begins first wins: the inner future failing in Cancel's course
// (before Cancel's hook has run) neither runs the fallback function nor publishes
// EventApplied.
func TestAS7_AsyncCancelBeforeTheFallbackWins(t *testing.T) {
	runs := 0
	ev := &events{}
	f, err := fallback.New(func(_ context.Context, err error) (string, error) {
		runs++
		return "cached", nil
	}, fallback.OnEvent(ev.listen))
	require.NoError(t, err)
	next, complete, _ := pendingCall()
	out := fallback.DecorateAsyncFunc(f, next)(context.Background(), "go")
	out.OnComplete(func(string, error) { complete("", errBoom) }) // runs inside Cancel
	out.Cancel()
	_, err = out.Await(context.Background())
	require.ErrorIs(t, err, async.ErrCanceled)
	assert.Zero(t, runs, "no fallback for a canceled call")
	assert.Empty(t, ev.get(), "no EventApplied for a canceled call")
}
