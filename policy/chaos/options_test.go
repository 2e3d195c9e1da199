package chaos_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/chaos"
)

// SPEC CH-1: disabled by default, at a rate of 0.001 and no latency; the descriptor says
// so to a registry.
func TestCH1_Defaults(t *testing.T) {
	c, err := chaos.New()
	require.NoError(t, err)
	assert.Equal(t, chaos.Config{Rate: 0.001}, c.Config())
	assert.False(t, c.Config().Enabled, "never on unless configured")
	contracttest.RequireDescriptor(t, chaos.Descriptor, chaos.Layer, "chaos",
		[]string{"enabled", "rate", "latency"}, chaos.Descriptor.Defaults())
	assert.Equal(t, chaos.Config{Rate: 0.001}, chaos.Descriptor.Defaults().Config)
}

// SPEC CH-2: bad values are refused with their codes, by New and by the attribute table.
func TestCH2_Validation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []chaos.Option
		code string
		key  string
	}{
		{"rate above 1", []chaos.Option{chaos.Rate(1.5)}, r4c.OutOfRange, "chaos.rate"},
		{"rate negative", []chaos.Option{chaos.Rate(-0.1)}, r4c.OutOfRange, "chaos.rate"},
		{"rate NaN", []chaos.Option{chaos.Rate(math.NaN())}, r4c.OutOfRange, "chaos.rate"},
		{"latency negative", []chaos.Option{chaos.Latency(-time.Millisecond)}, r4c.NegativeDuration, "chaos.latency"},
		{"error and result", []chaos.Option{chaos.Error(errors.New("x")),
			chaos.Result(func(context.Context) (int, error) { return 1, nil })}, "R4C-CHS-001", "chaos"},
		{"also disabled", []chaos.Option{chaos.Enabled(false), chaos.Rate(2)}, r4c.OutOfRange, "chaos.rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := chaos.New(tc.opts...)
			assert.Nil(t, c)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}
	s := chaos.Descriptor.Defaults()
	contracttest.RequireRefused(t, chaos.Descriptor, &s, []contracttest.BadValue{
		{Attr: "enabled", Value: "yes", Code: r4c.BadBoolean},
		{Attr: "rate", Value: "ten percent", Code: r4c.BadNumber},
		{Attr: "rate", Value: "NaN", Code: r4c.BadNumber},
		{Attr: "latency", Value: "soon", Code: r4c.BadDuration},
	})
	attr, err := chaos.Descriptor.CheckRange(map[string]string{"rate": "1.01"})
	assert.Equal(t, "rate", attr)
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(err))
	attr, err = chaos.Descriptor.CheckRange(map[string]string{"latency": "-1s"})
	assert.Equal(t, "latency", attr)
	assert.Equal(t, r4c.NegativeDuration, r4c.CodeOf(err))
	for _, rate := range []float64{0, 1, 0.5} {
		_, err := chaos.New(chaos.Rate(rate))
		assert.NoError(t, err, "rate %v", rate)
	}
}

// codedError is an error whose Error reads its receiver, as many pointer errors do.
type codedError struct{ code int }

func (e *codedError) Error() string { return "code " + string(rune('0'+e.code)) }

// SPEC CH-2: an Error that is a nil pointer of an error type, given with a Result, is
// refused with R4C-CHS-001 like any other: building does not call its Error method.
func TestCH2_BothWithANilPointerError(t *testing.T) {
	var nilErr *codedError
	var c *chaos.Chaos
	var err error
	require.NotPanics(t, func() {
		c, err = chaos.New(chaos.Error(nilErr), chaos.Result(func(context.Context) (int, error) { return 1, nil }))
	})
	assert.Nil(t, c)
	assert.Equal(t, "R4C-CHS-001", r4c.CodeOf(err))
}

// The instance id is the Name, and a nil Error, Result or Behavior sets none.
func TestIDsAndNilOptions(t *testing.T) {
	c, err := chaos.New(chaos.Name("inventory"), chaos.Error(nil), chaos.Behavior(nil),
		chaos.Result[int](nil), chaos.Enabled(true), chaos.Rate(1))
	require.NoError(t, err)
	assert.Equal(t, "inventory", c.Snapshot().Instance)
	_, err = chaos.NewPolicy[int](c).Decorate(func(context.Context) (int, error) { return 1, nil })(context.Background())
	assert.ErrorIs(t, err, chaos.ErrInjected, "nothing set: the default fault")
}
