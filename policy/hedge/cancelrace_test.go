package hedge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// AS-7: an attempt whose result arrives while Cancel is under way (Cancel has completed
// the call's future, its hook has not run yet) neither wins nor fails the call: no
// HedgeWon or HedgeFailed, and the call is recorded once, as canceled, for a caller who
// gets async.ErrCanceled.
func TestAS7_HedgeResultRacingCancelIsNotRecorded(t *testing.T) {
	for _, c := range []struct {
		name string
		last step
	}{
		{"success", ok(100*time.Millisecond, "fast")},
		{"abort", fails(100*time.Millisecond, errOther)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, clk, rec := observedHedge(t, hedge.Delay(time.Second), hedge.MaxAttempts(2), hedge.AbortOn(errOther))
			d := newDep(clk, ok(3*time.Second, "slow"), c.last)
			f := hedge.DecorateAsyncFunc(h, d.call)(contracttest.Marked("call"), "")
			clk.Advance(time.Second)
			require.Equal(t, 2, d.attempts())
			f.OnComplete(func(string, error) { clk.Advance(100 * time.Millisecond) }) // inside Cancel
			assert.False(t, f.Cancel(), "the attempts had started")

			_, err := result(t, f)
			require.ErrorIs(t, err, async.ErrCanceled)
			assert.Equal(t, []observe.Outcome{
				{Result: observe.ResultFailed, Attempts: 2, Latency: 1100 * time.Millisecond, Err: async.ErrCanceled},
			}, rec.Outcomes())
			assert.Equal(t, []string{"Hedged#2@call"}, evKinds(rec), "no end but the cancellation")
			_, err = result(t, d.fut(1))
			assert.ErrorIs(t, err, async.ErrCanceled, "attempt 1 is canceled")
			assert.Error(t, d.ctx(1).Err())
			assert.Error(t, d.ctx(2).Err(), "attempt 2's context is canceled once its result came")
			assert.Zero(t, clk.PendingTasks())
		})
	}
}

// HG-9, AS-7: a hedge that falls due while Cancel is under way (Cancel has completed the
// call's future, its hook has not run yet), by the delay's timer or by a failure that
// hedges at once, starts no attempt: the caller already has async.ErrCanceled.
func TestHG9_HedgeDueWhileCancelRunsStartsNothing(t *testing.T) {
	for _, c := range []struct {
		name  string
		first step
	}{
		{"delay", ok(3*time.Second, "slow")},
		{"failure", fails(100*time.Millisecond, errHedge)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, clk, rec := observedHedge(t, hedge.Delay(time.Second), hedge.MaxAttempts(2), hedge.On(errHedge))
			d := newDep(clk, c.first, ok(time.Second, "second"))
			f := hedge.DecorateAsyncFunc(h, d.call)(contracttest.Marked("call"), "")
			require.Equal(t, 1, d.attempts())
			f.OnComplete(func(string, error) { clk.Advance(time.Second) }) // inside Cancel
			f.Cancel()

			_, err := result(t, f)
			require.ErrorIs(t, err, async.ErrCanceled)
			assert.Equal(t, 1, d.attempts(), "no attempt starts once Cancel has begun")
			assert.Empty(t, evKinds(rec), "no hedge is published")
			assert.Equal(t, []observe.Outcome{
				{Result: observe.ResultFailed, Attempts: 1, Latency: time.Second, Err: async.ErrCanceled},
			}, rec.Outcomes())
			assert.Error(t, d.ctx(1).Err(), "attempt 1 is canceled")
			assert.Zero(t, clk.PendingTasks())
		})
	}
}
