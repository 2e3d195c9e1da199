package retrybudget_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/policy/retrybudget"
)

// SPEC RB-11: the bound holds over the budget's own window, a ring of buckets: over any
// span shorter than Window − Window/20 the extra attempts are at most max(⌈Ratio × calls⌉,
// ⌈MinPerSecond × Window⌉); a span of a whole Window may hold the allowance of two
// windows, since an extra attempt at the end of a bucket leaves the count less than
// Window after it.
func TestRB11_TheBoundHoldsOverSpansShorterThanTheWindowLessABucket(t *testing.T) {
	b, clk, _ := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(1)) // 10 per 10s
	clk.AdvanceTo(499 * time.Millisecond)                                        // the end of the first bucket
	assert.Equal(t, 10, allowed(b))
	clk.AdvanceTo(9999 * time.Millisecond) // 9.5s later: still counted
	assert.Zero(t, allowed(b))
	clk.AdvanceTo(10 * time.Second) // 9.501s after them: the first bucket has left
	assert.Equal(t, 10, allowed(b), "20 extra attempts within 9.501s, twice the floor")
}
