package adaptivelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// at returns a background context carrying priority p.
func at(p policy.Priority) context.Context { return policy.WithPriority(context.Background(), p) }

// SPEC PR-1: the shares are of the limit in force: with a limit of 4 and the default
// reserve, sheddable calls take 2, sheddable_plus 3, critical 4; a call refused with room
// left for higher priorities is counted as shed, and its event says so (SPEC PR-4).
func TestPriority_PR1_SharesOfTheLimit(t *testing.T) {
	l, _, rec := newManual(t, fixed(4)...)
	var held []adaptivelimit.Permit
	take := func(p policy.Priority) bool {
		pm, err := l.Acquire(at(p))
		if err != nil {
			require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
			return false
		}
		held = append(held, pm)
		return true
	}
	assert.True(t, take(policy.PrioritySheddable))
	assert.True(t, take(policy.PrioritySheddable))
	assert.False(t, take(policy.PrioritySheddable))
	assert.True(t, take(policy.PrioritySheddablePlus))
	assert.False(t, take(policy.PrioritySheddablePlus))
	assert.True(t, take(policy.PriorityCritical))
	assert.False(t, take(policy.PriorityCriticalPlus))
	assert.Equal(t, [4]int64{1, 1, 0, 0}, l.Snapshot().Shed)
	ev := rec.Of(adaptivelimit.EventRejected)
	require.Len(t, ev, 3)
	assert.Equal(t, "sheddable", ev[0].Attr("priority").String())
	assert.Equal(t, true, ev[0].Attr("shed").Any())
	assert.Equal(t, "critical_plus", ev[2].Attr("priority").String())
	assert.Nil(t, ev[2].Attr("shed").Any(), "every slot taken: not shed")
	for i := range held {
		held[i].Release()
	}
	assert.Zero(t, l.InFlight())
}

// SPEC PR-2: waiters are let in highest priority first as room comes.
func TestPriority_PR2_WaitersByPriority(t *testing.T) {
	l, _, _ := newManual(t, opts(fixed(1), []adaptivelimit.Option{adaptivelimit.MaxWait(time.Hour)})...)
	c := contracttest.NewCalls()
	call := adaptivelimit.DecorateAsyncFunc(l, c.Next)
	for i, p := range []policy.Priority{policy.PriorityCritical, policy.PrioritySheddable, policy.PrioritySheddablePlus,
		policy.PriorityCriticalPlus} {
		call(at(p), i)
	}
	assert.Equal(t, 3, l.Queued())
	for i := range 4 {
		c.Finish(c.Started()[i])
	}
	assert.Equal(t, []int{0, 3, 2, 1}, c.Started())
	assert.Zero(t, l.InFlight())
}

// SPEC PR-3: priorityReserve outside [0, 1] is R4C-ATR-007.
func TestPriority_PR3_ReserveValidity(t *testing.T) {
	for _, r := range []float64{-1, 1.01} {
		_, err := adaptivelimit.New(adaptivelimit.PriorityReserve(r))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, r4c.OutOfRange, ce.Code)
		assert.Equal(t, "adaptiveLimit.priorityReserve", ce.Key)
	}
}

// SPEC PR-5: the admitted path allocates nothing with a priority in the context.
func TestPriority_PR5_Allocations(t *testing.T) {
	l, err := adaptivelimit.New(adaptivelimit.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	call := adaptivelimit.DecorateFunc(l, func(_ context.Context, n int) (int, error) { return n, nil })
	for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
		ctx := at(p)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted, %v", p)
		assert.Zero(t, testing.AllocsPerRun(1000, func() {
			pm, _ := l.Acquire(ctx)
			pm.Record(nil)
		}), "Acquire, %v", p)
	}
}
