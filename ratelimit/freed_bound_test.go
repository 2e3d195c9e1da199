package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// SPEC RL-9: a limiter keeps at most 16 separate freed slots, as the Redis backend does.
// 1 permit per second: reservations r0..r39 get 0s..39s. Canceling r1, r3, …, r31 frees 16
// separate slots, which the next 16 calls take, earliest first; r33, canceled too, would
// make a 17th separate one and gives nothing back, so the 17th call appends at the TAT
// (40s). A cancel that touches a kept slot still joins it, at the bound as below it, and
// a canceled tail still moves the TAT back.
func TestRL9_AtMost16SeparateFreedSlots(t *testing.T) {
	clk := clock.NewManual()
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Hour))
	rs := make([]ratelimit.Reservation, 40)
	for i := range rs {
		var err error
		rs[i], err = l.Reserve()
		require.NoError(t, err)
		require.Equal(t, time.Duration(i)*time.Second, rs[i].Delay())
	}
	for i := 1; i <= 33; i += 2 {
		rs[i].Cancel() // r33: a 17th separate slot, not kept
	}
	rs[2].Cancel()  // joins [1s, 2s) and [3s, 4s): 15 separate slots
	rs[4].Cancel()  // joins [1s, 4s) and [5s, 6s): 14
	rs[39].Cancel() // the tail: the TAT moves back to 39s

	var got []time.Duration
	for range 21 {
		r, err := l.Reserve()
		require.NoError(t, err)
		got = append(got, r.Delay()/time.Second)
	}
	assert.Equal(t, []time.Duration{1, 2, 3, 4, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 39, 40, 41}, got,
		"the kept slots, earliest first, then the TAT: r33's slot was not given back")
}
