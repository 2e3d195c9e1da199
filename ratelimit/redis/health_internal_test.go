package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/clock"
)

// SPEC RL-18: each node's outage is its own: marking one down leaves the others up, one
// call per probe interval and node tries it again, and the first answer marks it up.
func TestRL18_NodesFailAndRecoverOneByOne(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var n nodes
	assert.False(t, n.some())
	assert.Nil(t, n.of("a"))

	assert.True(t, n.fail("a", clk, every), "first failure of a")
	assert.False(t, n.fail("a", clk, every), "a is already down")
	assert.True(t, n.some())
	assert.NotNil(t, n.of("a"))
	assert.Nil(t, n.of("b"), "b stays up")

	assert.True(t, n.of("a").blocked(every), "no probe due")
	clk.Advance(every)
	assert.False(t, n.of("a").blocked(every), "one call takes the probe")
	assert.True(t, n.of("a").blocked(every), "the next waits for the one after")

	assert.True(t, n.fail("b", clk, every))
	assert.True(t, n.up("a", every), "a answers again")
	assert.False(t, n.up("a", every), "once")
	assert.Nil(t, n.of("a"))
	assert.NotNil(t, n.of("b"), "b is still down")
	assert.True(t, n.up("b", every))
	assert.False(t, n.some(), "all up: the calls pay nothing for node health")
}

// SPEC RL-18: a failure while a node is down postpones its probe a whole interval.
func TestRL18_FailureWhileDownPostponesTheProbe(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var n nodes
	n.fail("a", clk, every)
	clk.Advance(every - time.Millisecond)
	n.fail("a", clk, every) // the probe failed again
	clk.Advance(time.Millisecond)
	assert.True(t, n.of("a").blocked(every), "the next probe is an interval after the last failure")
	clk.Advance(every)
	assert.False(t, n.of("a").blocked(every))
}

// SPEC RL-18: an outage whose probe no call has taken for more than an interval (its node
// owns no key in use any more, e.g. after a failover) is forgotten by the next recovery,
// so that a healthy backend's calls stop looking nodes up; a recent one is kept.
func TestRL18_UntriedOutagesAreForgotten(t *testing.T) {
	const every = time.Second
	clk := clock.NewManual()
	var n nodes
	n.fail("gone", clk, every)
	n.fail("a", clk, every)
	clk.Advance(2 * every) // gone's probe has been due for an interval, untaken
	n.fail("recent", clk, every)
	assert.True(t, n.up("a", every))
	assert.Nil(t, n.of("gone"), "forgotten")
	assert.NotNil(t, n.of("recent"), "kept")
	assert.True(t, n.up("recent", every))
	assert.False(t, n.some())
}
