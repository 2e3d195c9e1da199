package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// AS-7: an inner future that completes while Cancel is under way (Cancel has completed
// the outer future, its hook has not run yet) does not record a success for a call whose
// caller gets async.ErrCanceled: the call is recorded once, as canceled.
func TestAS7_AsyncCompletionRacingCancelIsNotRecorded(t *testing.T) {
	clk := clock.NewManual()
	to, rec := observedTimeout(t, clk, time.Second)
	var in innerCall
	fut := timeout.DecorateAsyncFunc(to, in.next(false))(context.Background(), "")
	fut.OnComplete(func(string, error) { in.complete("v", nil) }) // inside Cancel, before its hook
	assert.False(t, fut.Cancel(), "next's work had started")

	_, err := requireDone(t, fut)
	require.ErrorIs(t, err, async.ErrCanceled)
	got := rec.Outcomes()
	require.Len(t, got, 1)
	assert.Equal(t, observe.ResultFailed, got[0].Result)
	assert.ErrorIs(t, got[0].Err, async.ErrCanceled)
	assert.Zero(t, clk.PendingTasks(), "the deadline's timer is stopped")
}

// AS-7: a deadline that passes while Cancel is under way neither publishes EventExceeded
// nor records a timeout for a canceled call.
func TestAS7_AsyncDeadlineRacingCancelIsNotRecorded(t *testing.T) {
	clk := clock.NewManual()
	to, rec := observedTimeout(t, clk, time.Second)
	var in innerCall
	fut := timeout.DecorateAsyncFunc(to, in.next(false))(context.Background(), "")
	fut.OnComplete(func(string, error) { clk.Advance(time.Second) })
	fut.Cancel()

	_, err := requireDone(t, fut)
	require.ErrorIs(t, err, async.ErrCanceled)
	got := rec.Outcomes()
	require.Len(t, got, 1)
	assert.Equal(t, observe.ResultFailed, got[0].Result)
	assert.ErrorIs(t, got[0].Err, async.ErrCanceled)
	assert.Empty(t, rec.Events(), "no EventExceeded for a canceled call")
	_, innerErr := requireDone(t, in.fut)
	assert.ErrorIs(t, innerErr, async.ErrCanceled, "next's future is canceled")
}

// AS-7: a Cancel during the recording of the inner future's result (the call's end is
// claimed) changes nothing: Cancel returns false and the caller gets next's result.
func TestAS7_AsyncCancelAfterTheEndIsClaimedLoses(t *testing.T) {
	clk := clock.NewManual()
	var fut *async.Future[string]
	var canceled bool
	rec := &cancelingRecorder{cancel: func() { canceled = fut.Cancel() }}
	to, err := timeout.New(time.Second, timeout.WithClock(clk), timeout.Observe(rec))
	require.NoError(t, err)
	var in innerCall
	fut = timeout.DecorateAsyncFunc(to, in.next(false))(context.Background(), "")
	in.complete("v", nil)
	assert.False(t, canceled)
	v, err := requireDone(t, fut)
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	assert.Equal(t, []observe.Result{observe.ResultSucceeded}, rec.results)
}

// cancelingRecorder calls cancel when it records an outcome.
type cancelingRecorder struct {
	cancel  func()
	results []observe.Result
}

func (r *cancelingRecorder) Instrument(policy.Layer, string) observe.Recorder { return r }

func (r *cancelingRecorder) Record(_ context.Context, o observe.Outcome) {
	r.results = append(r.results, o.Result)
	r.cancel()
}

func (r *cancelingRecorder) Event(context.Context, policy.Event) {}
