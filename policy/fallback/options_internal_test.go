package fallback

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

func TestDescriptor(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "fallback", []string{"enabled"},
		settings{config: DefaultConfig()})
}

func TestBuildNilFunction(t *testing.T) {
	_, err := build[string](nil, defaults())
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err))
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "enabled", "false"))
	assert.True(t, s.Disabled)
	require.NoError(t, table.Set(&s, "enabled", " True "))
	assert.False(t, s.Disabled)

	err := table.Set(&s, "enabled", "maybe")
	assert.Equal(t, r4c.BadBoolean, r4c.CodeOf(err))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "fallback.enabled", ce.Key)
	assert.False(t, s.Disabled, "a bad value changes nothing")
	assert.Equal(t, r4c.BadBoolean, r4c.CodeOf(descriptor.Check("enabled", "maybe")))

	err = table.Set(&s, "handleOn", "x")
	assert.Equal(t, r4c.UnknownKey, r4c.CodeOf(err))
	_, err = build(func(context.Context, error) (int, error) { return 0, nil }, s)
	assert.NoError(t, err, "every configuration is valid")
}
