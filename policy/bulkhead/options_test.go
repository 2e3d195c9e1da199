package bulkhead_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
)

func TestDefaults(t *testing.T) {
	assert.Equal(t, bulkhead.Config{MaxConcurrent: 25, MaxWait: 0, Enabled: true}, bulkhead.DefaultConfig())
	assert.NoError(t, bulkhead.DefaultConfig().Validate())
	assert.Equal(t, "bulkhead", bulkhead.Segment)
	assert.Equal(t, []string{"maxConcurrent", "maxWait", "enabled"}, bulkhead.Attributes())

	b, err := bulkhead.New()
	require.NoError(t, err)
	assert.Equal(t, "bulkhead", b.InstanceID())
	assert.True(t, clock.IsSystem(b.Clock()))
	assert.Equal(t, bulkhead.Snapshot{Instance: "bulkhead", AvailableSlots: 25, MaxConcurrent: 25}, b.Snapshot())
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  bulkhead.Option
		key  string
		code string
	}{
		{"zero slots", bulkhead.MaxConcurrent(0), "bulkhead.maxConcurrent", policy.CodeOutOfRange},
		{"negative slots", bulkhead.MaxConcurrent(-3), "bulkhead.maxConcurrent", policy.CodeOutOfRange},
		{"negative wait", bulkhead.MaxWait(-time.Millisecond), "bulkhead.maxWait", policy.CodeNegativeDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bulkhead.New(tc.opt)
			require.Nil(t, b)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.MaxWait(0))
	require.NoError(t, err)
	assert.Equal(t, 1, b.Config().MaxConcurrent)
}

func TestSetAttributes(t *testing.T) {
	c := bulkhead.DefaultConfig()
	require.NoError(t, c.Set("maxConcurrent", " 10 "))
	require.NoError(t, c.Set("maxWait", "250ms"))
	require.NoError(t, c.Set("enabled", "false"))
	assert.Equal(t, bulkhead.Config{MaxConcurrent: 10, MaxWait: 250 * time.Millisecond}, c)

	for _, tc := range []struct{ attr, value, code string }{
		{"maxConcurrent", "ten", policy.CodeBadNumber},
		{"maxWait", "10 parsecs", policy.CodeBadDuration},
		{"enabled", "yes please", policy.CodeBadBoolean},
		{"permits", "1", policy.CodeUnknownKey},
	} {
		err := c.Set(tc.attr, tc.value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, tc.attr)
		assert.Equal(t, tc.code, ce.Code, tc.attr)
		assert.Equal(t, "bulkhead."+tc.attr, ce.Key, tc.attr)
	}

	require.NoError(t, c.Set("maxConcurrent", "0"))
	assert.Equal(t, policy.CodeOutOfRange, policy.CodeOf(c.Validate()))
	require.NoError(t, c.Set("maxConcurrent", "1"))
	require.NoError(t, c.Set("maxWait", "-1s"))
	assert.Equal(t, policy.CodeNegativeDuration, policy.CodeOf(c.Validate()))
}

// Options in code and configuration keys land on the same Config (SPEC RG-4).
func TestOptionsAndKeysAgree(t *testing.T) {
	s := bulkhead.DefaultSettings()
	s.Apply(bulkhead.MaxConcurrent(3), bulkhead.MaxWait(time.Second), bulkhead.Enabled(false), nil)
	c := bulkhead.DefaultConfig()
	require.NoError(t, c.Set("maxConcurrent", "3"))
	require.NoError(t, c.Set("maxWait", "1s"))
	require.NoError(t, c.Set("enabled", "false"))
	assert.True(t, reflect.DeepEqual(s.Config, c))
}

func TestIDsAndCommonOptions(t *testing.T) {
	clk := clock.NewManual()
	b, err := bulkhead.New(bulkhead.Name("pool"))
	require.NoError(t, err)
	assert.Equal(t, "pool", b.InstanceID())

	b, err = bulkhead.New(bulkhead.Name("pool"), bulkhead.WithInstanceID("Svc.Call"), bulkhead.UseConfig("small"),
		bulkhead.WithClock(clk), bulkhead.OnEvent(func(policy.Event) {}))
	require.NoError(t, err)
	assert.Equal(t, "Svc.Call", b.InstanceID())
	assert.Equal(t, clock.Clock(clk), b.Clock())

	var fe *bulkhead.FullError
	require.True(t, errors.As(b.Rejection(), &fe))
	assert.Equal(t, "Svc.Call", fe.InstanceID())
	assert.ErrorIs(t, fe, bulkhead.ErrFull)
	assert.Equal(t, `bulkhead: bulkhead "Svc.Call" is full`, fe.Error())
	assert.NoError(t, fe.Unwrap())
}
