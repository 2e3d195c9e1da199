package contract_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

type testSettings struct {
	Period  time.Duration
	Permits int
	Rate    float64
	Enabled bool
}

var testAttrs = contract.Attrs[testSettings]{
	Segment: "rateLimiter",
	List: []contract.Attr[testSettings]{
		contract.DurationAttr("period", func(s *testSettings) *time.Duration { return &s.Period }),
		contract.IntAttr("permits", func(s *testSettings) *int { return &s.Permits }),
		contract.FloatAttr("rate", func(s *testSettings) *float64 { return &s.Rate }),
		contract.BoolAttr("enabled", func(s *testSettings) *bool { return &s.Enabled }),
	},
}

func TestAttrs_Names(t *testing.T) {
	assert.Equal(t, []string{"period", "permits", "rate", "enabled"}, testAttrs.Names())
	assert.Empty(t, contract.Attrs[testSettings]{Segment: "x"}.Names())
}

// SPEC RG-4: attributes set from strings, one helper kind per field type.
func TestAttrs_SetGoodValues(t *testing.T) {
	var s testSettings
	for _, kv := range [][2]string{
		{"period", " 1.5s "},
		{"permits", " 10 "},
		{"rate", "0.25"},
		{"enabled", " TRUE "},
	} {
		require.NoError(t, testAttrs.Set(&s, kv[0], kv[1]), "%s = %q", kv[0], kv[1])
	}
	assert.Equal(t, testSettings{Period: 1500 * time.Millisecond, Permits: 10, Rate: 0.25, Enabled: true}, s)

	require.NoError(t, testAttrs.Set(&s, "enabled", "False"))
	require.NoError(t, testAttrs.Set(&s, "permits", "-3")) // ranges are validated later
	require.NoError(t, testAttrs.Set(&s, "period", "0"))
	require.NoError(t, testAttrs.Set(&s, "rate", "1e3"))
	assert.Equal(t, testSettings{Period: 0, Permits: -3, Rate: 1000, Enabled: false}, s)
}

// SPEC error codes: a bad value is rejected with its kind's code, Key "<segment>.<attr>",
// and the field is left as it was.
func TestAttrs_SetBadValues(t *testing.T) {
	for _, tc := range []struct {
		attr, value, code string
	}{
		{"period", "10 parsecs", "R4C-ATR-001"},
		{"period", "1", "R4C-ATR-001"},
		{"period", "", "R4C-ATR-001"},
		{"permits", "ten", "R4C-ATR-005"},
		{"permits", "1.5", "R4C-ATR-005"},
		{"permits", "", "R4C-ATR-005"},
		{"permits", "99999999999999999999", "R4C-ATR-007"},
		{"rate", "fast", "R4C-ATR-005"},
		{"rate", "NaN", "R4C-ATR-005"},
		{"rate", "+Inf", "R4C-ATR-005"},
		{"rate", "-inf", "R4C-ATR-005"},
		{"rate", "1e400", "R4C-ATR-007"},
		{"rate", "1_000", "R4C-ATR-005"},
		{"rate", "0x1p-2", "R4C-ATR-005"},
		{"permits", "1_000", "R4C-ATR-005"},
		{"enabled", "yes", "R4C-ATR-006"},
		{"enabled", "1", "R4C-ATR-006"},
		{"enabled", "no", "R4C-ATR-006"},
		{"enabled", "on", "R4C-ATR-006"},
		{"enabled", "", "R4C-ATR-006"},
	} {
		orig := testSettings{Period: time.Second, Permits: 5, Rate: 0.5, Enabled: true}
		s := orig
		err := testAttrs.Set(&s, tc.attr, tc.value)
		require.Error(t, err, "%s = %q", tc.attr, tc.value)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, tc.code, ce.Code, "%s = %q", tc.attr, tc.value)
		assert.Equal(t, "rateLimiter."+tc.attr, ce.Key)
		assert.Equal(t, tc.value, ce.Value)
		assert.True(t, strings.HasPrefix(err.Error(), tc.code+": rateLimiter."+tc.attr), "message %q", err.Error())
		assert.NotEmpty(t, ce.Reason)
		assert.Equal(t, orig, s, "a rejected value changes nothing")
	}
}

// SPEC RG-4: an unknown attribute is R4C-CFG-001 and the message lists the valid ones.
func TestAttrs_SetUnknownAttribute(t *testing.T) {
	var s testSettings
	err := testAttrs.Set(&s, "permit", "10")
	require.Error(t, err)
	assert.True(t, errors.Is(err, &policy.ConfigError{Code: r4c.UnknownKey}))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "R4C-CFG-001", ce.Code)
	assert.Equal(t, "rateLimiter.permit", ce.Key)
	assert.True(t, strings.HasPrefix(err.Error(), "R4C-CFG-001: rateLimiter.permit"), err.Error())
	for _, name := range testAttrs.Names() {
		assert.Contains(t, err.Error(), name)
	}
	assert.Equal(t, testSettings{}, s)
}

// An error of a custom attribute that is not a *policy.ConfigError is returned as is.
func TestAttrs_SetCustomError(t *testing.T) {
	errCustom := errors.New("custom")
	attrs := contract.Attrs[testSettings]{Segment: "x", List: []contract.Attr[testSettings]{
		{Name: "odd", Set: func(*testSettings, string) error { return errCustom }},
	}}
	var s testSettings
	assert.Same(t, errCustom, attrs.Set(&s, "odd", "v"))
}

type disabledSettings struct{ Disabled bool }

// EnabledAttr is the attribute "enabled" stored inverted, so that the zero settings are
// enabled.
func TestEnabledAttr_InvertsIntoDisabled(t *testing.T) {
	attrs := contract.Attrs[disabledSettings]{Segment: "retry", List: []contract.Attr[disabledSettings]{
		contract.EnabledAttr(func(s *disabledSettings) *bool { return &s.Disabled }),
	}}
	assert.Equal(t, []string{"enabled"}, attrs.Names())

	var s disabledSettings
	require.NoError(t, attrs.Set(&s, "enabled", "false"))
	assert.True(t, s.Disabled, "enabled=false sets Disabled")
	require.NoError(t, attrs.Set(&s, "enabled", " TRUE "))
	assert.False(t, s.Disabled, "enabled=true clears Disabled")
	require.NoError(t, attrs.Set(&s, "enabled", "False"))
	assert.True(t, s.Disabled)

	for _, bad := range []string{"yes", "0", "", "off"} {
		before := s
		err := attrs.Set(&s, "enabled", bad)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, bad)
		assert.Equal(t, r4c.BadBoolean, ce.Code)
		assert.Equal(t, "retry.enabled", ce.Key)
		assert.Equal(t, bad, ce.Value)
		assert.Equal(t, before, s, "a rejected value changes nothing")
	}
}

// A number of valid syntax beyond what the attribute holds says so, with R4C-ATR-007,
// rather than calling it bad syntax.
func TestNumbersOutOfRangeSaySo(t *testing.T) {
	type s struct {
		n int
		f float64
	}
	ia := contract.IntAttr("n", func(x *s) *int { return &x.n })
	fa := contract.FloatAttr("f", func(x *s) *float64 { return &x.f })
	var x s
	for _, v := range []string{"99999999999999999999", "-99999999999999999999"} {
		err := ia.Set(&x, v)
		require.Equal(t, r4c.OutOfRange, r4c.CodeOf(err), v)
		require.Contains(t, err.Error(), "out of range", v)
	}
	for _, v := range []string{"1e301", "-1e400"} {
		err := fa.Set(&x, v)
		require.Equal(t, r4c.OutOfRange, r4c.CodeOf(err), v)
		require.Contains(t, err.Error(), "out of range", v)
	}
	for _, v := range []string{"abc", "NaN", "Inf", "-inf", "1.5"} {
		err := ia.Set(&x, v)
		require.Equal(t, r4c.BadNumber, r4c.CodeOf(err), v)
	}
	for _, v := range []string{"abc", "NaN", "+Inf"} {
		require.Equal(t, r4c.BadNumber, r4c.CodeOf(fa.Set(&x, v)), v)
	}
}
