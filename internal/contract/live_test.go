package contract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// Live changes an instance of its type through the functions it is given, to a
// configuration given as itself or in a Shared; Check changes nothing. Another instance
// type, or a configuration of another type, has no live change.
func TestLive(t *testing.T) {
	live := contract.Live((*checked).CheckReconfigure, (*checked).Reconfigure)
	c := &checked{}
	for _, cfg := range []any{liveConfig{N: 3}, contract.Shared[liveConfig]{Config: liveConfig{N: 3}}} {
		ch, ok := live(c, cfg)
		require.True(t, ok)
		require.NoError(t, ch.Check())
		require.NoError(t, ch.Apply())
		assert.Equal(t, 3, c.cfg.N)
	}
	ch, ok := live(c, liveConfig{N: 11})
	require.True(t, ok)
	assert.EqualError(t, ch.Check(), "too big")
	assert.Equal(t, 3, c.cfg.N, "Check changes nothing")
	assert.EqualError(t, ch.Apply(), "too big")

	_, ok = live(c, 7)
	assert.False(t, ok, "not a configuration of the type")
	_, ok = live(&unchecked{}, liveConfig{N: 1})
	assert.False(t, ok, "not an instance of the type")
}
