package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// hookClock is a manual clock that runs onNow, once, at the next Now after it is set:
// to put a Reconfigure between a call's reading of the configuration and its decision.
type hookClock struct {
	*clock.Manual
	onNow func()
}

func (c *hookClock) Now() time.Duration {
	if f := c.onNow; f != nil {
		c.onNow = nil
		f()
	}
	return c.Manual.Now()
}

// SPEC RL-29: a call that read the configuration just before a Reconfigure changing the
// windows, and decides just after it, is decided by the old rate on the moved windows; it
// never charges one window's permits to another: a new 500/1s window, started with its
// full burst, still admits its burst (less the stale call's permit at most), and is not
// blocked for the day of the removed 1/24h window.
func TestRL29_StaleCallAcrossWindowsChangeChargesNoOtherWindow(t *testing.T) {
	clk := &hookClock{Manual: clock.NewManual()}
	l := newLimiter(t, clk, ratelimit.Permits(1000), ratelimit.Period(time.Second), ratelimit.Windows("1/24h"))
	clk.Advance(time.Hour)
	cfg := l.Config()
	cfg.Windows = "500/1s"
	clk.onNow = func() { require.NoError(t, l.Reconfigure(cfg)) }
	l.TryAcquire() // read the old rate; decided after the change
	require.Nil(t, clk.onNow)
	assert.GreaterOrEqual(t, admitted(l, 1000), 499, "the new window's burst")
}

// SPEC RL-29: the same across a change that keeps a window at another place in the list
// ("1/24h" to "2/24h, 1/24h"): the kept 1/24h window keeps its state, and a stale call
// decided by the old rate is refused by it, not admitted past it.
func TestRL29_StaleCallAcrossWindowsChangeKeepsTheKeptWindow(t *testing.T) {
	clk := &hookClock{Manual: clock.NewManual()}
	l := newLimiter(t, clk, ratelimit.Permits(1000), ratelimit.Period(time.Second), ratelimit.Windows("1/24h"))
	clk.Advance(time.Hour)
	require.True(t, l.TryAcquire(), "the day's one permit")
	cfg := l.Config()
	cfg.Windows = "2/24h, 1/24h"
	clk.onNow = func() { require.NoError(t, l.Reconfigure(cfg)) }
	assert.False(t, l.TryAcquire(), "the stale call: the day's permit is taken")
	require.Nil(t, clk.onNow)
	assert.False(t, l.TryAcquire(), "the day's permit is taken")
	clk.Advance(24*time.Hour - time.Nanosecond)
	assert.False(t, l.TryAcquire())
	clk.Advance(time.Nanosecond)
	assert.True(t, l.TryAcquire())
}
