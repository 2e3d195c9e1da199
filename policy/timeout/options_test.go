package timeout_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/sysclock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

func TestDefaults(t *testing.T) {
	assert.Equal(t, timeout.Config{}, timeout.DefaultConfig())
	assert.False(t, timeout.DefaultConfig().Disabled, "the defaults are enabled")
	// A timeout without a duration does not validate: the registry always sets one.
	assert.Equal(t, r4c.OutOfRange, r4c.CodeOf(timeout.DefaultConfig().Validate()))
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration
		code string
	}{
		{"zero", 0, r4c.OutOfRange},
		{"negative", -time.Millisecond, r4c.NegativeDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to, err := timeout.New(tc.d)
			require.Nil(t, to)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, "timeout.duration", ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}
	to, err := timeout.New(time.Nanosecond)
	require.NoError(t, err)
	assert.Equal(t, time.Nanosecond, to.Config().Duration)
}

func TestIDsAndCommonOptions(t *testing.T) {
	clk := clock.NewManual()
	var got []policy.Event
	to, err := timeout.New(time.Second)
	require.NoError(t, err)
	assert.Equal(t, "", to.InstanceID())
	assert.True(t, sysclock.Is(to.Clock()))

	to, err = timeout.New(time.Second, timeout.Name("shared"))
	require.NoError(t, err)
	assert.Equal(t, "shared", to.InstanceID())

	to, err = timeout.New(time.Second, timeout.Name("shared"), timeout.Name("Svc.Call"),
		timeout.WithClock(clk), timeout.UseConfig("slow"),
		timeout.OnEvent(func(e policy.Event) { got = append(got, e) }),
		timeout.Duration(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "Svc.Call", to.InstanceID())
	assert.Equal(t, clock.Clock(clk), to.Clock())
	assert.Equal(t, 2*time.Second, to.Config().Duration, "Duration option applies after New's argument")

	var te *timeout.Error
	require.True(t, errors.As(to.Err(), &te))
	assert.Equal(t, 2*time.Second, te.Duration())
	assert.Equal(t, `timeout: call to "Svc.Call" timed out after 2s`, te.Error())
	assert.Empty(t, got)
}
