package bulkhead

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
)

func TestDescriptor(t *testing.T) {
	assert.Equal(t, policy.LayerBulkhead, descriptor.Layer())
	assert.Equal(t, "bulkhead", descriptor.Table().Segment)
	assert.Equal(t, []string{"maxConcurrent", "maxWait", "enabled"}, descriptor.Attributes())
	assert.Equal(t, settings{Config: DefaultConfig()}, defaults())
	k, ok := kind.Lookup(policy.LayerBulkhead)
	require.True(t, ok, "registered")
	assert.Same(t, descriptor, k)
}

func TestSetAttributes(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	require.NoError(t, table.Set(&s, "maxConcurrent", " 10 "))
	require.NoError(t, table.Set(&s, "maxWait", "250ms"))
	require.NoError(t, table.Set(&s, "enabled", "false"))
	assert.Equal(t, Config{MaxConcurrent: 10, MaxWait: 250 * time.Millisecond, Disabled: true}, s.Config)

	for _, tc := range []struct{ attr, value, code string }{
		{"maxConcurrent", "ten", policy.CodeBadNumber},
		{"maxWait", "10 parsecs", policy.CodeBadDuration},
		{"enabled", "yes please", policy.CodeBadBoolean},
		{"permits", "1", policy.CodeUnknownKey},
	} {
		before := s
		err := table.Set(&s, tc.attr, tc.value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, tc.attr)
		assert.Equal(t, tc.code, ce.Code, tc.attr)
		assert.Equal(t, "bulkhead."+tc.attr, ce.Key, tc.attr)
		assert.Equal(t, before, s, "a bad value changes nothing")
		assert.Equal(t, tc.code, policy.CodeOf(descriptor.Check(tc.attr, tc.value)), "Check agrees with Set")
	}

	require.NoError(t, table.Set(&s, "maxConcurrent", "0"))
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(s.Config.Validate()))
	_, err := build(s)
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(err))
	require.NoError(t, table.Set(&s, "maxConcurrent", "1"))
	require.NoError(t, table.Set(&s, "maxWait", "-1s"))
	assert.Equal(t, policy.CodeNegativeDuration, policy.CodeOf(s.Config.Validate()))
	require.NoError(t, table.Set(&s, "enabled", "TRUE"))
	assert.False(t, s.Disabled)
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestOptionsAndKeysAgree(t *testing.T) {
	s := defaults()
	kind.Apply(&s, []Option{MaxConcurrent(3), MaxWait(time.Second), Enabled(false), nil})
	k := defaults()
	table := descriptor.Table()
	require.NoError(t, table.Set(&k, "maxConcurrent", "3"))
	require.NoError(t, table.Set(&k, "maxWait", "1s"))
	require.NoError(t, table.Set(&k, "enabled", "false"))
	assert.True(t, reflect.DeepEqual(s.Config, k.Config))

	b, err := New(MaxConcurrent(3), MaxWait(time.Second), Enabled(false))
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(k.Config, b.Config()), "New builds what the options set")
}
