package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

type testConfig struct {
	Period  time.Duration
	Permits int
	Rate    float64
	Enabled bool
}

var testAttrs = policy.Attributes[testConfig]{
	Segment: "rateLimiter",
	List: []policy.Attribute[testConfig]{
		policy.DurationAttr("period", func(c *testConfig) *time.Duration { return &c.Period }),
		policy.IntAttr("permits", func(c *testConfig) *int { return &c.Permits }),
		policy.FloatAttr("rate", func(c *testConfig) *float64 { return &c.Rate }),
		policy.BoolAttr("enabled", func(c *testConfig) *bool { return &c.Enabled }),
	},
}

func TestAttributes_Names(t *testing.T) {
	assert.Equal(t, []string{"period", "permits", "rate", "enabled"}, testAttrs.Names())
	assert.Empty(t, policy.Attributes[testConfig]{Segment: "x"}.Names())
}

// SPEC RG-4: attributes set from strings, one helper kind per field type.
func TestAttributes_SetGoodValues(t *testing.T) {
	var c testConfig
	for _, kv := range [][2]string{
		{"period", " 1.5s "},
		{"permits", " 10 "},
		{"rate", "0.25"},
		{"enabled", " TRUE "},
	} {
		require.NoError(t, testAttrs.Set(&c, kv[0], kv[1]), "%s = %q", kv[0], kv[1])
	}
	assert.Equal(t, testConfig{Period: 1500 * time.Millisecond, Permits: 10, Rate: 0.25, Enabled: true}, c)

	require.NoError(t, testAttrs.Set(&c, "enabled", "False"))
	require.NoError(t, testAttrs.Set(&c, "permits", "-3")) // ranges are validated later
	require.NoError(t, testAttrs.Set(&c, "period", "0"))
	require.NoError(t, testAttrs.Set(&c, "rate", "1e3"))
	assert.Equal(t, testConfig{Period: 0, Permits: -3, Rate: 1000, Enabled: false}, c)
}

// SPEC error codes: a bad value is rejected with its kind's code, Key "<segment>.<attr>",
// and the field is left as it was.
func TestAttributes_SetBadValues(t *testing.T) {
	for _, tc := range []struct {
		attr, value, code string
	}{
		{"period", "10 parsecs", "R4C-ATR-001"},
		{"period", "1", "R4C-ATR-001"},
		{"period", "", "R4C-ATR-001"},
		{"permits", "ten", "R4C-ATR-005"},
		{"permits", "1.5", "R4C-ATR-005"},
		{"permits", "", "R4C-ATR-005"},
		{"permits", "99999999999999999999", "R4C-ATR-005"},
		{"rate", "fast", "R4C-ATR-005"},
		{"rate", "NaN", "R4C-ATR-005"},
		{"rate", "+Inf", "R4C-ATR-005"},
		{"rate", "-inf", "R4C-ATR-005"},
		{"rate", "1e400", "R4C-ATR-005"},
		{"enabled", "yes", "R4C-ATR-006"},
		{"enabled", "1", "R4C-ATR-006"},
		{"enabled", "no", "R4C-ATR-006"},
		{"enabled", "on", "R4C-ATR-006"},
		{"enabled", "", "R4C-ATR-006"},
	} {
		orig := testConfig{Period: time.Second, Permits: 5, Rate: 0.5, Enabled: true}
		c := orig
		err := testAttrs.Set(&c, tc.attr, tc.value)
		require.Error(t, err, "%s = %q", tc.attr, tc.value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, tc.code, ce.Code, "%s = %q", tc.attr, tc.value)
		assert.Equal(t, "rateLimiter."+tc.attr, ce.Key)
		assert.Equal(t, tc.value, ce.Value)
		assert.True(t, strings.HasPrefix(err.Error(), tc.code+": rateLimiter."+tc.attr), "message %q", err.Error())
		assert.NotEmpty(t, ce.Reason)
		assert.Equal(t, orig, c, "a rejected value changes nothing")
	}
}

// SPEC RG-4: an unknown attribute is R4C-CFG-001 and the message lists the valid ones.
func TestAttributes_SetUnknownAttribute(t *testing.T) {
	var c testConfig
	err := testAttrs.Set(&c, "permit", "10")
	require.Error(t, err)
	assert.True(t, errors.Is(err, &policy.ConfigError{Code: policy.CodeUnknownKey}))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "R4C-CFG-001", ce.Code)
	assert.Equal(t, "rateLimiter.permit", ce.Key)
	assert.True(t, strings.HasPrefix(err.Error(), "R4C-CFG-001: rateLimiter.permit"), err.Error())
	for _, name := range testAttrs.Names() {
		assert.Contains(t, err.Error(), name)
	}
	assert.Equal(t, testConfig{}, c)
}

func TestCommon_ID(t *testing.T) {
	assert.Equal(t, "SearchAPI.Search", (&policy.Common{}).ID("SearchAPI.Search"))
	assert.Equal(t, "geocode", (&policy.Common{Name: "geocode"}).ID("SearchAPI.Search"))
	assert.Equal(t, "direct", (&policy.Common{Name: "geocode", InstanceID: "direct"}).ID("SearchAPI.Search"))
}

func TestCommon_ClockOrSystem(t *testing.T) {
	assert.True(t, clock.IsSystem((&policy.Common{}).ClockOrSystem()))
	m := clock.NewManual()
	assert.Same(t, m, (&policy.Common{Clock: m}).ClockOrSystem())
}
