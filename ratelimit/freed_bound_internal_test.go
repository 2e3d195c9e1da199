package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"
)

// SPEC RL-9: the cost of a call that meets freed slots does not grow with the number of
// reservations canceled. Every scan of the freed slots (a call taking a permit, Available,
// the retry-after, a cancel joining its slot) walks the set's spans, so the slots a call
// examines are at most the spans kept. With 100 or 100,000 canceled one-permit
// reservations, each with a standing one behind it, the set keeps maxFreed, and a refused
// TryAcquireN(2), which no freed slot fits, examines those. (Fault: every canceled slot
// was kept, and such a call scanned all 100,000 under the set's lock.)
func TestRL9_FreedSlotsExaminedDoNotGrowWithCancels(t *testing.T) {
	for _, cancels := range []int{100, 100_000} {
		clk := clock.NewManual()
		l, err := New(Permits(2), Period(2*time.Second), MaxWait(time.Duration(rlcore.MaxInt64)), WithClock(clk))
		require.NoError(t, err)
		rs := make([]Reservation, 2*cancels+2)
		for i := range rs {
			rs[i], err = l.Reserve()
			require.NoError(t, err)
		}
		for i := 2; i < 2*cancels+2; i += 2 {
			rs[i].Cancel()
		}
		spans, counted := l.slots.Freed()
		assert.Equal(t, rlcore.MaxFreed, spans, "%d cancels: the spans kept, which bound every scan", cancels)
		assert.Equal(t, rlcore.MaxFreed, counted)
		require.ErrorIs(t, l.TryAcquireN(2), ErrExceeded, "no freed slot holds 2 permits")
		spans, _ = l.slots.Freed()
		assert.Equal(t, rlcore.MaxFreed, spans)
	}
}
