package hedge

import (
	"math"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/policy/internal/decimal"
	"github.com/resilience4go/resilience4go/policy/internal/window"
)

// Counters of the budget's window.
const (
	callsCounter  = 0
	hedgesCounter = 1
)

// budget counts the calls that arrived and the hedges started over the last window, in a
// window.Window of window.Buckets buckets on the hedge's clock: an event stays counted
// for more than (buckets-1)·width and at most buckets·width after it happened. Its
// memory is fixed; counting allocates nothing. It is safe for concurrent use.
//
// The allowance is compared exactly, in whole numbers: BudgetPercent and
// BudgetMinPerSecond stand for the decimals written (2.2% of 1,500 calls allows 33
// hedges, not the 34 that 33.000000000000007, its float64 product, would let through).
type budget struct {
	// Read-only after newBudget.
	ratio decimal.Decimal // BudgetPercent / 100
	floor int64           // the hedges the floor allows: ⌈BudgetMinPerSecond × BudgetWindow in seconds⌉

	mu sync.Mutex
	w  *window.Window // calls and hedges
}

// newBudget returns the budget of c, a valid config.
func newBudget(c config) *budget {
	percent, _ := decimal.Of(c.BudgetPercent)
	perSecond, _ := decimal.Of(c.BudgetMinPerSecond)
	return &budget{
		ratio: percent.Shift(-2),
		floor: clampInt64(perSecond.Shift(-9).CeilMul(uint64(max(c.BudgetWindow, 0)))),
		w:     window.New(c.BudgetWindow, 2),
	}
}

// clampInt64 returns n, at most math.MaxInt64.
func clampInt64(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// arrive counts a call that arrived at now.
func (b *budget) arrive(now time.Duration) {
	b.mu.Lock()
	b.w.Add(now, callsCounter, 1)
	b.mu.Unlock()
}

// allows reports whether the window, with calls calls and hedges hedges in it, allows
// one more hedge: hedges < max(percent% of calls, the floor), exactly. b.mu must be held.
func (b *budget) allows(calls, hedges int64) bool {
	return hedges < b.floor || b.ratio.Less(uint64(hedges), uint64(calls))
}

// allowance returns how many hedges the window allows in all with calls calls in it:
// max(⌈percent% of calls⌉, the floor's).
func (b *budget) allowance(calls int64) int64 {
	return max(clampInt64(b.ratio.CeilMul(uint64(calls))), b.floor)
}

// tryHedge counts a hedge at now and reports true if the window allows one more, and
// reports false, counting nothing, otherwise.
func (b *budget) tryHedge(now time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.allows(b.w.Sum(now, callsCounter), b.w.Sum(now, hedgesCounter)) {
		return false
	}
	b.w.Add(now, hedgesCounter, 1)
	return true
}

// state returns the calls and hedges in the window at now, and how many more hedges it
// would allow with no further call.
func (b *budget) state(now time.Duration) (calls, hedges, available int) {
	b.mu.Lock()
	c, h := b.w.Sum(now, callsCounter), b.w.Sum(now, hedgesCounter)
	b.mu.Unlock()
	return int(c), int(h), int(min(max(b.allowance(c)-h, 0), math.MaxInt))
}
