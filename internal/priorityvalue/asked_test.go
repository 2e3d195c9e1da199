package priorityvalue_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/priorityvalue"
	"github.com/resilience4go/resilience4go/policy"
)

// Asked reads the first value only, and lowers it to the highest the server grants.
func TestAsked(t *testing.T) {
	p, ok := priorityvalue.Asked([]string{"critical_plus", "sheddable"}, policy.PriorityCritical)
	assert.True(t, ok)
	assert.Equal(t, policy.PriorityCritical, p)

	p, ok = priorityvalue.Asked([]string{"sheddable_plus"}, policy.PriorityCritical)
	assert.True(t, ok)
	assert.Equal(t, policy.PrioritySheddablePlus, p)

	for _, vs := range [][]string{nil, {}, {"urgent", "critical"}, {""}} {
		_, ok = priorityvalue.Asked(vs, policy.PriorityCriticalPlus)
		assert.False(t, ok, "%q", vs)
	}
}

// CheckHighest accepts the levels and refuses anything else with R4C-ATR-007 under the
// key it is given.
func TestCheckHighest(t *testing.T) {
	for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
		assert.NoError(t, priorityvalue.CheckHighest("x.y", p))
	}
	err := priorityvalue.CheckHighest("x.y", 4)
	var ce *policy.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "R4C-ATR-007", ce.Code)
	assert.Equal(t, "x.y", ce.Key)
}
