package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "retry", []string{"maxAttempts", "delay", "multiplier", "maxDelay", "jitter", "waitForPermit", "enabled"},
		settings{Config: DefaultConfig()})
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	for attr, value := range map[string]string{
		"maxAttempts": "5", "delay": "250ms", "multiplier": "1.5", "maxDelay": "2s", "jitter": "0.25", "waitForPermit": "True",
		"enabled": "FALSE",
	} {
		require.NoError(t, table.Set(&s, attr, value), attr)
	}
	assert.Equal(t, Config{MaxAttempts: 5, Delay: 250 * time.Millisecond, Multiplier: 1.5,
		MaxDelay: 2 * time.Second, Jitter: 0.25, WaitForPermit: true, Disabled: true}, s.Config)
	require.NoError(t, table.Set(&s, "enabled", " true "))
	assert.False(t, s.Disabled, "enabled=true clears Disabled")
	require.NoError(t, table.Set(&s, "enabled", "false"))

	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "maxAttempts", Value: "three", Code: r4c.BadNumber},
		{Attr: "maxAttempts", Value: "1.5", Code: r4c.BadNumber},
		{Attr: "delay", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "multiplier", Value: "double", Code: r4c.BadNumber},
		{Attr: "maxDelay", Value: "soon", Code: r4c.BadDuration},
		{Attr: "jitter", Value: "NaN", Code: r4c.BadNumber},
		{Attr: "enabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "waitForPermit", Value: "1", Code: r4c.BadBoolean},
		{Attr: "maxAttempt", Value: "3", Code: r4c.UnknownKey},
	})

	// Ranges are checked by Validate, whichever way the value came.
	s = defaults()
	require.NoError(t, table.Set(&s, "maxAttempts", "0"))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	s = defaults()
	require.NoError(t, table.Set(&s, "delay", "-1s"))
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(s.Config.Validate()))
	s = defaults()
	require.NoError(t, table.Set(&s, "jitter", "2"))
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(s.Config.Validate()))
}
