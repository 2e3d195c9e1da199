package bulkhead_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

// at returns a background context carrying priority p.
func at(p policy.Priority) context.Context { return policy.WithPriority(context.Background(), p) }

// SPEC PR-1: with the default reserve (0.5), a bulkhead of 4 lets sheddable calls take 2
// slots, sheddable_plus 3, critical (and calls without a priority) and critical_plus all
// 4. A call refused while slots remain free for higher priorities is shed for its
// priority: counted in the snapshot, its event says so (SPEC PR-4).
func TestPriority_PR1_Shares(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(4))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	outcome := func(p policy.Priority, i int) error {
		t.Helper()
		f := call(at(p), i)
		if v, ok, err := f.Result(); ok {
			assert.Empty(t, v)
			return err
		}
		return nil // started: pending
	}
	require.NoError(t, outcome(policy.PrioritySheddable, 1))
	require.NoError(t, outcome(policy.PrioritySheddable, 2))
	requireFull(t, outcome(policy.PrioritySheddable, 3)) // 2 in flight: its share is 2
	require.NoError(t, outcome(policy.PrioritySheddablePlus, 4))
	requireFull(t, outcome(policy.PrioritySheddablePlus, 5)) // 3 in flight: its share is 3
	requireFull(t, outcome(policy.PrioritySheddable, 6))
	require.NoError(t, outcome(policy.PriorityCritical, 7))
	requireFull(t, outcome(policy.PriorityCriticalPlus, 8)) // every slot taken: not shed
	requireFull(t, outcome(policy.PrioritySheddable, 9))    // nor is this one
	assert.Equal(t, []int{1, 2, 4, 7}, c.Started())

	s := b.Snapshot()
	assert.Equal(t, [4]int64{2, 1, 0, 0}, s.Shed, "3, 6 and 5; 8 and 9 found every slot taken")
	ev := rec.Of(bulkhead.EventRejected)
	require.Len(t, ev, 5)
	for i, want := range []struct {
		priority string
		shed     bool
	}{{"sheddable", true}, {"sheddable_plus", true}, {"sheddable", true}, {"critical_plus", false}, {"sheddable", false}} {
		assert.Equal(t, want.priority, ev[i].Attr("priority").String(), "event %d", i)
		assert.Equal(t, want.shed, ev[i].Attr("shed").Any() == true, "event %d", i)
	}

	// A call without a priority is critical: it takes the last slot once one is free, and
	// its rejection event carries neither attribute.
	c.Finish(7)
	call(context.Background(), 10)
	assert.Equal(t, []int{1, 2, 4, 7, 10}, c.Started())
	_, err := result(t, call(context.Background(), 11))
	requireFull(t, err)
	last := rec.Of(bulkhead.EventRejected)[5]
	assert.Equal(t, policy.EventAttrs{}, last.Attrs)
	for _, i := range []int{1, 2, 4, 10} {
		c.Finish(i)
	}
	assert.Equal(t, 4, b.Snapshot().AvailableSlots)
}

// SPEC PR-1: a share is the limit less the reserve, rounded down, but at least 1; a
// reserve of 0 lets every priority use every slot.
func TestPriority_PR1_Rounding(t *testing.T) {
	for _, tc := range []struct {
		slots   int
		reserve float64
		want    [4]int // calls of each priority let in, one priority at a time
	}{
		{1, 0.5, [4]int{1, 1, 1, 1}},
		{3, 0.5, [4]int{1, 2, 3, 3}},
		{25, 0.5, [4]int{12, 18, 25, 25}},
		{10, 0, [4]int{10, 10, 10, 10}},
		{10, 1, [4]int{1, 5, 10, 10}},
		{10, 0.2, [4]int{8, 9, 10, 10}},
	} {
		for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
			b, _, _ := newManual(t, bulkhead.MaxConcurrent(tc.slots), bulkhead.PriorityReserve(tc.reserve))
			n := 0
			for b.Acquire(at(p)) == nil {
				n++
			}
			assert.Equal(t, tc.want[p], n, "%d slots, reserve %v, %v", tc.slots, tc.reserve, p)
		}
	}
}

// SPEC PR-2: waiters are let in highest priority first, FIFO within a priority, whatever
// their order of arrival; a waiter is never let in past its share.
func TestPriority_PR2_QueueOrder(t *testing.T) {
	b, _, rec := newManual(t, bulkhead.MaxConcurrent(2), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	call(at(policy.PriorityCritical), 1)
	call(at(policy.PriorityCritical), 2)
	arrivals := []policy.Priority{policy.PrioritySheddable, policy.PriorityCritical, policy.PrioritySheddable,
		policy.PriorityCriticalPlus, policy.PrioritySheddablePlus, policy.PriorityCritical}
	for i, p := range arrivals {
		call(at(p), 3+i)
	}
	require.Equal(t, []int{1, 2}, c.Started())
	assert.Equal(t, 6, b.Snapshot().Waiting)

	c.Finish(1)
	c.Finish(2)
	assert.Equal(t, []int{1, 2, 6, 4}, c.Started(), "critical_plus, then the oldest critical")
	c.Finish(6)
	assert.Equal(t, []int{1, 2, 6, 4, 8}, c.Started())
	c.Finish(4)
	c.Finish(8)
	// sheddable_plus may take 1 slot of 2 (2·0.75 rounded down), sheddable 1 (2·0.5).
	assert.Equal(t, []int{1, 2, 6, 4, 8, 7}, c.Started(), "sheddable_plus; no sheddable past its share")
	c.Finish(7)
	assert.Equal(t, []int{1, 2, 6, 4, 8, 7, 3}, c.Started())
	c.Finish(3)
	assert.Equal(t, []int{1, 2, 6, 4, 8, 7, 3, 5}, c.Started())
	c.Finish(5)
	assert.Zero(t, rec.Count(bulkhead.EventRejected))
	assert.Equal(t, 2, b.Snapshot().AvailableSlots)
}

// SPEC PR-2: a call queues behind the waiters of its priority and above only: a critical
// call takes a free slot past sheddable waiters, which wait for their share.
func TestPriority_PR2_NoBargingWithinAPriority(t *testing.T) {
	b, clk, rec := newManual(t, bulkhead.MaxConcurrent(4), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	call(at(policy.PrioritySheddable), 1)
	call(at(policy.PrioritySheddable), 2)
	waiting := call(at(policy.PrioritySheddable), 3)
	assert.Equal(t, 1, b.Snapshot().Waiting)
	call(context.Background(), 4)
	assert.Equal(t, []int{1, 2, 4}, c.Started(), "the critical call did not queue")
	assert.True(t, b.TryAcquire(), "nor does a critical TryAcquire")
	b.Release()

	clk.Advance(time.Second)
	_, err := result(t, waiting)
	requireFull(t, err)
	ev := rec.Of(bulkhead.EventRejected)
	require.Len(t, ev, 1)
	assert.Equal(t, time.Second, ev[0].Wait)
	assert.Equal(t, true, ev[0].Attr("shed").Any(), "expired while slots were free for critical calls")
	assert.Equal(t, [4]int64{1, 0, 0, 0}, b.Snapshot().Shed)
	for _, i := range []int{1, 2, 4} {
		c.Finish(i)
	}
}

// SPEC PR-2: synchronous waiters go by priority too.
func TestPriority_PR2_SyncWaiters(t *testing.T) {
	b, _, _ := newManual(t, bulkhead.MaxConcurrent(1), bulkhead.MaxWait(time.Hour))
	require.True(t, b.TryAcquire())
	var mu sync.Mutex
	var order []policy.Priority
	var wg sync.WaitGroup
	for i, p := range []policy.Priority{policy.PrioritySheddable, policy.PriorityCritical, policy.PrioritySheddablePlus} {
		wg.Go(func() {
			assert.NoError(t, b.Acquire(at(p)))
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
			b.Release()
		})
		contracttest.Eventually(t, func() bool { return b.Snapshot().Waiting == i+1 }, "waiter queued")
	}
	b.Release()
	wg.Wait()
	assert.Equal(t, []policy.Priority{policy.PriorityCritical, policy.PrioritySheddablePlus, policy.PrioritySheddable}, order)
}

// SPEC PR-3: priorityReserve is checked as the other settings (R4C-ATR-007 outside
// [0, 1]) and changes live: lowered, the slots it frees go to the waiters at once.
func TestPriority_PR3_ReserveConfigAndReload(t *testing.T) {
	for _, r := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := bulkhead.New(bulkhead.PriorityReserve(r))
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, "%v", r)
		assert.Equal(t, r4c.OutOfRange, ce.Code)
		assert.Equal(t, "bulkhead.priorityReserve", ce.Key)
	}

	b, _, rec := newManual(t, bulkhead.MaxConcurrent(4), bulkhead.MaxWait(time.Second))
	c := contracttest.NewCalls()
	call := bulkhead.DecorateAsyncFunc(b, c.Next)
	var futs []*async.Future[string]
	for i := 1; i <= 4; i++ {
		futs = append(futs, call(at(policy.PrioritySheddable), i))
	}
	require.Equal(t, []int{1, 2}, c.Started())
	cfg := b.Config()
	cfg.PriorityReserve = 0.25
	require.NoError(t, b.Reconfigure(cfg))
	assert.Equal(t, []int{1, 2, 3}, c.Started(), "a share of 3 now")
	assert.Equal(t, []string{"priorityReserve"}, rec.Of(policy.ConfigChanged)[0].Changed)
	cfg.PriorityReserve = 0
	require.NoError(t, b.Reconfigure(cfg))
	assert.Equal(t, []int{1, 2, 3, 4}, c.Started())
	for i := 1; i <= 4; i++ {
		c.Finish(i)
	}
	for _, f := range futs {
		_, err := result(t, f)
		require.NoError(t, err)
	}
}

// SPEC PR-5: the priority check costs the admitted path no allocation, with a priority
// in the context or without; nor does a call shed at once.
func TestPriority_PR5_Allocations(t *testing.T) {
	b, err := bulkhead.New(bulkhead.MaxConcurrent(2), bulkhead.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	call := bulkhead.DecorateFunc(b, func(ctx context.Context, n int) (int, error) { return n, nil })
	for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
		ctx := at(p)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = call(ctx, 1) }), "admitted, %v", p)
	}
	require.True(t, b.TryAcquire())
	shed := at(policy.PrioritySheddable)
	var rejected error
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, rejected = call(shed, 1) }), "shed")
	requireFullAny(t, rejected)
	b.Release()
}
