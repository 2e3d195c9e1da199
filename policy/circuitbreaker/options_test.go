package circuitbreaker_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func TestDefaults(t *testing.T) {
	assert.Equal(t, cb.Config{
		FailureRateThreshold:  50,
		SlidingWindowType:     cb.CountBased,
		SlidingWindowSize:     100,
		MinimumCalls:          100,
		WaitInOpen:            60 * time.Second,
		PermittedInHalfOpen:   10,
		SlowCallThreshold:     60 * time.Second,
		SlowCallRateThreshold: 100,
		Enabled:               true,
	}, cb.DefaultConfig())
	require.NoError(t, cb.DefaultConfig().Validate())

	b, err := cb.New()
	require.NoError(t, err)
	assert.Equal(t, "circuitbreaker", b.InstanceID())
	assert.Equal(t, cb.DefaultConfig(), b.Config())
	assert.Equal(t, cb.Closed, b.State())
}

func TestInstanceID(t *testing.T) {
	b, err := cb.New(cb.Name("payments"))
	require.NoError(t, err)
	assert.Equal(t, "payments", b.InstanceID())
	b, err = cb.New(cb.Name("payments"), cb.WithInstanceID("id"))
	require.NoError(t, err)
	assert.Equal(t, "id", b.InstanceID())
}

func TestOptionsSetConfig(t *testing.T) {
	clk := clock.NewManual()
	var s cb.Settings = cb.DefaultSettings()
	s.Apply(cb.FailureRateThreshold(25), cb.SlidingWindowSize(20), cb.SlidingWindowType(cb.TimeBased),
		cb.MinimumCalls(5), cb.WaitInOpen(time.Second), cb.PermittedInHalfOpen(3),
		cb.SlowCallThreshold(2*time.Second), cb.SlowCallRateThreshold(80), cb.IgnoreOn(errIgnored),
		cb.RecordOn(errBoom), cb.Enabled(false), cb.Name("n"), cb.UseConfig("shared"), cb.WithClock(clk),
		cb.WithInstanceID("id"), nil)
	assert.Equal(t, cb.Config{
		FailureRateThreshold: 25, SlidingWindowSize: 20, SlidingWindowType: cb.TimeBased, MinimumCalls: 5,
		WaitInOpen: time.Second, PermittedInHalfOpen: 3, SlowCallThreshold: 2 * time.Second,
		SlowCallRateThreshold: 80, IgnoreOn: []error{errIgnored}, RecordOn: []error{errBoom},
	}, s.Config)
	assert.Equal(t, "n", s.Name)
	assert.Equal(t, "shared", s.ConfigName)
	assert.Equal(t, "id", s.InstanceID)
	assert.Same(t, clk, s.Clock)
}

func TestErrorListsAccumulateWithoutAliasing(t *testing.T) {
	base := cb.DefaultSettings()
	base.Apply(cb.IgnoreOn(errIgnored, nil))
	a, b := base, base
	a.Apply(cb.IgnoreOn(errBoom))
	b.Apply(cb.IgnoreOn(errOther))
	assert.Equal(t, []error{errIgnored}, base.IgnoreOn, "nil errors are skipped")
	assert.Equal(t, []error{errIgnored, errBoom}, a.IgnoreOn)
	assert.Equal(t, []error{errIgnored, errOther}, b.IgnoreOn)

	empty := cb.DefaultSettings()
	empty.Apply(cb.IgnoreOn(), cb.RecordOn(nil))
	assert.True(t, reflect.DeepEqual(cb.DefaultConfig(), empty.Config), "no errors leave the lists nil")
}

func TestConfigComparableForIdenticalOptions(t *testing.T) {
	build := func() cb.Config {
		s := cb.DefaultSettings()
		s.Apply(cb.SlidingWindowSize(7), cb.IgnoreOn(errIgnored), cb.RecordOn(errBoom, errOther))
		return s.Config
	}
	assert.True(t, reflect.DeepEqual(build(), build()))
	other := build()
	other.RecordOn = []error{errBoom}
	assert.False(t, reflect.DeepEqual(build(), other))
}

func TestAttributes(t *testing.T) {
	assert.Equal(t, []string{"failureRateThreshold", "slidingWindowSize", "slidingWindowType", "minimumCalls",
		"waitInOpen", "permittedInHalfOpen", "slowCallThreshold", "slowCallRateThreshold", "enabled"},
		cb.Attributes())
	assert.Equal(t, "circuitBreaker", cb.Segment)
	assert.Equal(t, "circuitBreaker", policy.LayerCircuitBreaker.String())
}

func TestConfigSet(t *testing.T) {
	c := cb.DefaultConfig()
	for attr, v := range map[string]string{
		"failureRateThreshold": "12.5", "slidingWindowSize": " 30 ", "slidingWindowType": "time_based",
		"minimumCalls": "7", "waitInOpen": "1m30s", "permittedInHalfOpen": "4", "slowCallThreshold": "250ms",
		"slowCallRateThreshold": "75", "enabled": "FALSE",
	} {
		require.NoError(t, c.Set(attr, v), attr)
	}
	assert.Equal(t, cb.Config{
		FailureRateThreshold: 12.5, SlidingWindowSize: 30, SlidingWindowType: cb.TimeBased, MinimumCalls: 7,
		WaitInOpen: 90 * time.Second, PermittedInHalfOpen: 4, SlowCallThreshold: 250 * time.Millisecond,
		SlowCallRateThreshold: 75, Enabled: false,
	}, c)
	require.NoError(t, c.Set("slidingWindowType", "Count_Based"))
	assert.Equal(t, cb.CountBased, c.SlidingWindowType)
}

func TestConfigSetSyntaxErrors(t *testing.T) {
	for _, tc := range []struct{ attr, value, code string }{
		{"failureRateThreshold", "half", policy.CodeBadNumber},
		{"failureRateThreshold", "NaN", policy.CodeBadNumber},
		{"slidingWindowSize", "1.5", policy.CodeBadNumber},
		{"slidingWindowType", "SLIDING", policy.CodeOutOfRange},
		{"slidingWindowType", "", policy.CodeOutOfRange},
		{"minimumCalls", "ten", policy.CodeBadNumber},
		{"waitInOpen", "10 parsecs", policy.CodeBadDuration},
		{"waitInOpen", "10", policy.CodeBadDuration},
		{"permittedInHalfOpen", "", policy.CodeBadNumber},
		{"slowCallThreshold", "soon", policy.CodeBadDuration},
		{"slowCallRateThreshold", "1e400", policy.CodeBadNumber},
		{"enabled", "yes", policy.CodeBadBoolean},
		{"failureRate", "50", policy.CodeUnknownKey},
	} {
		t.Run(tc.attr+"="+tc.value, func(t *testing.T) {
			c := cb.DefaultConfig()
			err := c.Set(tc.attr, tc.value)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, "circuitBreaker."+tc.attr, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
			assert.Equal(t, cb.DefaultConfig(), c, "a bad value changes nothing")
		})
	}
}

// Every attribute's range, checked by Validate, from configuration strings and from options.
func TestValidationCodes(t *testing.T) {
	for _, tc := range []struct {
		attr, value, code string
		opt               cb.Option
	}{
		{"failureRateThreshold", "0", policy.CodeOutOfRange, cb.FailureRateThreshold(0)},
		{"failureRateThreshold", "-5", policy.CodeOutOfRange, cb.FailureRateThreshold(-5)},
		{"failureRateThreshold", "100.1", policy.CodeOutOfRange, cb.FailureRateThreshold(100.1)},
		{"slidingWindowSize", "0", policy.CodeOutOfRange, cb.SlidingWindowSize(0)},
		{"slidingWindowSize", "1000001", policy.CodeOutOfRange, cb.SlidingWindowSize(cb.MaxWindowSize + 1)},
		{"slidingWindowType", "", policy.CodeOutOfRange, cb.SlidingWindowType(cb.WindowType(7))},
		{"minimumCalls", "0", policy.CodeOutOfRange, cb.MinimumCalls(0)},
		{"waitInOpen", "-1s", policy.CodeNegativeDuration, cb.WaitInOpen(-time.Second)},
		{"permittedInHalfOpen", "0", policy.CodeOutOfRange, cb.PermittedInHalfOpen(0)},
		{"slowCallThreshold", "-1ms", policy.CodeNegativeDuration, cb.SlowCallThreshold(-time.Millisecond)},
		{"slowCallThreshold", "0", policy.CodeOutOfRange, cb.SlowCallThreshold(0)},
		{"slowCallRateThreshold", "0", policy.CodeOutOfRange, cb.SlowCallRateThreshold(0)},
		{"slowCallRateThreshold", "101", policy.CodeOutOfRange, cb.SlowCallRateThreshold(101)},
	} {
		t.Run(tc.attr+"="+tc.value, func(t *testing.T) {
			check := func(err error) {
				t.Helper()
				var ce *policy.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.code, ce.Code)
				assert.Equal(t, "circuitBreaker."+tc.attr, ce.Key)
				assert.True(t, errors.Is(err, &policy.ConfigError{Code: tc.code}))
			}
			if tc.value != "" {
				c := cb.DefaultConfig()
				require.NoError(t, c.Set(tc.attr, tc.value))
				check(c.Validate())
			}
			b, err := cb.New(tc.opt)
			assert.Nil(t, b)
			check(err)
		})
	}
}

func TestValidBoundaries(t *testing.T) {
	_, err := cb.New(cb.FailureRateThreshold(100), cb.SlowCallRateThreshold(0.001), cb.SlidingWindowSize(1),
		cb.MinimumCalls(1), cb.WaitInOpen(0), cb.PermittedInHalfOpen(1), cb.SlowCallThreshold(1))
	require.NoError(t, err)
	_, err = cb.New(cb.SlidingWindowType(cb.TimeBased), cb.SlidingWindowSize(cb.MaxWindowSize))
	require.NoError(t, err)
}
