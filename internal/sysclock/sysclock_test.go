package sysclock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/sysclock"
)

func TestIs(t *testing.T) {
	assert.True(t, sysclock.Is(clock.System()))
	assert.False(t, sysclock.Is(clock.NewManual()))
	assert.False(t, sysclock.Is(nil))
	assert.False(t, sysclock.Is(uncomparable{}), "a clock of a type that cannot be compared")
}

// uncomparable is a clock whose type cannot be compared (it holds a slice).
type uncomparable struct {
	clock.Clock
	_ []int
}

func TestNow_MatchesSystemNow(t *testing.T) {
	c := clock.System()
	a := c.Now()
	m := sysclock.Now()
	b := c.Now()
	assert.GreaterOrEqual(t, m, a)
	assert.LessOrEqual(t, m, b)
}
