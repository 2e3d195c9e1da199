package hedge

import (
	"math"
	"sync"
	"time"

	"github.com/resilience4go/resilience4go/policy/internal/decimal"
)

// buckets is the number of buckets of the budget window.
const buckets = 20

// budget counts the calls that arrived and the hedges started over the last window, in a
// fixed ring of time buckets on the hedge's clock: bucket index i holds the events of
// clock times [i·width, (i+1)·width), and lives in slot i mod buckets. The newest index
// is latest; the ring holds indexes latest-buckets+1 .. latest, so an event stays counted
// for more than (buckets-1)·width and at most buckets·width after it happened. Its memory
// is fixed; counting allocates nothing. It is safe for concurrent use.
//
// The allowance is compared exactly, in whole numbers: BudgetPercent and
// BudgetMinPerSecond stand for the decimals written (2.2% of 1,500 calls allows 33
// hedges, not the 34 that 33.000000000000007, its float64 product, would let through).
type budget struct {
	// Read-only after newBudget.
	ratio decimal.Decimal // BudgetPercent / 100
	floor int64           // the hedges the floor allows: ⌈BudgetMinPerSecond × BudgetWindow in seconds⌉
	width int64           // ns per bucket: BudgetWindow/buckets, at least 1

	mu            sync.Mutex
	latest        int64 // the index of the newest bucket
	calls, hedges [buckets]int64
	totalCalls    int64 // the sums of calls and hedges over the ring
	totalHedges   int64
}

// newBudget returns the budget of c, a valid config.
func newBudget(c config) *budget {
	percent, _ := decimal.Of(c.BudgetPercent)
	perSecond, _ := decimal.Of(c.BudgetMinPerSecond)
	return &budget{
		ratio: percent.Shift(-2),
		floor: clampInt64(perSecond.Shift(-9).CeilMul(uint64(max(c.BudgetWindow, 0)))),
		width: max(int64(c.BudgetWindow)/buckets, 1),
	}
}

// clampInt64 returns n, at most math.MaxInt64.
func clampInt64(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// index returns the bucket index of clock time now.
func (b *budget) index(now time.Duration) int64 { return max(int64(now), 0) / b.width }

// advance makes index i the newest, emptying the buckets it skips over. b.mu must be
// held.
func (b *budget) advance(i int64) {
	if i <= b.latest {
		return
	}
	if i-b.latest >= buckets {
		clear(b.calls[:])
		clear(b.hedges[:])
		b.totalCalls, b.totalHedges = 0, 0
	} else {
		for j := b.latest + 1; j <= i; j++ {
			s := j % buckets
			b.totalCalls -= b.calls[s]
			b.totalHedges -= b.hedges[s]
			b.calls[s], b.hedges[s] = 0, 0
		}
	}
	b.latest = i
}

// slot returns the slot of index i after moving the window to it, or -1 for an index
// already out of the window (an event read from the clock before a later one took the
// lock first, more than a window ago). b.mu must be held.
func (b *budget) slot(i int64) int {
	b.advance(i)
	if i <= b.latest-buckets {
		return -1
	}
	return int(i % buckets)
}

// arrive counts a call that arrived at now.
func (b *budget) arrive(now time.Duration) {
	i := b.index(now)
	b.mu.Lock()
	if s := b.slot(i); s >= 0 {
		b.calls[s]++
		b.totalCalls++
	}
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
	i := b.index(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.slot(i)
	if !b.allows(b.totalCalls, b.totalHedges) {
		return false
	}
	if s >= 0 {
		b.hedges[s]++
		b.totalHedges++
	}
	return true
}

// state returns the calls and hedges in the window at now, and how many more hedges it
// would allow with no further call.
func (b *budget) state(now time.Duration) (calls, hedges, available int) {
	i := b.index(now)
	b.mu.Lock()
	b.advance(i)
	c, h := b.totalCalls, b.totalHedges
	b.mu.Unlock()
	return int(c), int(h), int(min(max(b.allowance(c)-h, 0), math.MaxInt))
}
