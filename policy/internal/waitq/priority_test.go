package waitq_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/internal/waitq"
)

// Room goes to the highest level first, oldest first within a level; Ahead tells
// whether a waiter of a level or above is queued; a removed waiter leaves its level.
func TestLevels(t *testing.T) {
	p := newPool(0)
	levels := []policy.Priority{policy.PrioritySheddable, policy.PriorityCritical, policy.PrioritySheddablePlus,
		policy.PriorityCritical, policy.PriorityCriticalPlus, policy.PrioritySheddable}
	ws := make([]*waiter, len(levels))
	for i, l := range levels {
		ws[i] = newWaiter(p, i)
		ws[i].Level = l
		require.Equal(t, waitq.Queued, p.enqueue(ws[i]))
	}
	assert.True(t, p.q.Ahead(policy.PriorityCriticalPlus))
	require.True(t, p.q.Remove(&ws[4].Waiter))
	assert.False(t, p.q.Ahead(policy.PriorityCriticalPlus), "the only critical_plus waiter left")
	assert.True(t, p.q.Ahead(policy.PriorityCritical))

	for range 5 {
		p.release()
	}
	assert.Equal(t, []int{1, 3, 2, 0, 5}, p.grantedIDs())
	assert.False(t, p.q.Ahead(policy.PrioritySheddable), "nobody waits")
	assert.Zero(t, p.queued.Load())
}

// A level's share is the policy's: when the first waiter finds no room for its level,
// Dispatch stops, and a waiter of a higher level takes room past lower ones on arrival.
func TestLevelShares(t *testing.T) {
	var free int64 = 1
	var p pool
	p.q.Init(&p.queued, func(l policy.Priority) (int64, bool) {
		if l < policy.PriorityCritical || free == 0 { // sheddable levels get no room here
			return 0, false
		}
		free--
		return 1, true
	})
	low := newWaiter(&p, 0)
	require.Equal(t, waitq.Queued, p.q.Enqueue(&low.Waiter, low))
	p.q.Dispatch()
	assert.Empty(t, p.grantedIDs())
	high := newWaiter(&p, 1)
	high.Level = policy.PriorityCritical
	assert.Equal(t, waitq.Admitted, p.q.Enqueue(&high.Waiter, high), "nobody of its level or above waits")
	require.True(t, p.q.Remove(&low.Waiter))
}
