package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
)

func TestDescriptor(t *testing.T) {
	assert.Equal(t, policy.LayerRetry, descriptor.Layer())
	assert.Equal(t, "retry", descriptor.Table().Segment)
	assert.Equal(t, []string{"maxAttempts", "delay", "multiplier", "maxDelay", "jitter", "enabled"}, descriptor.Attributes())
	assert.Equal(t, settings{Config: DefaultConfig()}, defaults())
	k, ok := kind.Lookup(policy.LayerRetry)
	require.True(t, ok, "registered")
	assert.Same(t, descriptor, k)
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	for attr, value := range map[string]string{
		"maxAttempts": "5", "delay": "250ms", "multiplier": "1.5", "maxDelay": "2s", "jitter": "0.25", "enabled": "FALSE",
	} {
		require.NoError(t, table.Set(&s, attr, value), attr)
	}
	assert.Equal(t, Config{MaxAttempts: 5, Delay: 250 * time.Millisecond, Multiplier: 1.5,
		MaxDelay: 2 * time.Second, Jitter: 0.25, Disabled: true}, s.Config)
	require.NoError(t, table.Set(&s, "enabled", " true "))
	assert.False(t, s.Disabled, "enabled=true clears Disabled")
	require.NoError(t, table.Set(&s, "enabled", "false"))

	bad := []struct{ attr, value, code string }{
		{"maxAttempts", "three", policy.CodeBadNumber},
		{"maxAttempts", "1.5", policy.CodeBadNumber},
		{"delay", "10 parsecs", policy.CodeBadDuration},
		{"multiplier", "double", policy.CodeBadNumber},
		{"maxDelay", "soon", policy.CodeBadDuration},
		{"jitter", "NaN", policy.CodeBadNumber},
		{"enabled", "yes", policy.CodeBadBoolean},
		{"maxAttempt", "3", policy.CodeUnknownKey},
	}
	for _, b := range bad {
		before := s
		err := table.Set(&s, b.attr, b.value)
		require.Error(t, err, b.attr)
		assert.Equal(t, b.code, policy.CodeOf(err), "%s = %q", b.attr, b.value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "retry."+b.attr, ce.Key)
		assert.Equal(t, before, s, "a bad value changes nothing")
		assert.Equal(t, b.code, policy.CodeOf(descriptor.Check(b.attr, b.value)), "Check agrees with Set")
	}

	// Ranges are checked by Validate, whichever way the value came.
	s = defaults()
	require.NoError(t, table.Set(&s, "maxAttempts", "0"))
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(err))
	s = defaults()
	require.NoError(t, table.Set(&s, "delay", "-1s"))
	assert.Equal(t, policy.CodeNegativeDuration, policy.CodeOf(s.Config.Validate()))
	s = defaults()
	require.NoError(t, table.Set(&s, "jitter", "2"))
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(s.Config.Validate()))
}
