package circuitbreaker

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

var (
	errOptBoom    = errors.New("boom")
	errOptIgnored = errors.New("ignored")
	errOptOther   = errors.New("other")
)

// applied returns the defaults with opts applied, as New sees them before building.
func applied(opts ...Option) settings {
	s := defaults()
	contract.Apply(&s, opts)
	return s
}

func TestOptionsSetConfig(t *testing.T) {
	clk := clock.NewManual()
	s := applied(FailureRateThreshold(25), SlidingWindowSize(20), SlidingWindowType(TimeBased),
		MinimumCalls(5), WaitInOpen(time.Second), PermittedInHalfOpen(3), MaxWaitInHalfOpen(time.Minute),
		SlowCallThreshold(2*time.Second), SlowCallRateThreshold(80), IgnoreOn(errOptIgnored),
		RecordOn(errOptBoom), Enabled(false), Name("n"), UseConfig("shared"), WithClock(clk), nil)
	assert.Equal(t, Config{
		FailureRateThreshold: 25, SlidingWindowSize: 20, SlidingWindowType: TimeBased, MinimumCalls: 5,
		WaitInOpen: time.Second, PermittedInHalfOpen: 3, MaxWaitInHalfOpen: time.Minute, SlowCallThreshold: 2 * time.Second,
		SlowCallRateThreshold: 80, IgnoreOn: []error{errOptIgnored}, RecordOn: []error{errOptBoom},
		Disabled: true,
	}, s.Config)
	assert.Equal(t, "n", s.Name)
	assert.Equal(t, "shared", s.ConfigName)
	assert.Equal(t, "n", s.ID("circuitbreaker"), "the Name is the id of a breaker built with New")
	assert.Same(t, clk, s.Clock)

	assert.False(t, applied(Enabled(false), Enabled(true)).Disabled, "Enabled(true) enables again")
}

func TestErrorListsAccumulateWithoutAliasing(t *testing.T) {
	base := applied(IgnoreOn(errOptIgnored, nil))
	a, b := base, base
	contract.Apply(&a, []Option{IgnoreOn(errOptBoom)})
	contract.Apply(&b, []Option{IgnoreOn(errOptOther)})
	assert.Equal(t, []error{errOptIgnored}, base.IgnoreOn, "nil errors are skipped")
	assert.Equal(t, []error{errOptIgnored, errOptBoom}, a.IgnoreOn)
	assert.Equal(t, []error{errOptIgnored, errOptOther}, b.IgnoreOn)

	empty := applied(IgnoreOn(), RecordOn(nil))
	assert.True(t, reflect.DeepEqual(defaultConfig(), empty.Config), "no errors leave the lists nil")
}

func TestAttributes(t *testing.T) {
	contracttest.RequireDescriptor(t, descriptor, Layer, "circuitBreaker", []string{"failureRateThreshold",
		"slidingWindowSize", "slidingWindowType", "minimumCalls", "waitInOpen", "permittedInHalfOpen",
		"maxWaitInHalfOpen", "slowCallThreshold", "slowCallRateThreshold", "enabled", "shadow"},
		settings{Config: defaultConfig()})
	assert.Equal(t, "circuitBreaker", string(Layer))
}

func TestConfigSet(t *testing.T) {
	table := descriptor.Table()
	s := defaults()
	for attr, v := range map[string]string{
		"failureRateThreshold": "12.5", "slidingWindowSize": " 30 ", "slidingWindowType": "time_based",
		"minimumCalls": "7", "waitInOpen": "1m30s", "permittedInHalfOpen": "4", "maxWaitInHalfOpen": "2m",
		"slowCallThreshold": "250ms", "slowCallRateThreshold": "75", "enabled": "FALSE",
	} {
		require.NoError(t, table.Set(&s, attr, v), attr)
	}
	assert.Equal(t, Config{
		FailureRateThreshold: 12.5, SlidingWindowSize: 30, SlidingWindowType: TimeBased, MinimumCalls: 7,
		WaitInOpen: 90 * time.Second, PermittedInHalfOpen: 4, MaxWaitInHalfOpen: 2 * time.Minute,
		SlowCallThreshold: 250 * time.Millisecond, SlowCallRateThreshold: 75, Disabled: true,
	}, s.Config)
	require.NoError(t, table.Set(&s, "slidingWindowType", "Count_Based"))
	assert.Equal(t, CountBased, s.SlidingWindowType)
	require.NoError(t, table.Set(&s, "enabled", "true"))
	assert.False(t, s.Disabled)
}

func TestConfigSetSyntaxErrors(t *testing.T) {
	s := defaults()
	contracttest.RequireRefused(t, descriptor, &s, []contracttest.BadValue{
		{Attr: "failureRateThreshold", Value: "half", Code: r4c.BadNumber},
		{Attr: "failureRateThreshold", Value: "NaN", Code: r4c.BadNumber},
		{Attr: "slidingWindowSize", Value: "1.5", Code: r4c.BadNumber},
		{Attr: "slidingWindowType", Value: "SLIDING", Code: r4c.OutOfRange},
		{Attr: "slidingWindowType", Value: "", Code: r4c.OutOfRange},
		{Attr: "minimumCalls", Value: "ten", Code: r4c.BadNumber},
		{Attr: "waitInOpen", Value: "10 parsecs", Code: r4c.BadDuration},
		{Attr: "waitInOpen", Value: "10", Code: r4c.BadDuration},
		{Attr: "permittedInHalfOpen", Value: "", Code: r4c.BadNumber},
		{Attr: "maxWaitInHalfOpen", Value: "forever", Code: r4c.BadDuration},
		{Attr: "slowCallThreshold", Value: "soon", Code: r4c.BadDuration},
		{Attr: "slowCallRateThreshold", Value: "1e400", Code: r4c.OutOfRange},
		{Attr: "enabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "failureRate", Value: "50", Code: r4c.UnknownKey},
	})
}

// Every attribute's range, checked by Validate, from configuration strings and from options.
func TestValidationCodes(t *testing.T) {
	for _, tc := range []struct {
		attr, value, code string
		opt               Option
	}{
		{"failureRateThreshold", "0", r4c.OutOfRange, FailureRateThreshold(0)},
		{"failureRateThreshold", "-5", r4c.OutOfRange, FailureRateThreshold(-5)},
		{"failureRateThreshold", "100.1", r4c.OutOfRange, FailureRateThreshold(100.1)},
		{"slidingWindowSize", "0", r4c.OutOfRange, SlidingWindowSize(0)},
		{"slidingWindowSize", "1000001", r4c.OutOfRange, SlidingWindowSize(MaxWindowSize + 1)},
		{"slidingWindowType", "", r4c.OutOfRange, SlidingWindowType("SESSION_BASED")},
		{"minimumCalls", "0", r4c.OutOfRange, MinimumCalls(0)},
		{"waitInOpen", "-1s", r4c.NegativeDuration, WaitInOpen(-time.Second)},
		{"permittedInHalfOpen", "0", r4c.OutOfRange, PermittedInHalfOpen(0)},
		// A bound on half-open that 0 would make "for ever" in Resilience4j: here it must
		// be positive, so that no configuration leaves the breaker half-open for good.
		{"maxWaitInHalfOpen", "-1s", r4c.NegativeDuration, MaxWaitInHalfOpen(-time.Second)},
		{"maxWaitInHalfOpen", "0s", r4c.OutOfRange, MaxWaitInHalfOpen(0)},
		{"slowCallThreshold", "-1ms", r4c.NegativeDuration, SlowCallThreshold(-time.Millisecond)},
		{"slowCallRateThreshold", "0", r4c.OutOfRange, SlowCallRateThreshold(0)},
		{"slowCallRateThreshold", "101", r4c.OutOfRange, SlowCallRateThreshold(101)},
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
				s := defaults()
				require.NoError(t, descriptor.Table().Set(&s, tc.attr, tc.value))
				check(s.Config.validate())
				_, err := build(s)
				check(err)
			}
			b, err := New(tc.opt)
			assert.Nil(t, b)
			check(err)
		})
	}
}

// CB-SLOW-OFF: slowCallThreshold 0 ("0" or "0s" in configuration, SlowCallThreshold(0) in
// code) is valid and turns slow-call detection off; it is the default.
func TestCB1_ZeroSlowCallThresholdIsValidAndOff(t *testing.T) {
	assert.Zero(t, defaultConfig().SlowCallThreshold)
	for _, v := range []string{"0", "0s", " 0ms "} {
		s := defaults()
		s.SlowCallThreshold = time.Second
		require.NoError(t, descriptor.Table().Set(&s, "slowCallThreshold", v), v)
		assert.Zero(t, s.SlowCallThreshold, v)
		require.NoError(t, s.Config.validate(), v)
		b, err := build(s)
		require.NoError(t, err, v)
		assert.False(t, b.cur.Load().timed, "no threshold, no recorder: calls are not measured")
	}
	b, err := New(SlowCallThreshold(time.Second), SlowCallThreshold(0))
	require.NoError(t, err)
	assert.Zero(t, b.Config().SlowCallThreshold)
}
