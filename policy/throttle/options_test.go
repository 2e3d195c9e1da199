package throttle_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/throttle"
)

// SPEC TH-2: the defaults.
func TestDefaults(t *testing.T) {
	assert.Equal(t, throttle.Config{K: 2, Window: time.Minute, MaxRejection: 0.9}, throttle.DefaultConfig())
	assert.NoError(t, throttle.DefaultConfig().Validate())
	th, err := throttle.New()
	require.NoError(t, err)
	assert.Equal(t, throttle.DefaultConfig(), th.Config())
	assert.Equal(t, throttle.Snapshot{}, th.Snapshot())
	assert.Equal(t, "throttle: the call was rejected locally, the backend refusing too many", throttle.ErrThrottled.Error())
	rej, ok := errors.AsType[policy.Rejection](throttle.ErrThrottled)
	require.True(t, ok)
	_, known := rej.RetryIn()
	assert.False(t, known)
}

// SPEC TH-2: bad options fail New with a *policy.ConfigError and its R4C code, never a panic.
func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  throttle.Option
		key  string
		code string
	}{
		{"K below 1", throttle.K(0.99), "throttle.k", r4c.OutOfRange},
		{"K NaN", throttle.K(math.NaN()), "throttle.k", r4c.OutOfRange},
		{"K infinite", throttle.K(math.Inf(1)), "throttle.k", r4c.OutOfRange},
		{"window 0", throttle.Window(0), "throttle.window", r4c.OutOfRange},
		{"window negative", throttle.Window(-time.Second), "throttle.window", r4c.NegativeDuration},
		{"maxRejection 0", throttle.MaxRejection(0), "throttle.maxRejection", r4c.OutOfRange},
		{"maxRejection above 1", throttle.MaxRejection(1.01), "throttle.maxRejection", r4c.OutOfRange},
		{"maxRejection NaN", throttle.MaxRejection(math.NaN()), "throttle.maxRejection", r4c.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, err := throttle.New(tc.opt)
			require.Nil(t, th)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, err.Error(), tc.code)
		})
	}
	th, err := throttle.New(throttle.K(1), throttle.MaxRejection(1), throttle.Window(time.Nanosecond))
	require.NoError(t, err)
	assert.Equal(t, throttle.Config{K: 1, Window: time.Nanosecond, MaxRejection: 1}, th.Config())
}

// The throttle's error lists are its own: changing the slices given to the options, or
// the ones Config returned, changes neither its classification nor its Config.
func TestErrorListsAreTheThrottlesOwn(t *testing.T) {
	ignore, refused := []error{errLocal}, []error{errRefused}
	f := newFixture(t, throttle.IgnoreOn(ignore...), throttle.RefusedOn(refused...))
	ignore[0], refused[0] = errRefused, errLocal
	c := f.t.Config()
	c.IgnoreOn[0], c.RefusedOn[0] = errRefused, errLocal
	assert.Equal(t, []error{errLocal}, f.t.Config().IgnoreOn)
	assert.Equal(t, []error{errRefused}, f.t.Config().RefusedOn)
	f.calls(1, errLocal, 1)
	f.calls(1, errRefused, 1)
	assert.Equal(t, throttle.Snapshot{Instance: "backend", Requests: 1, Probability: 0.5}, f.t.Snapshot())
}
