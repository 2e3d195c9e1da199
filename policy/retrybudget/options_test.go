package retrybudget_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/retrybudget"
)

// SPEC RB-9: the defaults are Finagle's: 20% of the calls, at least 10 extra attempts per
// second, over 10s, enabled.
func TestRB9_Defaults(t *testing.T) {
	b, err := retrybudget.New()
	require.NoError(t, err)
	assert.Equal(t, retrybudget.Config{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second}, b.Config())
	assert.Equal(t, retrybudget.DefaultConfig(), b.Config())
	s := b.Snapshot()
	assert.Equal(t, retrybudget.Snapshot{Available: 100}, s, "the floor: 10/s over 10s")

	b, err = retrybudget.New(retrybudget.Ratio(0.5), retrybudget.MinPerSecond(0), retrybudget.Window(time.Minute),
		retrybudget.Enabled(false), retrybudget.Name("deps"))
	require.NoError(t, err)
	assert.Equal(t, retrybudget.Config{Ratio: 0.5, Window: time.Minute, Disabled: true}, b.Config())
	assert.Equal(t, "deps", b.Snapshot().Instance)
}

// SPEC RB-9: a value out of range is R4C-ATR-007 (R4C-ATR-004 for a negative window),
// naming the key; nothing is built.
func TestRB9_BadValues(t *testing.T) {
	for _, tc := range []struct {
		opt  retrybudget.Option
		key  string
		code string
	}{
		{retrybudget.Ratio(-0.01), "retryBudget.ratio", "R4C-ATR-007"},
		{retrybudget.Ratio(1.01), "retryBudget.ratio", "R4C-ATR-007"},
		{retrybudget.Ratio(math.NaN()), "retryBudget.ratio", "R4C-ATR-007"},
		{retrybudget.MinPerSecond(-1), "retryBudget.minPerSecond", "R4C-ATR-007"},
		{retrybudget.MinPerSecond(math.NaN()), "retryBudget.minPerSecond", "R4C-ATR-007"},
		{retrybudget.MinPerSecond(math.Inf(1)), "retryBudget.minPerSecond", "R4C-ATR-007"},
		{retrybudget.Window(0), "retryBudget.window", "R4C-ATR-007"},
		{retrybudget.Window(-time.Second), "retryBudget.window", "R4C-ATR-004"},
	} {
		b, err := retrybudget.New(tc.opt)
		assert.Nil(t, b)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, tc.key)
		assert.Equal(t, tc.code, ce.Code, tc.key)
		assert.Equal(t, tc.key, ce.Key)
	}
	_, err := retrybudget.New(retrybudget.Ratio(0), retrybudget.Ratio(1), retrybudget.MinPerSecond(0))
	assert.NoError(t, err, "the bounds are in range")
}
