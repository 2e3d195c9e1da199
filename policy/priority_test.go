package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
)

func TestPriorityFromDefaultsToCritical(t *testing.T) {
	assert.Equal(t, policy.PriorityCritical, policy.PriorityFrom(context.Background()))
	assert.Equal(t, policy.PriorityCritical, policy.PriorityFrom(nilContext()))
	ctx := policy.WithPriority(context.Background(), policy.PrioritySheddable)
	assert.Equal(t, policy.PrioritySheddable, policy.PriorityFrom(ctx))
	assert.Equal(t, policy.PriorityCriticalPlus, policy.PriorityFrom(policy.WithPriority(ctx, 9)), "clamped to the highest level")
	assert.Equal(t, policy.PrioritySheddable, policy.PriorityFrom(policy.WithPriority(ctx, -4)), "clamped to the lowest level")
}

func TestPriorityFromAllocatesNothing(t *testing.T) {
	ctx := policy.WithPriority(context.Background(), policy.PrioritySheddablePlus)
	var p policy.Priority
	assert.Zero(t, testing.AllocsPerRun(100, func() { p = policy.PriorityFrom(ctx) }))
	assert.Equal(t, policy.PrioritySheddablePlus, p)
}

func TestParsePriority(t *testing.T) {
	for in, want := range map[string]policy.Priority{
		"sheddable": policy.PrioritySheddable, "SHEDDABLE_PLUS": policy.PrioritySheddablePlus,
		" critical ": policy.PriorityCritical, "critical-plus": policy.PriorityCriticalPlus,
		"0": policy.PrioritySheddable, "3": policy.PriorityCriticalPlus,
	} {
		got, err := policy.ParsePriority(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, strings.ReplaceAll(strings.ToLower(strings.TrimSpace(in)), "-", "_"), func() string {
			if in[0] >= '0' && in[0] <= '9' {
				return in
			}
			return got.String()
		}(), in)
	}
	for _, in := range []string{"", "urgent", "4", "-1", "1.5", "+1", "01", "03", "CR\u0130T\u0130CAL", "\u017Fheddable", strings.Repeat("x", 1000)} {
		got, err := policy.ParsePriority(in)
		assert.Equal(t, policy.PriorityCritical, got, in)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, in)
		assert.Equal(t, "R4C-ATR-007", ce.Code)
		assert.Equal(t, in, ce.Value)
	}
	assert.Equal(t, "7", policy.Priority(7).String())
}

func FuzzParsePriority(f *testing.F) {
	for _, s := range []string{"critical", "sheddable_plus", "2", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := policy.ParsePriority(s)
		if err != nil {
			assert.Equal(t, policy.PriorityCritical, p)
			return
		}
		assert.True(t, p >= policy.PrioritySheddable && p <= policy.PriorityCriticalPlus)
		again, err := policy.ParsePriority(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, again, "a level's name parses back to it")
	})
}

// nilContext returns a nil context.Context: a caller's error a policy survives.
func nilContext() context.Context { return nil }
