package hedge

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func testBudget(percent, minPerSecond float64, window time.Duration) *budget {
	c := DefaultConfig()
	c.BudgetPercent, c.BudgetMinPerSecond, c.BudgetWindow = percent, minPerSecond, window
	return newBudget(c)
}

// SPEC HG-11: a hedge is allowed while hedges < max(percent% of calls, minPerSecond ×
// window seconds), the calls counting the current one.
func TestHG11_BudgetRule(t *testing.T) {
	b := testBudget(10, 1, 10*time.Second)
	for range 200 {
		b.arrive(0)
	}
	n := 0
	for b.tryHedge(0) {
		n++
	}
	assert.Equal(t, 20, n, "10% of 200")
	calls, hedges, avail := b.state(0)
	assert.Equal(t, []int{200, 20, 0}, []int{calls, hedges, avail})

	b = testBudget(10, 1, 10*time.Second)
	for range 5 {
		b.arrive(0)
	}
	n = 0
	for b.tryHedge(0) {
		n++
	}
	assert.Equal(t, 10, n, "the floor: 1/s × 10s")

	b = testBudget(10, 0.25, 10*time.Second) // floor 2.5: hedges 0, 1, 2 pass
	n = 0
	for b.tryHedge(0) {
		n++
	}
	assert.Equal(t, 3, n, "a fractional allowance lets the hedge that starts below it through")

	b = testBudget(0, 0, time.Second)
	b.arrive(0)
	assert.False(t, b.tryHedge(0), "no budget at all")
	_, _, avail = b.state(0)
	assert.Zero(t, avail)

	b = testBudget(15, 0, time.Second)
	for range 7 {
		b.arrive(0)
	}
	_, _, avail = b.state(0)
	assert.Equal(t, 2, avail, "ceil(1.05) hedges: 0 and 1 are below 1.05")
	assert.True(t, b.tryHedge(0))
	assert.True(t, b.tryHedge(0))
	assert.False(t, b.tryHedge(0))

	b = testBudget(10, 1e300, time.Hour)
	_, _, avail = b.state(0)
	assert.Equal(t, math.MaxInt, avail, "a huge allowance saturates")
}

// SPEC HG-12: a window that is not a multiple of 20ns has buckets rounded down to the
// nanosecond: 39ns makes 20 buckets of 1ns, and an event counts for 20ns at most.
func TestHG12_WindowRoundedDownToWholeBuckets(t *testing.T) {
	b := testBudget(100, 0, 39*time.Nanosecond)
	b.arrive(0)
	calls, _, _ := b.state(19)
	assert.Equal(t, 1, calls, "counts for more than 19 buckets' width")
	calls, _, _ = b.state(20)
	assert.Zero(t, calls, "and at most 20")
}

// SPEC HG-12: the window is 20 buckets of window/20; an event counts for more than
// window − window/20 and at most window after it happened.
func TestHG12_WindowExactToOneBucket(t *testing.T) {
	const w = 10 * time.Second
	const width = w / 20
	b := testBudget(100, 0, w)
	b.arrive(0)
	b.arrive(width - 1) // the same bucket as 0
	b.arrive(width)     // the next one
	assert.True(t, b.tryHedge(width+1))

	calls, hedges, _ := b.state(w - 1)
	assert.Equal(t, []int{3, 1}, []int{calls, hedges}, "everything still counts")
	calls, hedges, _ = b.state(w)
	assert.Equal(t, []int{1, 1}, []int{calls, hedges}, "bucket 0 left at 10s: the call at 499.999999ms counted for 9.5s+1ns")
	calls, hedges, avail := b.state(w + width - 1)
	assert.Equal(t, []int{1, 1, 0}, []int{calls, hedges, avail})
	calls, hedges, avail = b.state(w + width)
	assert.Equal(t, []int{0, 0, 0}, []int{calls, hedges, avail})

	// An event read from the clock before a later one took the lock counts in its bucket
	// when that bucket is still in the window, and not at all otherwise.
	b.arrive(3 * w)
	b.arrive(3*w - width)
	b.arrive(2 * w)
	calls, _, _ = b.state(3 * w)
	assert.Equal(t, 2, calls)

	// A jump of more than a window empties it at once.
	b.arrive(100 * w)
	calls, _, _ = b.state(100 * w)
	assert.Equal(t, 1, calls)

	// A window under 20ns has 1ns buckets.
	b = testBudget(100, 0, 5*time.Nanosecond)
	assert.Equal(t, time.Duration(1), b.w.Width())
	b.arrive(0)
	calls, _, _ = b.state(19)
	assert.Equal(t, 1, calls)
	calls, _, _ = b.state(20)
	assert.Zero(t, calls)
}

// The budget's counts stay exact under concurrent use (run with -race).
func TestHG11_BudgetConcurrent(t *testing.T) {
	b := testBudget(50, 0, time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				b.arrive(time.Second)
				if b.tryHedge(time.Second) {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	calls, hedges, _ := b.state(time.Second)
	assert.Equal(t, 8000, calls)
	assert.Equal(t, allowed, hedges)
	// Each hedge is asked after its own call arrived, so the hedges end at exactly 50% of
	// the calls, whatever the interleaving: never more, and the last ask sees every call.
	assert.Equal(t, 4000, hedges)
}
