package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-1: a call whose context is nil or already done when it arrives starts nothing,
// publishes nothing, arms nothing and is not counted by the budget: its future fails with
// the context's error (fault: a nil context panicked; the function ran).
func TestHG1_DoneContextOnArrival(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		for _, dc := range ctxtest.OverContexts() {
			t.Run(dc.Name, func(t *testing.T) {
				h, clk, rec := newManual(t, hedge.Enabled(enabled), hedge.Delay(0))
				before := h.Snapshot()
				ran := false
				f := hedge.DecorateAsyncFunc(h, func(context.Context, int) *async.Future[int] {
					ran = true
					return async.Completed(1)
				})(dc.Ctx, 1)
				require.NotNil(t, f)
				_, err := result(t, f)
				assert.ErrorIs(t, err, dc.Want)
				assert.Equal(t, dc.Want, err, "the context's error as it is")
				assert.False(t, ran, "the function never ran")
				assert.Zero(t, clk.PendingTasks())
				clk.Advance(time.Hour)
				assert.Empty(t, rec.Events())
				assert.Equal(t, before, h.Snapshot(), "the budget is untouched")
			})
		}
	}
}

// SPEC HG-14: a disabled hedge makes every call a single attempt, with no timer, no
// budget and no event; a nil future becomes one failed with async.ErrNilFuture.
func TestHG14_Disabled(t *testing.T) {
	h, clk, rec := newManual(t, hedge.Enabled(false), hedge.Delay(0))
	d := newDep(clk, fails(time.Second, errHedge))
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	assert.Equal(t, 1, clk.PendingTasks(), "only the dependency's timer")
	clk.Advance(time.Hour)
	_, err := result(t, f)
	assert.Same(t, errHedge, err)
	assert.Equal(t, 1, d.attempts())
	assert.Equal(t, context.Background(), d.ctx(1), "next gets the caller's context")
	assert.Empty(t, rec.Events())
	assert.Equal(t, withBudget(hedge.Snapshot{Instance: "Svc.Call", Delay: 0, MaxAttempts: 2, Disabled: true}), h.Snapshot())

	nilFut := hedge.DecorateAsyncFunc(h, func(context.Context, string) *async.Future[string] { return nil })
	_, err = result(t, nilFut(context.Background(), "q"))
	assert.ErrorIs(t, err, async.ErrNilFuture)
}
