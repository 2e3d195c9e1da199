package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// SPEC HG-11: 200 calls within 10s that all need a hedge start exactly 20 hedges,
// max(10% of 200, 1/s × 10s); the 180 others publish HedgeSkipped and go on with their
// first attempt. Once the window has passed, the budget is back.
func TestHG11_BudgetBoundsHedges(t *testing.T) {
	h, clk, rec := newManual(t) // Delay 1s, 10%, 10s, 1/s
	d := newDep(clk, never())
	call := hedge.DecorateAsyncFunc(h, d.call)
	futs := make([]*async.Future[string], 0, 200)
	for i := range 200 {
		clk.AdvanceTo(time.Duration(i) * 10 * time.Millisecond)
		futs = append(futs, call(context.Background(), "q"))
	}
	clk.Advance(time.Second) // every call's delay has passed: t = 2.99s
	assert.Equal(t, 20, rec.Count(hedge.EventHedged))
	assert.Equal(t, 180, rec.Count(hedge.EventSkipped))
	assert.Equal(t, 220, d.attempts())
	for _, e := range rec.Events() {
		assert.Equal(t, 2, e.Attempt)
	}
	assert.Equal(t, withBudget(hedge.Snapshot{Instance: "Svc.Call", Calls: 200, Hedges: 20, BudgetAvailable: 0,
		Delay: time.Second, MaxAttempts: 2}), h.Snapshot())
	assert.Zero(t, clk.PendingTasks(), "no timer: each call hedged or was refused")
	for _, f := range futs {
		assert.True(t, pending(f), "a refused hedge leaves the call with its first attempt")
		f.Cancel()
	}

	// The window is exact to one bucket (500ms): an event leaves it when the bucket after
	// its own has been 10s in the past. The calls of [0, 500ms) leave at 10s; those of
	// [1.5s, 2s) (calls 150 to 199) and the hedges then (at 1.51s, 1.61s, ... 1.91s) at
	// 11.5s.
	clk.AdvanceTo(10*time.Second - 1)
	assert.Equal(t, 200, h.Snapshot().Calls)
	clk.AdvanceTo(10 * time.Second)
	assert.Equal(t, 150, h.Snapshot().Calls)
	clk.AdvanceTo(11500*time.Millisecond - 1)
	assert.Equal(t, withBudget(hedge.Snapshot{Instance: "Svc.Call", Calls: 50, Hedges: 5, BudgetAvailable: 5,
		Delay: time.Second, MaxAttempts: 2}), h.Snapshot(), "max(10% of 50, 10) - 5")
	clk.AdvanceTo(11500 * time.Millisecond)
	assert.Equal(t, withBudget(hedge.Snapshot{Instance: "Svc.Call", BudgetAvailable: 10, Delay: time.Second, MaxAttempts: 2}),
		h.Snapshot())
}

// SPEC HG-11: a refused hedge is not started and the call tries no further one, but goes
// on with the attempts already running.
func TestHG11_RefusedHedgeEndsHedging(t *testing.T) {
	// percent 0, floor 0.1/s × 10s = 1: one hedge per window.
	h, clk, rec := newManual(t, hedge.MaxAttempts(3), hedge.BudgetPercent(0), hedge.BudgetMinPerSecond(0.1))
	d := newDep(clk, ok(2500*time.Millisecond, "first"), never())
	f := hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	clk.Advance(2 * time.Second)
	assert.Equal(t, 2, d.attempts(), "attempt 3 refused")
	assert.Equal(t, 1, clk.PendingTasks(), "attempt 1's answer only: no timer after the refusal")
	clk.Advance(500 * time.Millisecond)
	v, err := result(t, f)
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	assert.Equal(t, []policy.Event{
		{Kind: hedge.EventHedged, Instance: "Svc.Call", At: time.Second, Wait: time.Second, Attempt: 2},
		{Kind: hedge.EventSkipped, Instance: "Svc.Call", At: 2 * time.Second, Attempt: 3},
		{Kind: hedge.EventWon, Instance: "Svc.Call", At: 2500 * time.Millisecond, Attempt: 1},
	}, rec.Events())

	// A refusal on error: the call fails with that error when nothing else is in flight.
	d = newDep(clk, failsNow(errHedge))
	f = hedge.DecorateAsyncFunc(h, d.call)(context.Background(), "q")
	_, err = result(t, f)
	assert.Same(t, errHedge, err)
	assert.Equal(t, 1, d.attempts())
	events := rec.Events()
	assert.Equal(t, policy.Event{Kind: hedge.EventSkipped, Instance: "Svc.Call", At: 2500 * time.Millisecond,
		Attempt: 2}, events[len(events)-1], "no HedgeFailed: the call never hedged")
	assert.Zero(t, clk.PendingTasks())
}

// SPEC HG-11: with the budget off every call hedges, and the snapshot says -1.
func TestHG11_BudgetOff(t *testing.T) {
	h, clk, rec := newManual(t, hedge.Budget(false), hedge.BudgetPercent(0), hedge.BudgetMinPerSecond(0))
	d := newDep(clk, never())
	call := hedge.DecorateAsyncFunc(h, d.call)
	for range 50 {
		defer call(context.Background(), "q").Cancel()
	}
	clk.Advance(time.Second)
	assert.Equal(t, 50, rec.Count(hedge.EventHedged))
	assert.Equal(t, hedge.Snapshot{Instance: "Svc.Call", BudgetAvailable: -1, Delay: time.Second, MaxAttempts: 2,
		BudgetWindow: 10 * time.Second, NoBudget: true}, h.Snapshot())
}

// SPEC HG-11, HG-15: one hedge shares its budget among every function it decorates.
func TestHG11_SharedBudget(t *testing.T) {
	h, clk, _ := newManual(t, hedge.BudgetMinPerSecond(0.2)) // floor 2
	d := newDep(clk, never())
	a, b := hedge.DecorateAsyncFunc(h, d.call), hedge.DecorateAsyncFunc(h, d.call)
	defer a(context.Background(), "a").Cancel()
	defer b(context.Background(), "b").Cancel()
	defer a(context.Background(), "a").Cancel()
	assert.Equal(t, 3, h.Snapshot().Calls)
	assert.Equal(t, 2, h.Snapshot().BudgetAvailable)
	clk.Advance(time.Second)
	s := h.Snapshot()
	assert.Equal(t, []int{3, 2, 0}, []int{s.Calls, s.Hedges, s.BudgetAvailable})
}

// SPEC HG-11, HG-20: the budget is exact: 2.2% of 1,500 calls allows exactly 33 hedges
// (2.2 × 1500 / 100 is 33.000000000000007 in float64), and a floor of 0.14/s over 50s
// exactly 7; the snapshot reports the same allowance.
func TestHG20_BudgetIsExactDecimal(t *testing.T) {
	for _, tc := range []struct {
		name         string
		percent, mps float64
		window       time.Duration
		calls, want  int
	}{
		{"2.2% of 1500", 2.2, 0, 10 * time.Second, 1500, 33},
		{"0.14/s over 50s", 10, 0.14, 50 * time.Second, 20, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, clk, rec := newManual(t, hedge.Delay(time.Second), hedge.BudgetPercent(tc.percent),
				hedge.BudgetMinPerSecond(tc.mps), hedge.BudgetWindow(tc.window))
			d := newDep(clk, never())
			call := hedge.DecorateAsyncFunc(h, d.call)
			futs := make([]*async.Future[string], 0, tc.calls)
			for range tc.calls {
				futs = append(futs, call(context.Background(), "q"))
			}
			assert.Equal(t, tc.want, h.Snapshot().BudgetAvailable, "before any hedge")
			clk.Advance(time.Second)
			assert.Equal(t, tc.want, rec.Count(hedge.EventHedged))
			assert.Equal(t, tc.calls-tc.want, rec.Count(hedge.EventSkipped))
			assert.Zero(t, h.Snapshot().BudgetAvailable, "none left")
			for _, f := range futs {
				f.Cancel()
			}
		})
	}
}
